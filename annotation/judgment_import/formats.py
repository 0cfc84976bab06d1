"""The layouts of imported judgments (EvalSite's table, Appraise's CSV, WMT's DA files) read into
one list of rows, with every problem naming its file and line; no database access."""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from annotation.campaigns.uploads import (
    MAX_PROBLEMS,
    UploadError,
    UploadFile,
    UploadProblem,
    decode_text,
    split_lines,
)
from annotation.models import (
    ItemKind,
)

FORMAT_AUTO = "auto"

FORMAT_EVALSITE = "evalsite"

FORMAT_APPRAISE = "appraise"

FORMAT_WMT = "wmt"

# Google's MQM TSV, read by annotation/judgment_import/mqm_tsv.py (registered in PARSERS).
FORMAT_MQM = "mqm"

# Appraise's ESA/MQM export, read by annotation/judgment_import/appraise_spans.py.
FORMAT_APPRAISE_SPANS = "appraise-spans"

FORMATS = (FORMAT_EVALSITE, FORMAT_APPRAISE, FORMAT_WMT, FORMAT_MQM, FORMAT_APPRAISE_SPANS)

# Layouts read by modules of their own: format → (does a first line look like it, parser).
PARSERS: dict[str, tuple[Any, Any]] = {}

SYSTEM = "SYSTEM"

REPEAT = "REPEAT"

REF = "REF"

BAD_REF = "BAD_REF"

TYPES = (SYSTEM, REPEAT, REF, BAD_REF)

KIND_OF_TYPE = {
    SYSTEM: ItemKind.REAL,
    REPEAT: ItemKind.REPEAT,
    REF: ItemKind.REFERENCE,
    BAD_REF: ItemKind.BAD_REFERENCE,
}

# Appraise's item types (EvalData/models/direct_assessment.py): TGT a system output, CHK its
# repeat, BAD a bad reference, REF a reference shown as an output.
APPRAISE_TYPES = {"TGT": SYSTEM, "CHK": REPEAT, "BAD": BAD_REF, "REF": REF}

EVALSITE_REQUIRED = ("annotator", "system", "segment", "type", "score")

EVALSITE_OPTIONAL = ("hit", "item", "seconds", "criterion", "run", "source", "output")

# Graham's Direct-Assessment scripts (proc-hits/hits2r.pl) write this header; R's read.table
# and later releases keep the names, some with and some without the "Input." prefix.
WMT_COLUMNS = {
    "hit": ("HITId",),
    "annotator": ("WorkerId",),
    "source_language": ("Input.src", "src"),
    "target_language": ("Input.trg", "trg"),
    "system": ("sys_id",),
    "type": ("type",),
    "segment": ("sid",),
    "score": ("score",),
    "time": ("time",),
}

# Appraise's start and end times as Unix seconds: a day inside what datetime holds, so that
# every time zone can still show them.
EARLIEST_TIME = datetime(1, 1, 2, tzinfo=UTC)

LATEST_TIME = datetime(9999, 12, 30, tzinfo=UTC)

# A segment line number with more digits is unknown: no need to ask int(), which refuses
# more than 4,300 digits.
MAX_LINE_NUMBER_DIGITS = 18

_EARLIEST_SECONDS, _LATEST_SECONDS = EARLIEST_TIME.timestamp(), LATEST_TIME.timestamp()


@dataclass(frozen=True)
class ImportRow:
    """One judgment of one output on one criterion, as the file gives it."""

    line: int
    annotator: str
    system: str
    segment: str
    type: str  # one of TYPES
    score: float
    run: str = ""
    hit: str = ""
    item: str = ""
    criterion: str = ""
    seconds: float | None = None
    started: float | None = None  # Unix seconds
    submitted: float | None = None
    language_pair: str = ""
    # The texts the row says were shown, where the file carries them (checked against the
    # campaign's: a mismatch names the line).
    source_text: str = ""
    output_text: str = ""
    # An error-span kind's spans of the output, (start, end, severity, category) in code points
    # of ``output_text``; None where the file has none.
    spans: tuple[tuple[int, int, str, str], ...] | None = None
    # Spans in the offsets of a file without texts (Appraise's), made ``spans`` against the
    # campaign's text of the output (annotation/judgment_import/appraise_spans.py).
    text_spans: tuple[tuple[Any, ...], ...] | None = None
    # A whole-document row (Appraise's): the document's id; its score is the document's.
    document: str = ""


