"""Reading a file of imported judgments: its layout detected (or given) and its rows parsed
by that layout's module, one language pair kept; our own table written; system name maps read.

:data:`JUDGMENT_FORMATS` is the one list of layouts (see annotation/judgment_import/layout.py)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import (
    UploadError,
    UploadFile,
    UploadProblem,
    decode_text,
    split_lines,
)
from annotation.judgment_import import appraise, appraise_spans, evalsite, mqm_tsv, wmt
from annotation.judgment_import.evalsite import EVALSITE_OPTIONAL, EVALSITE_REQUIRED
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import (
    FORMAT_AUTO,
    ParsedJudgments,
    Problems,
    _first_filled_line,
)
from annotation.judgment_import.standardised import scores_resolved
from annotation.models import Campaign

# Every layout, in the order the page lists them and detection asks them.
JUDGMENT_FORMATS: tuple[JudgmentFormat, ...] = (
    evalsite.FORMAT,
    appraise.FORMAT,
    wmt.FORMAT,
    mqm_tsv.FORMAT,
    appraise_spans.FORMAT,
)

FORMATS = tuple(layout.key for layout in JUDGMENT_FORMATS)

EMPTY = "the file is empty"

UTF8_BOM = b"\xef\xbb\xbf"


def judgment_format_choices() -> list[tuple[str, Any]]:
    """(key, label) of ``auto`` and every layout, for the import page."""
    return [(FORMAT_AUTO, _("Detect")), *((f.key, f.label) for f in JUDGMENT_FORMATS)]


def judgment_format(key: str) -> JudgmentFormat | None:
    """The layout called ``key``; None for an unknown one."""
    return next((layout for layout in JUDGMENT_FORMATS if layout.key == key), None)


def judgments_parse(
    upload: UploadFile,
    *,
    file_format: str = FORMAT_AUTO,
    language_pair: str = "",
    max_bytes: int,
) -> ParsedJudgments:
    """Read a judgments file in one of :data:`JUDGMENT_FORMATS` (``auto`` detects it).

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
        raise UploadError([UploadProblem(upload.name, None, EMPTY)])
    chosen = (
        detect_judgment_format(upload.name, lines) if file_format == FORMAT_AUTO else file_format
    )
    layout = judgment_format(chosen)
    if layout is None:
        known = ", ".join(f.key for f in JUDGMENT_FORMATS)
        raise UploadError(
            [UploadProblem(upload.name, None, f"unknown format {chosen!r}; use {known}")]
        )
    parsed = layout.parse(upload.name, lines, first)
    if not parsed.rows and not parsed.documents:
        message = f"{EMPTY}: no row follows line {first + 1}"
        raise UploadError([UploadProblem(upload.name, None, message)])
    return _one_language_pair(parsed, language_pair)


def judgment_file_refuse_empty(upload: UploadFile) -> None:
    """Refuse at once, naming it, a file without a filled line (no bytes, blank lines or a
    byte-order mark only); a file with a header and no rows is refused when it is read."""
    if not upload.content.removeprefix(UTF8_BOM).strip():
        raise UploadError([UploadProblem(upload.name, None, EMPTY)])


def detect_judgment_format(name: str, lines: list[str]) -> str:
    """The key of the first layout whose ``looks_like`` takes the file (blank lines before its
    first line skipped)."""
    index = _first_filled_line(lines)
    if index is None:
        raise UploadError([UploadProblem(name, None, EMPTY)])
    for layout in JUDGMENT_FORMATS:
        if layout.looks_like(name, lines, index):
            return layout.key
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


def options_for(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """The options and rows as the file's layout has them imported (unchanged for a layout
    that holds any kind's judgments), with the scores raw or standardised as the import
    applies them (:func:`~annotation.judgment_import.standardised.scores_resolved`)."""
    layout = judgment_format(parsed.file_format)
    options, parsed = layout.options(parsed, options) if layout is not None else (options, parsed)
    return scores_resolved(parsed, options), parsed


def segments_placed(
    campaign: Campaign, parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ParsedJudgments, dict[str, Any] | None]:
    """The rows with their segment ids read as the layout numbers them against the campaign's
    documents, and the checks' report (None for a layout whose ids need no reading)."""
    layout = judgment_format(parsed.file_format)
    if layout is None or layout.segments is None:
        return parsed, None
    return layout.segments(campaign=campaign, parsed=parsed, options=options)


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
