"""Reading a file of imported judgments: its layout detected (or given), its rows parsed by
that layout's module, one language pair kept; our own table written; system name maps read."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from annotation.campaigns.uploads import (
    UploadError,
    UploadFile,
    UploadProblem,
    decode_text,
    split_lines,
)
from annotation.judgment_import.appraise import FORMAT_APPRAISE, _parse_appraise
from annotation.judgment_import.evalsite import (
    EVALSITE_OPTIONAL,
    EVALSITE_REQUIRED,
    FORMAT_EVALSITE,
    _parse_evalsite,
)
from annotation.judgment_import.rows import (
    APPRAISE_TYPES,
    FORMAT_AUTO,
    ParsedJudgments,
    Problems,
    _csv_rows,
    _first_filled_line,
)
from annotation.judgment_import.wmt import FORMAT_WMT, _parse_wmt

# Google's MQM TSV, read by annotation/judgment_import/mqm_tsv.py (registered in PARSERS).
FORMAT_MQM = "mqm"

# Appraise's ESA/MQM export, read by annotation/judgment_import/appraise_spans.py.
FORMAT_APPRAISE_SPANS = "appraise-spans"

FORMATS = (FORMAT_EVALSITE, FORMAT_APPRAISE, FORMAT_WMT, FORMAT_MQM, FORMAT_APPRAISE_SPANS)

# Layouts read by modules of their own: format → (does a first line look like it, parser).
PARSERS: dict[str, tuple[Any, Any]] = {}


def judgments_parse(
    upload: UploadFile,
    *,
    file_format: str = FORMAT_AUTO,
    language_pair: str = "",
    max_bytes: int,
) -> ParsedJudgments:
    """Read a judgments file in one of :data:`FORMATS` (``auto`` detects it).

    ``language_pair`` (e.g. ``de-en`` as the file writes it) keeps the rows of one pair from an
    Appraise or WMT file that holds several; a file with several pairs and no choice is an error.

    Raises:
        UploadError: naming the file and line of every problem (at most 20).
    """
    text = decode_text(upload, max_bytes=max_bytes)
    lines = split_lines(text)
    # Blank lines before the header (or the first row) are skipped, by the detection and the
    # parsers alike; messages keep the file's line numbers.
    first = _first_filled_line(lines)
    if first is None:
        raise UploadError([UploadProblem(upload.name, None, "the file is empty")])
    chosen = (
        detect_judgment_format(upload.name, lines) if file_format == FORMAT_AUTO else file_format
    )
    if chosen == FORMAT_EVALSITE:
        parsed = _parse_evalsite(upload.name, lines, first)
    elif chosen == FORMAT_APPRAISE:
        parsed = _parse_appraise(upload.name, lines, first)
    elif chosen == FORMAT_WMT:
        parsed = _parse_wmt(upload.name, lines, first)
    elif chosen in PARSERS:
        parsed = PARSERS[chosen][1](upload.name, lines, first)
    else:
        raise UploadError(
            [
                UploadProblem(
                    upload.name, None, f"unknown format {chosen!r}; use {', '.join(FORMATS)}"
                )
            ]
        )
    return _one_language_pair(parsed, language_pair)


def detect_judgment_format(name: str, lines: list[str]) -> str:
    """``evalsite`` (a header with annotator, system, segment, type, score), ``wmt`` (a header
    with WorkerId and sys_id) or ``appraise`` (no header, nine or eleven comma-separated fields
    with an Appraise item type in the fourth). Blank lines before the first are skipped."""
    index = _first_filled_line(lines)
    if index is None:
        raise UploadError([UploadProblem(name, None, "the file is empty")])
    first = lines[index]
    fields = {f.strip().strip('"') for f in re.split(r"[\t,]", first)}
    lowered = {f.lower() for f in fields}
    if {"workerid", "sys_id"} <= lowered:
        return FORMAT_WMT
    for key, (looks_like, _parser) in PARSERS.items():
        if looks_like(first):
            return key
    if set(EVALSITE_REQUIRED) <= lowered:
        return FORMAT_EVALSITE
    tokens = first.split()
    if "SYS" in tokens and "SID" in tokens:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    index + 1,
                    "this looks like WMT's segment scores (ad-seg-scores: one mean per system and "
                    "segment, no annotators), which cannot be re-analysed; import the judgments "
                    "(ad-good-raw.csv or ad-latest.csv) instead",
                )
            ]
        )
    _, appraise = next(_csv_rows(name, lines, index))
    if len(appraise) in (9, 11) and appraise[3].strip() in APPRAISE_TYPES:
        return FORMAT_APPRAISE
    raise UploadError(
        [
            UploadProblem(
                name,
                index + 1,
                "unknown judgments format: expected a header with annotator, system, segment, "
                "type and score (EvalSite), a WMT header (HITId, WorkerId, …, sys_id, type, sid, "
                "score) or Appraise's CSV export (username, system, segment id, item type, …)",
            )
        ]
    )


def _one_language_pair(parsed: ParsedJudgments, language_pair: str) -> ParsedJudgments:
    pairs = Counter(r.language_pair for r in parsed.rows if r.language_pair)
    if language_pair:
        wanted = language_pair.strip()
        if wanted not in pairs:
            found = ", ".join(sorted(pairs)) or "none"
            raise UploadError(
                [
                    UploadProblem(
                        parsed.file,
                        None,
                        f"no row is for the language pair {wanted}; the file has: {found}",
                    )
                ]
            )
        parsed.rows = [r for r in parsed.rows if r.language_pair == wanted]
    elif len(pairs) > 1:
        listed = ", ".join(f"{p} ({n} rows)" for p, n in sorted(pairs.items()))
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    f"the file holds several language pairs ({listed}); choose one",
                )
            ]
        )
    if not parsed.rows:
        raise UploadError([UploadProblem(parsed.file, None, "the file holds no judgments")])
    return parsed


def judgment_file_text(rows: Sequence[dict[str, Any]], *, delimiter: str = "\t") -> bytes:
    """Our own import format from dicts (for tests, the API docs and round trips)."""
    columns = [c for c in EVALSITE_REQUIRED + EVALSITE_OPTIONAL if any(c in r for r in rows)]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return out.getvalue().encode()


def system_map_parse(text: str, *, file: str = "system name map") -> dict[str, str]:
    """A system name map: one ``name in the file = name in the campaign`` per line (a tab
    instead of ``=`` also separates them); blank lines and lines starting with ``#`` are
    skipped. Each malformed or repeated line is refused by its number."""
    mapping: dict[str, str] = {}
    problems = Problems(file)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        separator = "=" if "=" in line else "\t" if "\t" in line else None
        if separator is None:
            problems.add(number, "expected 'name in the file = name in the campaign'")
            continue
        name, _, target = (part.strip() for part in line.partition(separator))
        if not name or not target:
            problems.add(number, "expected 'name in the file = name in the campaign'")
        elif name in mapping and mapping[name] != target:
            problems.add(number, f"{name!r} is mapped twice")
        else:
            mapping[name] = target
    problems.raise_if_any()
    return mapping
