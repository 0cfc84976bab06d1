"""What every layout of imported judgments reads into: the rows, the parsed file and its
problems, and the helpers the layouts share (CSV rows with their line numbers, numbers, the
fields every layout has); no database access."""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from annotation.campaigns.uploads import MAX_PROBLEMS, UploadError, UploadProblem
from annotation.models import ItemKind

FORMAT_AUTO = "auto"

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

# Appraise's start and end times as Unix seconds: a day inside what datetime holds, so that
# every time zone can still show them.
EARLIEST_TIME = datetime(1, 1, 2, tzinfo=UTC)

LATEST_TIME = datetime(9999, 12, 30, tzinfo=UTC)

# A segment line number with more digits is unknown: no need to ask int(), which refuses
# more than 4,300 digits.
MAX_LINE_NUMBER_DIGITS = 18

_EARLIEST_SECONDS, _LATEST_SECONDS = EARLIEST_TIME.timestamp(), LATEST_TIME.timestamp()


@dataclass(frozen=True, slots=True)
class ImportRow:
    """One judgment of one output on one criterion, as the file gives it (slotted: a file's
    million rows would each carry a dict of its fields)."""

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
    # Appraise's document id of the judged item (``doc#system[#badN]``), matched with its batch
    # (annotation/judgment_import/appraise_batches.py).
    item_document: str = ""
    # The document a segment row's file names beside its segment (Google's ``doc``): a campaign
    # built from the release numbers its segments within these documents.
    segment_document: str = ""


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
    # Added to a score's out-of-range message: what the layout's files may hold instead.
    scale_hint: str = ""
    # Whether the spans of one output may overlap: a layout whose raters may mark several
    # errors on the same words (Google's MQM TSV, one error a row); the annotation screens
    # and every other layout may not.
    spans_may_overlap: bool = False
    # What reading the file with its companion files (Appraise's batches) left out and how,
    # kept in the import's summary.
    summary: dict[str, Any] = field(default_factory=dict)


def clip(text: str, length: int = 60) -> str:
    """A text of the file as a message quotes it: cut to ``length`` characters."""
    return text if len(text) <= length else text[: length - 1] + "…"


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


def _first_filled_line(lines: list[str]) -> int | None:
    """The index of the first line that is not blank; None when every line is."""
    return next((i for i, line in enumerate(lines) if line.strip()), None)


def _csv_rows(
    name: str, lines: list[str], start: int, delimiter: str = ",", *, strict: bool = False
) -> Iterator[tuple[int, list[str]]]:
    """The rows of ``lines[start:]``, each with the file's number of its first line (a quoted
    field may go on over several lines). ``strict`` (a CSV's parsers; detection reads loosely)
    refuses a quoted field with text after its closing quote, which the csv module would read
    ``"Best" MT`` as ``Best MT``, and one that the file ends inside.

    Raises:
        UploadError: naming the line that the csv module refuses (a field over its limit of
            131,072 characters, bad quoting), or where the row it could not read begins.
    """
    if delimiter == "\t":
        reader = csv.reader(islice(lines, start, None), delimiter="\t", quoting=csv.QUOTE_NONE)
    else:
        reader = csv.reader(islice(lines, start, None), delimiter=delimiter, strict=strict)
    read = start  # lines consumed so far
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            line, message = start + reader.line_num, f"the line cannot be read: {exc}"
            if "field limit" not in str(exc):  # the others are errors of quoting
                message += f" ({_QUOTING})"
            if line > read + 1:  # a quoted field went on to where the error was found
                line, message = read + 1, f"the row that begins here (to line {line}): {message}"
            raise UploadError([UploadProblem(name, line, message)]) from exc
        yield read + 1, values
        read = start + reader.line_num


def tsv_rows(name: str, lines: list[str], start: int) -> Iterator[tuple[int, list[str]]]:
    """The rows of a TSV file that is quoted as Python's ``excel-tab`` dialect writes it (and
    EvalSite's TSV downloads, annotation/reports/stream.py ``_tsv_field``): one row per line,
    fields split at tabs; a field that begins with a double quote is quoted, up to the quote
    before the next tab or the line's end, with a quote inside written as two. Any other quote
    is text. Each row comes with its line number.

    Raises:
        UploadError: naming the line of a quoted field that is not closed on its line or has
            text after its closing quote, or of a field over the csv module's limit.
    """
    limit = csv.field_size_limit()
    for index in range(start, len(lines)):
        line = lines[index]
        if '"' in line:
            values, problem = _quoted_tsv_fields(line)
        else:  # most lines: nothing is quoted
            values, problem = line.split("\t"), None
        if problem is None and len(line) > limit and any(len(v) > limit for v in values):
            problem = f"the line cannot be read: field larger than field limit ({limit})"
        if problem is not None:
            raise UploadError([UploadProblem(name, index + 1, problem)])
        yield index + 1, values


def _quoted_tsv_fields(line: str) -> tuple[list[str], str | None]:
    """The fields of a TSV line with quotes (see :func:`tsv_rows`), and what is wrong with it."""
    fields: list[str] = []
    at = 0
    while True:
        if not line.startswith('"', at):
            tab = line.find("\t", at)
            fields.append(line[at:] if tab < 0 else line[at:tab])
            if tab < 0:
                return fields, None
            at = tab + 1
            continue
        number, parts, at = len(fields) + 1, [], at + 1
        while True:
            close = line.find('"', at)
            if close < 0:
                return fields, (
                    f"field {number} begins with a double quote that is not closed on this line "
                    f"({_QUOTING})"
                )
            parts.append(line[at:close])
            if not line.startswith('"', close + 1):
                break
            parts.append('"')
            at = close + 2
        fields.append("".join(parts))
        at = close + 1
        if at == len(line):
            return fields, None
        if line[at] != "\t":
            return fields, (
                f"field {number} begins with a double quote, so it is a quoted field, but text "
                f"follows its closing quote ({_QUOTING})"
            )
        at += 1


_QUOTING = (
    "a field that begins with a double quote ends with one, and a quote inside it is written as "
    'two: "say ""yes"""'
)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _row(
    problems: Problems, number: int, get: Any, type_name: str, known: Collection[str]
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
    # A file repeats a few names over its rows: interned, each is held once (a million rows
    # kept a million copies of the same annotator, system and segment names).
    return {
        "line": number,
        "annotator": sys.intern(annotator),
        "system": sys.intern(system),
        "segment": sys.intern(segment),
        "type": sys.intern(APPRAISE_TYPES.get(type_name, type_name)),
        "score": score,
    }


def is_line_number(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²" and other digits that int() refuses."""
    return text.isascii() and text.isdigit()