@dataclass
class ParsedJudgments:
    """What a file holds, before it is matched with a campaign."""

    file: str
    file_format: str
    rows: list[ImportRow]
    has_items: bool
    # WMT gives the HIT's working time only: it is shared out over the HIT's screens.
    hit_seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    # Whole-document rows: imported as document-level scores (judgment_import/documents.py).
    documents: list[ImportRow] = field(default_factory=list)


class Problems:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[UploadProblem] = []

    def add(self, line: int | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(UploadProblem(self.file, line, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise UploadError(self.problems)


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


def _first_filled_line(lines: list[str]) -> int | None:
    """The index of the first line that is not blank; None when every line is."""
    return next((i for i, line in enumerate(lines) if line.strip()), None)


def _csv_rows(
    name: str, lines: list[str], start: int, delimiter: str = ","
) -> Iterator[tuple[int, list[str]]]:
    """The rows of ``lines[start:]``, each with the file's number of its first line (a quoted
    field may go on over several lines).

    Raises:
        UploadError: naming the line that the csv module refuses (a field over its limit of
            131,072 characters).
    """
    if delimiter == "\t":
        reader = csv.reader(islice(lines, start, None), delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(islice(lines, start, None), delimiter=delimiter)
    read = start  # lines consumed so far
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise UploadError(
                [UploadProblem(name, start + reader.line_num, f"the line cannot be read: {exc}")]
            ) from exc
        yield read + 1, values
        read = start + reader.line_num


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parse_evalsite(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    delimiter = "\t" if "\t" in lines[first] else ","
    table = _csv_rows(name, lines, first, delimiter)
    header_line, header_values = next(table)
    header = [h.strip().lower() for h in header_values]
    missing = [c for c in EVALSITE_REQUIRED if c not in header]
    if missing:
        raise UploadError(
            [
                UploadProblem(
                    name, header_line, f"the header lacks the column(s) {', '.join(missing)}"
                )
            ]
        )
    unknown = [h for h in header if h not in EVALSITE_REQUIRED + EVALSITE_OPTIONAL]
    if unknown:
        problems.add(
            header_line,
            f"unknown column(s) {', '.join(unknown)}; the columns are "
            f"{', '.join(EVALSITE_REQUIRED + EVALSITE_OPTIONAL)}",
        )
    duplicated = [h for h, n in Counter(header).items() if n > 1]
    if duplicated:
        problems.add(header_line, f"the column(s) {', '.join(duplicated)} appear twice")
    problems.raise_if_any()
    column = {h: i for i, h in enumerate(header)}
    rows: list[ImportRow] = []
    for number, values in table:
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            problems.add(number, f"{len(values)} fields, the header has {len(header)}")
            continue

        def get(key: str, values: list[str] = values) -> str:
            return values[column[key]].strip() if key in column else ""

        row = _row(problems, number, get, get("type").upper(), TYPES)
        if row is not None:
            seconds_text = get("seconds")
            seconds = None
            if seconds_text:
                seconds = _number(seconds_text)
                if seconds is None or seconds < 0:
                    problems.add(number, f"seconds {seconds_text!r} is not a non-negative number")
                    continue
            rows.append(
                ImportRow(
                    **row,
                    run=get("run"),
                    hit=get("hit"),
                    item=get("item"),
                    criterion=get("criterion"),
                    seconds=seconds,
                    source_text=get("source"),
                    output_text=get("output"),
                )
            )
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_EVALSITE, rows, has_items="item" in column)


def _row(
    problems: Problems, number: int, get: Any, type_name: str, known: Sequence[str]
) -> dict[str, Any] | None:
    """The fields every layout has, checked; None (with a problem added) when one is bad."""
    annotator, system, segment, score_text = (
        get("annotator"),
        get("system"),
        get("segment"),
        get("score"),
    )
    if not annotator:
        problems.add(number, "empty annotator")
        return None
    if not segment:
        problems.add(number, "empty segment")
        return None
    if type_name not in known:
        problems.add(number, f"unknown item type {type_name!r}; use {', '.join(known)}")
        return None
    if not system and type_name != REF:
        problems.add(number, "empty system")
        return None
    score = _number(score_text)
    if score is None:
        problems.add(number, f"score {score_text!r} is not a number")
        return None
    return {
        "line": number,
        "annotator": annotator,
        "system": system,
        "segment": segment,
        "type": APPRAISE_TYPES.get(type_name, type_name),
        "score": score,
    }


def _parse_appraise(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    rows: list[ImportRow] = []
    for number, values in _csv_rows(name, lines, first):
        if not any(v.strip() for v in values):
            continue
        if len(values) not in (9, 11):
            problems.add(
                number,
                f"{len(values)} fields; Appraise's export has 9 (username, system, segment, "
                "type, source and target language, score, start, end) or 11 (with batch "
                "number and item id)",
            )
            continue
        fields = {
            "annotator": values[0],
            "system": values[1],
            "segment": values[2],
            "score": values[6],
        }

        def get(key: str, fields: dict[str, str] = fields) -> str:
            return fields[key].strip()

        row = _row(problems, number, get, values[3].strip(), tuple(APPRAISE_TYPES))
        if row is None:
            continue
        start, end = _number(values[7]), _number(values[8])
        if start is None or end is None or end < start:
            problems.add(
                number, f"start and end times {values[7]!r}, {values[8]!r} are not Unix seconds"
            )
            continue
        # The times become the judgment's date-times: one outside datetime's years is refused
        # here, with its field, rather than failing the store.
        out_of_range = next(
            (
                f"{label} time (field {index + 1}) {values[index]!r}"
                for label, index, seconds in (("start", 7, start), ("end", 8, end))
                if not _EARLIEST_SECONDS <= seconds <= _LATEST_SECONDS
            ),
            None,
        )
        if out_of_range:
            problems.add(
                number,
                f"{out_of_range} is out of range: Unix seconds from "
                f"{EARLIEST_TIME.date().isoformat()} to {LATEST_TIME.date().isoformat()}",
            )
            continue
        rows.append(
            ImportRow(
                **row,
                hit=values[9].strip() if len(values) == 11 else "",
                seconds=end - start,
                started=start,
                submitted=end,
                language_pair=f"{values[4].strip()}-{values[5].strip()}",
            )
        )
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_APPRAISE, rows, has_items=False)


def _parse_wmt(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    table = (
        _csv_rows(name, lines, first, "\t")
        if "\t" in lines[first]
        else (  # R's write.table with spaces
            (number, line.split())
            for number, line in enumerate(islice(lines, first, None), start=first + 1)
        )
    )
    header_line, header_values = next(table)
    header = [h.strip().strip('"') for h in header_values]
    column: dict[str, int] = {}
    for key, names in WMT_COLUMNS.items():
        for candidate in names:
            if candidate in header:
                column[key] = header.index(candidate)
                break
    missing = [
        WMT_COLUMNS[k][0]
        for k in ("annotator", "system", "type", "segment", "score")
        if k not in column
    ]
    if missing:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    header_line,
                    f"the WMT header lacks the column(s) {', '.join(missing)}",
                )
            ]
        )
    rows: list[ImportRow] = []
    hit_seconds: dict[tuple[str, str], float] = {}
    for number, values in table:
        if not any(v.strip() for v in values):
            continue
        if len(values) < len(header):
            problems.add(number, f"{len(values)} fields, the header has {len(header)}")
            continue

        def get(key: str, values: list[str] = values) -> str:
            return values[column[key]].strip().strip('"') if key in column else ""

        row = _row(problems, number, get, get("type").upper(), TYPES)
        if row is None:
            continue
        if not is_line_number(get("segment")):
            problems.add(number, f"sid {get('segment')!r} is not a line number")
            continue
        hit = get("hit")
        time_text = get("time")
        if time_text:
            seconds = _number(time_text)
            if seconds is None or seconds < 0:
                problems.add(number, f"time {time_text!r} is not a number of seconds")
                continue
            hit_seconds[(row["annotator"], hit)] = seconds
        pair = (
            f"{get('source_language')}-{get('target_language')}"
            if "source_language" in column
            else ""
        )
        rows.append(ImportRow(**row, hit=hit, language_pair=pair))
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_WMT, rows, has_items=False, hit_seconds=hit_seconds)


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


def is_line_number(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²" and other digits that int() refuses."""
    return text.isascii() and text.isdigit()


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
