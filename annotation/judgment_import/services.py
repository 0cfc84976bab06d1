"""Import of historical judgments onto a campaign that already holds the texts.

Three layouts are read into one list of :class:`ImportRow` (see ``docs/reports.md`` for every
column and the sources of the Appraise and WMT layouts):

1. ``evalsite``: our own TSV or CSV table with a header row: ``annotator``, ``system``,
   ``segment`` (``doc_id:seg_id`` or a 1-based line number), ``type`` (SYSTEM, REPEAT, REF,
   BAD_REF), ``score``, and optionally ``hit``, ``item``, ``seconds``, ``criterion``, ``run``;
2. ``appraise``: the CSV that Appraise's ``ExportSystemScoresToCSV`` writes, without a header:
   username, system, segment id, item type (TGT, CHK, BAD, REF), source and target language,
   score, start and end time (Unix seconds), and with ``--batch-info`` the batch number and
   item id;
3. ``wmt``: the judgments of the WMT direct-assessment scripts (``ad-good-raw.csv``,
   ``ad-latest.csv``), tab-separated with the header ``HITId WorkerId Input.src Input.trg
   Input.item hit sys_id rid type sid score time``.

Then :func:`judgments_import` resolves systems, segments and originals against the campaign and
stores an imported protocol config with tasks (one per HIT), items, shown outputs, assignments,
judgments and values, all or nothing. Every problem names the file and line.
"""

from __future__ import annotations

import csv
import gc
import hashlib
import io
import json
import logging
import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, models, transaction
from django.utils import timezone

from annotation.campaigns.uploads import (
    MAX_PROBLEMS,
    UploadError,
    UploadFile,
    UploadProblem,
    decode_text,
    split_lines,
)
from annotation.models import (
    Assignment,
    Campaign,
    Item,
    ItemKind,
    ItemOutput,
    Judgment,
    JudgmentImport,
    JudgmentValue,
    ProtocolConfig,
    Reference,
    Run,
    Segment,
    System,
    Task,
    Translation,
)
from annotation.protocols import DIRECT_ASSESSMENT, PROTOCOLS, RANK, Criterion
from annotation.signals import campaign_data_changed

logger = logging.getLogger(__name__)

FORMAT_AUTO = "auto"
FORMAT_EVALSITE = "evalsite"
FORMAT_APPRAISE = "appraise"
FORMAT_WMT = "wmt"
FORMATS = (FORMAT_EVALSITE, FORMAT_APPRAISE, FORMAT_WMT)

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
EVALSITE_OPTIONAL = ("hit", "item", "seconds", "criterion", "run")
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
BATCH = 2000
USERNAME_PREFIX = "imp"
# Appraise's start and end times as Unix seconds: a day inside what datetime holds, so that
# every time zone can still show them.
EARLIEST_TIME = datetime(1, 1, 2, tzinfo=UTC)
LATEST_TIME = datetime(9999, 12, 30, tzinfo=UTC)
_EARLIEST_SECONDS, _LATEST_SECONDS = EARLIEST_TIME.timestamp(), LATEST_TIME.timestamp()
# A segment line number with more digits is unknown: no need to ask int(), which refuses
# more than 4,300 digits.
MAX_LINE_NUMBER_DIGITS = 18


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


@dataclass
class ParsedJudgments:
    """What a file holds, before it is matched with a campaign."""

    file: str
    file_format: str
    rows: list[ImportRow]
    has_items: bool
    # WMT gives the HIT's working time only: it is shared out over the HIT's screens.
    hit_seconds: dict[tuple[str, str], float] = field(default_factory=dict)


class _Problems:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[UploadProblem] = []

    def add(self, line: int | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(UploadProblem(self.file, line, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise UploadError(self.problems)


# --------------------------------------------------------------------------------------------
# Parsing (no database)


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
    problems = _Problems(name)
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
                )
            )
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_EVALSITE, rows, has_items="item" in column)


def _row(
    problems: _Problems, number: int, get: Any, type_name: str, known: Sequence[str]
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
    problems = _Problems(name)
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
    problems = _Problems(name)
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
        if not _is_line_number(get("segment")):
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


# --------------------------------------------------------------------------------------------
# Storing


@dataclass(frozen=True)
class ImportOptions:
    """Choices of the organizer for one import.

    Attributes:
        file_format: one of :data:`FORMATS` or ``auto``.
        protocol: the protocol the judgments were made under (a key of the registry).
        criterion: the criterion of rows without a ``criterion`` column (default: the
            protocol's first).
        line_base: what a numeric segment id counts from: 1 (WMT's sid, Appraise's item id,
            line numbers) or 0.
        language_pair: keep only this language pair of a multi-pair Appraise or WMT file.
        name: the imported protocol config's name (default from the file name).
    """

    file_format: str = FORMAT_AUTO
    protocol: str = DIRECT_ASSESSMENT
    criterion: str = ""
    line_base: int = 1
    language_pair: str = ""
    name: str = ""


@dataclass
class _Context:
    """The campaign's ids that rows are matched against."""

    segment_by_position: dict[int, int]
    segment_by_key: dict[tuple[str, str], int]
    system_by_name: dict[str, int]
    run_by_name: dict[tuple[int, str], int]
    first_run: dict[int, int]
    translations: dict[tuple[int, int], tuple[int, str]]
    references: dict[int, tuple[int, str]]


def judgments_import(
    *,
    campaign: Campaign,
    upload: UploadFile,
    user: AbstractBaseUser | None,
    options: ImportOptions | None = None,
) -> JudgmentImport:
    """Parse ``upload`` and store its judgments on ``campaign``, all or nothing.

    Creates an imported :class:`ProtocolConfig` with one task per HIT (per annotator when the
    file has no HIT ids), an item per screen, the shown outputs (QC outputs pointing to their
    originals), one assignment per annotator and task, the judgments and their values, and one
    account per annotator of the file (``imp-<campaign>-<id>``, unusable password).

    QC originals: a REPEAT or BAD_REF row copies the same annotator's SYSTEM row of the same
    system and segment in the same HIT, else in any HIT; failing that another annotator's,
    and failing that a real item without judgments is added to the HIT. A REF row copies a
    SYSTEM item of its segment found the same way.

    Raises:
        UploadError: unknown systems or segments, bad scores, malformed rows, duplicates; each
            names the file and line. Nothing is stored then.
    """
    options = options or ImportOptions()
    if options.protocol not in PROTOCOLS:
        raise UploadError(
            [UploadProblem(upload.name, None, f"unknown protocol {options.protocol!r}")]
        )
    with _no_cyclic_gc():
        parsed = judgments_parse(
            upload,
            file_format=options.file_format,
            language_pair=options.language_pair,
            max_bytes=settings.EVALSITE_UPLOAD_MAX_BYTES,
        )
        with transaction.atomic():
            locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
            context = _campaign_context(locked, parsed)
            plan = _plan(parsed, context, options)
            record = _store(locked, parsed, plan, options, user)
            # As every judgment and upload does: the metrics app schedules a recomputation once
            # the import has committed (never if it rolls back).
            campaign_data_changed.send(sender=JudgmentImport, campaign_id=locked.pk)
    logger.info(
        "imported %d judgments from %s into campaign %s", plan.n_judgments, upload.name, campaign.pk
    )
    return record


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector while an import builds its rows. The hundreds of thousands of
    tuples and dicts it holds form no cycles (reference counting frees them), but each
    allocation burst made Python rescan all of them: a third of a 100,000-row import."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _campaign_context(campaign: Campaign, parsed: ParsedJudgments) -> _Context:
    segments = list(
        Segment.objects.filter(campaign=campaign).values_list(
            "id", "position", "document__external_id", "external_id"
        )
    )
    if not segments:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    "this campaign has no texts yet; upload its source, references and system "
                    "outputs before importing judgments",
                )
            ]
        )
    systems = dict(System.objects.filter(campaign=campaign).values_list("name", "id"))
    runs = list(
        Run.objects.filter(system__campaign=campaign)
        .order_by("system_id", "position")
        .values_list("id", "system_id", "name")
    )
    first_run: dict[int, int] = {}
    for run_id, system_id, _ in runs:
        first_run.setdefault(system_id, run_id)
    return _Context(
        segment_by_position={position: pk for pk, position, _, _ in segments},
        segment_by_key={(doc, seg): pk for pk, _, doc, seg in segments},
        system_by_name=systems,
        run_by_name={(system_id, name): run_id for run_id, system_id, name in runs},
        first_run=first_run,
        translations={
            (run_id, segment_id): (pk, text)
            for pk, run_id, segment_id, text in Translation.objects.filter(
                run__system__campaign=campaign
            ).values_list("id", "run_id", "segment_id", "text")
        },
        references={
            segment_id: (pk, text)
            for pk, segment_id, text in Reference.objects.filter(
                segment__campaign=campaign, index=0
            ).values_list("id", "segment_id", "text")
        },
    )


# A shown output: ("t", translation id) for a system output, ("r", reference id) for a
# reference. Items are keyed within their task.
OutputKey = tuple[str, int]


@dataclass
class _PlannedOutput:
    kind: str
    source: OutputKey
    system_id: int | None
    run_id: int | None
    text: str
    original: tuple[str, Any, int] | None = None  # (task, item key, slot) of the original


@dataclass
class _PlannedItem:
    task: str
    key: Any
    segment_id: int
    outputs: list[_PlannedOutput] = field(default_factory=list)
    slots: dict[tuple[str, OutputKey], int] = field(default_factory=dict)
    original: tuple[str, Any] | None = None  # (task, item key)

    @property
    def has_real(self) -> bool:
        return any(o.kind == ItemKind.REAL for o in self.outputs)

    @property
    def kind(self) -> str:
        """Real when it shows a system output as such (a reference may be among them, as on
        a ranking screen); otherwise its QC kind, as the task builder stores copies."""
        if self.has_real or not self.outputs:
            return ItemKind.REAL
        kinds = {o.kind for o in self.outputs}
        for kind in (ItemKind.BAD_REFERENCE, ItemKind.REFERENCE, ItemKind.REPEAT):
            if kind in kinds:
                return kind
        return ItemKind.REAL


@dataclass
class _PlannedJudgment:
    annotator: str
    task: str
    item: Any
    values: dict[tuple[int, str], float] = field(default_factory=dict)  # (slot, criterion)
    seconds: float | None = None
    started: float | None = None
    submitted: float | None = None


@dataclass
class _Plan:
    tasks: dict[str, dict[Any, _PlannedItem]]
    judgments: dict[tuple[str, str, Any], _PlannedJudgment]
    annotators: list[str]
    criteria: list[str]

    @property
    def n_judgments(self) -> int:
        return len(self.judgments)


def _criterion(options: ImportOptions) -> dict[str, Criterion]:
    protocol = PROTOCOLS[options.protocol]
    if protocol.ranks:
        return {RANK.key: RANK}
    return {c.key: c for c in protocol.criteria}


def _plan(parsed: ParsedJudgments, context: _Context, options: ImportOptions) -> _Plan:
    problems = _Problems(parsed.file)
    protocol = PROTOCOLS[options.protocol]
    criteria = _criterion(options)
    default_criterion = options.criterion or next(iter(criteria))
    if default_criterion not in criteria:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    f"criterion {default_criterion!r} is not one of {protocol.key}'s: "
                    f"{', '.join(criteria)}",
                )
            ]
        )
    unscreened = next((r.line for r in parsed.rows if not r.item), None)
    if protocol.ranks and unscreened is not None:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    unscreened,
                    "ranking judgments need an item column: the rows ranked together on one "
                    "screen share an item id",
                )
            ]
        )

    # Pass 1: every row's segment and shown output, and where SYSTEM rows were shown.
    resolved: list[tuple[ImportRow, int, OutputKey, int | None, int | None, str, str]] = []
    for row in parsed.rows:
        segment_id = _segment(problems, row, context, options.line_base)
        if segment_id is None:
            continue
        criterion = row.criterion or default_criterion
        if criterion not in criteria:
            problems.add(
                row.line,
                f"criterion {criterion!r} is not one of {protocol.key}'s: {', '.join(criteria)}",
            )
            continue
        scale = criteria[criterion]
        if not protocol.ranks and not scale.minimum <= row.score <= scale.maximum:
            hint = (
                " (a *-good-stnd* file holds z-scores; import the raw scores: ad-good-raw.csv)"
                if parsed.file_format == FORMAT_WMT
                else ""
            )
            problems.add(
                row.line,
                f"score {row.score:g} is outside the {criterion} scale "
                f"{scale.minimum}–{scale.maximum}{hint}",
            )
            continue
        if protocol.ranks and (row.score < 1 or row.score != int(row.score)):
            problems.add(row.line, f"rank {row.score:g} is not a whole number from 1")
            continue
        shown = _shown_output(problems, row, segment_id, context)
        if shown is None:
            continue
        source, system_id, run_id, text = shown
        task = row.hit or f"annotator {row.annotator}"
        resolved.append((row, segment_id, source, system_id, run_id, text, task))
    problems.raise_if_any()

    tasks: dict[str, dict[Any, _PlannedItem]] = {}
    judgments: dict[tuple[str, str, Any], _PlannedJudgment] = {}
    # Where each (annotator, source) and each (annotator, segment) was shown as a SYSTEM row.
    seen = _Seen()
    for row, segment_id, source, system_id, run_id, text, task in resolved:
        if row.type != SYSTEM:
            continue
        key = row.item or ("real", source)
        item = _item(tasks, task, key, segment_id)
        if item.segment_id != segment_id:
            problems.add(row.line, f"item {row.item} shows two segments")
            continue
        slot = _slot(item, ItemKind.REAL, source, system_id, run_id, text)
        for lookup in (
            (row.annotator, source),
            (row.annotator, segment_id),
            ("", source),
            ("", segment_id),
        ):
            seen.add(lookup, (task, key, slot))
        _judge(problems, judgments, row, task, key, slot, default_criterion)

    placeholders = 0
    for row, segment_id, source, system_id, run_id, text, task in resolved:
        if row.type == SYSTEM:
            continue
        kind = KIND_OF_TYPE[row.type]
        shared = tasks.get(task, {}).get(row.item) if row.item else None
        if row.type == REF and shared is not None and shared.has_real:
            # A reference shown among system outputs on a real screen: nothing is copied.
            slot = _slot(shared, kind, source, system_id, run_id, text)
            _judge(problems, judgments, row, task, row.item, slot, default_criterion)
            continue
        wanted: tuple[str, Any] = (row.annotator, segment_id if row.type == REF else source)
        original = seen.original(wanted, task)
        if original is None:
            # The file lacks the original: a real item without judgments stands for it.
            placeholders += 1
            holder_key = ("placeholder", source if row.type != REF else segment_id)
            holder = _item(tasks, task, holder_key, segment_id)
            holder_slot = (
                _slot(holder, ItemKind.REAL, source, system_id, run_id, text)
                if row.type != REF
                else 0
            )
            original = (task, holder_key, holder_slot)
            seen.add(("", wanted[1]), original)
        key = row.item or _unused_key(
            tasks, judgments, row, task, (kind, source, original[:2]), default_criterion
        )
        item = _item(tasks, task, key, segment_id)
        if item.segment_id != segment_id:
            problems.add(row.line, f"item {row.item} shows two segments")
            continue
        if item.original is None:
            item.original = original[:2]
        slot = _slot(
            item, kind, source, system_id, run_id, text, None if row.type == REF else original
        )
        _judge(problems, judgments, row, task, key, slot, default_criterion)
    problems.raise_if_any()

    if protocol.ranks:
        _check_ranks(problems, judgments, tasks)
        problems.raise_if_any()
    _spread_hit_seconds(judgments, parsed)
    annotators = list(dict.fromkeys(row.annotator for row in parsed.rows))
    criteria_used = sorted({c for j in judgments.values() for (_, c) in j.values})
    logger.debug("planned %d placeholder originals", placeholders)
    return _Plan(tasks=tasks, judgments=judgments, annotators=annotators, criteria=criteria_used)


def _unused_key(
    tasks: dict[str, dict[Any, _PlannedItem]],
    judgments: dict[tuple[str, str, Any], _PlannedJudgment],
    row: ImportRow,
    task: str,
    key: tuple[Any, ...],
    default_criterion: str,
) -> tuple[Any, ...]:
    """The key of a QC screen the annotator has not answered yet: the same QC copy shown twice
    in one HIT (two references of one segment) is two screens, not a duplicate."""
    kind, source = key[0], key[1]
    criterion = row.criterion or default_criterion
    candidate, n = key, 1
    while True:
        item = tasks.get(task, {}).get(candidate)
        judgment = judgments.get((row.annotator, task, candidate))
        slot = item.slots.get((kind, source)) if item is not None else None
        if judgment is None or slot is None or (slot, criterion) not in judgment.values:
            return candidate
        n += 1
        candidate = (*key, n)


def _is_line_number(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²" and other digits that int() refuses."""
    return text.isascii() and text.isdigit()


def _segment(problems: _Problems, row: ImportRow, context: _Context, line_base: int) -> int | None:
    value = row.segment
    if _is_line_number(value):
        segment_id = (
            context.segment_by_position.get(int(value) - line_base)
            if len(value.lstrip("0")) <= MAX_LINE_NUMBER_DIGITS
            else None
        )
        if segment_id is None:
            problems.add(
                row.line,
                f"unknown segment: line {value} (counting from {line_base}); the campaign has "
                f"{len(context.segment_by_position)} segments",
            )
        return segment_id
    if ":" in value:
        doc, seg = value.rsplit(":", 1)
        segment_id = context.segment_by_key.get((doc, seg))
        if segment_id is None:
            problems.add(row.line, f"unknown segment: doc {doc} seg {seg} is not in this campaign")
        return segment_id
    problems.add(row.line, f"segment {value!r} is neither doc_id:seg_id nor a line number")
    return None


def _shown_output(
    problems: _Problems, row: ImportRow, segment_id: int, context: _Context
) -> tuple[OutputKey, int | None, int | None, str] | None:
    if row.type == REF:
        reference = context.references.get(segment_id)
        if reference is None:
            problems.add(row.line, "REF row for a segment without a reference")
            return None
        return ("r", reference[0]), None, None, reference[1]
    system_id = context.system_by_name.get(row.system)
    if system_id is None:
        problems.add(row.line, f"unknown system {row.system!r}; upload its outputs first")
        return None
    run_id = (
        context.run_by_name.get((system_id, row.run))
        if row.run
        else context.first_run.get(system_id)
    )
    if run_id is None:
        problems.add(row.line, f"unknown run {row.run!r} of system {row.system!r}")
        return None
    translation = context.translations.get((run_id, segment_id))
    if translation is None:
        problems.add(row.line, f"system {row.system!r} has no translation of this segment")
        return None
    text = translation[1] if row.type != BAD_REF else ""  # the degraded text is not in the file
    return ("t", translation[0]), system_id, run_id, text


def _item(
    tasks: dict[str, dict[Any, _PlannedItem]], task: str, key: Any, segment_id: int
) -> _PlannedItem:
    items = tasks.setdefault(task, {})
    if key not in items:
        items[key] = _PlannedItem(task=task, key=key, segment_id=segment_id)
    return items[key]


def _slot(
    item: _PlannedItem,
    kind: str,
    source: OutputKey,
    system_id: int | None,
    run_id: int | None,
    text: str,
    original: tuple[str, Any, int] | None = None,
) -> int:
    key = (kind, source)
    if key not in item.slots:
        item.slots[key] = len(item.outputs)
        item.outputs.append(_PlannedOutput(kind, source, system_id, run_id, text, original))
    return item.slots[key]


class _Seen:
    """Where each (annotator, output) and (annotator, segment) was shown, ``""`` standing for
    any annotator: the first place in file order, overall and per HIT (a dict lookup, where a
    scan of every place made QC rows that fall back to other annotators quadratic)."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, Any], tuple[str, Any, int]] = {}
        self.first_in_task: dict[tuple[str, Any, str], tuple[str, Any, int]] = {}

    def add(self, lookup: tuple[str, Any], place: tuple[str, Any, int]) -> None:
        self.first.setdefault(lookup, place)
        self.first_in_task.setdefault((*lookup, place[0]), place)

    def original(self, wanted: tuple[str, Any], task: str) -> tuple[str, Any, int] | None:
        """Same annotator in the same HIT, the same annotator anywhere, then anyone (same HIT
        first); the first match in file order."""
        annotator, what = wanted
        for who in (annotator, ""):
            place = self.first_in_task.get((who, what, task)) or self.first.get((who, what))
            if place is not None:
                return place
        return None


def _judge(
    problems: _Problems,
    judgments: dict[tuple[str, str, Any], _PlannedJudgment],
    row: ImportRow,
    task: str,
    item: Any,
    slot: int,
    default_criterion: str,
) -> None:
    key = (row.annotator, task, item)
    judgment = judgments.get(key)
    if judgment is None:
        judgment = judgments[key] = _PlannedJudgment(
            annotator=row.annotator,
            task=task,
            item=item,
            seconds=row.seconds,
            started=row.started,
            submitted=row.submitted,
        )
    criterion = row.criterion or default_criterion
    if (slot, criterion) in judgment.values:
        problems.add(
            row.line,
            f"a second {criterion} of the same output by annotator {row.annotator} "
            f"on the same screen (HIT {row.hit or '—'})",
        )
        return
    judgment.values[(slot, criterion)] = row.score


def _check_ranks(
    problems: _Problems,
    judgments: dict[tuple[str, str, Any], _PlannedJudgment],
    tasks: dict[str, dict[Any, _PlannedItem]],
) -> None:
    for judgment in judgments.values():
        n = len(tasks[judgment.task][judgment.item].outputs)
        for rank in judgment.values.values():
            if rank > n:
                problems.add(
                    None,
                    f"annotator {judgment.annotator} gave rank {rank:g} on item {judgment.item} "
                    f"of HIT {judgment.task}, which shows {n} outputs",
                )
                return


def _spread_hit_seconds(
    judgments: dict[tuple[str, str, Any], _PlannedJudgment], parsed: ParsedJudgments
) -> None:
    """WMT records the working time of a whole HIT: each of its screens gets an equal share,
    so that time on task adds up to the HIT's time."""
    if not parsed.hit_seconds:
        return
    screens = Counter((j.annotator, j.task) for j in judgments.values())
    for judgment in judgments.values():
        total = parsed.hit_seconds.get((judgment.annotator, judgment.task))
        if total is not None:
            judgment.seconds = total / screens[(judgment.annotator, judgment.task)]


def _username(campaign: Campaign, annotator: str) -> str:
    """``imp-<first 8 hex of the campaign>-<annotator id>``; characters that usernames may not
    hold become ``_`` and a short hash keeps such ids apart."""
    clean = re.sub(r"[^\w.@+-]", "_", annotator)[:100]
    if clean != annotator:
        clean += "-" + hashlib.sha1(annotator.encode()).hexdigest()[:8]
    return f"{USERNAME_PREFIX}-{campaign.pk.hex[:8]}-{clean}"


def _config_name(campaign: Campaign, options: ImportOptions, file: str) -> str:
    base = (options.name or f"Imported: {file}")[:90]
    taken = set(ProtocolConfig.objects.filter(campaign=campaign).values_list("name", flat=True))
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} ({n})"
    return name


def _when(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)


def _store(
    campaign: Campaign,
    parsed: ParsedJudgments,
    plan: _Plan,
    options: ImportOptions,
    user: AbstractBaseUser | None,
) -> JudgmentImport:
    now = timezone.now()
    protocol = PROTOCOLS[options.protocol]
    users = _annotator_accounts(campaign, parsed, plan.annotators)
    # An item's kind looks at all its outputs: computed once.
    kinds = {
        (name, key): item.kind for name, items in plan.tasks.items() for key, item in items.items()
    }
    n_items = len(kinds)
    per_100 = Counter(kinds.values())
    annotators_per_task = Counter(
        task for _, task in {(j.annotator, j.task) for j in plan.judgments.values()}
    )
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name=_config_name(campaign, options, parsed.file),
        protocol=options.protocol,
        mode=protocol.modes[0].key,
        outputs_per_screen=max(
            (len(i.outputs) for items in plan.tasks.values() for i in items.values()), default=1
        ),
        items_per_task=max((len(items) for items in plan.tasks.values()), default=1),
        annotations_per_task=max(annotators_per_task.values(), default=1),
        qc_bad_reference=min(50, round(100 * per_100[ItemKind.BAD_REFERENCE] / max(n_items, 1))),
        qc_repeat=min(50, round(100 * per_100[ItemKind.REPEAT] / max(n_items, 1))),
        qc_reference=min(50, round(100 * per_100[ItemKind.REFERENCE] / max(n_items, 1))),
        instructions=f"Imported from {parsed.file} ({parsed.file_format}).",
    )
    tasks = Task.objects.bulk_create(
        [
            Task(
                config=config,
                position=position,
                size=len(items),
                annotations_needed=annotators_per_task[name],
            )
            for position, (name, items) in enumerate(plan.tasks.items())
        ],
        batch_size=BATCH,
    )
    task_of = dict(zip(plan.tasks, tasks, strict=True))
    position_of: dict[tuple[str, Any], int] = {}
    for name, items in plan.tasks.items():
        for position, key in enumerate(items):
            position_of[(name, key)] = position

    # Real items first, then the QC items that copy them; outputs without an original first,
    # then the copies that point to them. Ids are reserved up front so that rows can point to
    # each other without a model instance per row (see _insert_rows).
    item_order = [
        (name, key, item)
        for real in (True, False)
        for name, items in plan.tasks.items()
        for key, item in items.items()
        if (kinds[(name, key)] == ItemKind.REAL) == real
    ]
    item_id = dict(
        zip(
            ((name, key) for name, key, _ in item_order),
            _reserve_ids(Item, len(item_order)),
            strict=True,
        )
    )
    _insert_rows(
        Item,
        ("id", "task", "position", "kind", "segment", "original"),
        (
            (
                item_id[(name, key)],
                task_of[name].pk,
                position_of[(name, key)],
                kinds[(name, key)],
                item.segment_id,
                None
                if kinds[(name, key)] == ItemKind.REAL or item.original is None
                else item_id[item.original],
            )
            for name, key, item in item_order
        ),
    )
    output_order = [
        (name, key, slot, planned)
        for copies in (False, True)
        for name, items in plan.tasks.items()
        for key, item in items.items()
        for slot, planned in enumerate(item.outputs)
        if (planned.original is not None) == copies
    ]
    output_id = dict(
        zip(
            ((name, key, slot) for name, key, slot, _ in output_order),
            _reserve_ids(ItemOutput, len(output_order)),
            strict=True,
        )
    )
    _insert_rows(
        ItemOutput,
        (
            "id",
            "item",
            "position",
            "kind",
            "translation",
            "system",
            "run",
            "reference",
            "original",
            "text",
        ),
        (
            (
                output_id[(name, key, slot)],
                item_id[(name, key)],
                slot,
                planned.kind,
                None if planned.source[0] == "r" else planned.source[1],
                planned.system_id,
                planned.run_id,
                planned.source[1] if planned.source[0] == "r" else None,
                output_id[planned.original] if planned.original else None,
                planned.text,
            )
            for name, key, slot, planned in output_order
        ),
    )

    times: dict[tuple[str, str], list[datetime]] = {}
    done = Counter((j.annotator, j.task) for j in plan.judgments.values())
    for judgment in plan.judgments.values():
        stamps = [t for t in (_when(judgment.started), _when(judgment.submitted)) if t]
        times.setdefault((judgment.annotator, judgment.task), []).extend(stamps or [now])
    assignments = {
        key: Assignment(
            task=task_of[key[1]],
            annotator=users[key[0]],
            status=Assignment.Status.DONE,
            origin=Assignment.Origin.PUSH,
            claimed_at=min(stamps),
            completed_at=max(stamps),
            items_done=done[key],
        )
        for key, stamps in times.items()
    }
    Assignment.objects.bulk_create(assignments.values(), batch_size=BATCH)
    judgment_ids = _reserve_ids(Judgment, len(plan.judgments))
    user_id = {annotator: account.pk for annotator, account in users.items()}
    assignment_id = {key: assignment.pk for key, assignment in assignments.items()}
    judgment_rows: list[tuple[Any, ...]] = []
    value_rows: list[tuple[Any, ...]] = []
    for judgment_id, planned in zip(judgment_ids, plan.judgments.values(), strict=True):
        answer: dict[str, dict[str, float]] = {}
        for (slot, criterion), value in planned.values.items():
            output = output_id[(planned.task, planned.item, slot)]
            answer.setdefault(str(output), {})[criterion] = value
            value_rows.append((judgment_id, output, criterion, value))
        judgment_rows.append(
            (
                judgment_id,
                item_id[(planned.task, planned.item)],
                user_id[planned.annotator],
                assignment_id[(planned.annotator, planned.task)],
                1,
                uuid.uuid4(),
                answer,
                _when(planned.started),
                _when(planned.submitted) or now,
                planned.seconds,
            )
        )
    _insert_rows(
        Judgment,
        (
            "id",
            "item",
            "annotator",
            "assignment",
            "revision",
            "submission_id",
            "answer",
            "shown_at",
            "submitted_at",
            "seconds",
        ),
        judgment_rows,
    )
    _insert_rows(JudgmentValue, ("judgment", "output", "criterion", "value"), value_rows)
    campaign.annotators.add(*users.values())
    return JudgmentImport.objects.create(
        campaign=campaign,
        config=config,
        file_format=parsed.file_format,
        file_name=parsed.file[:255],
        imported_by=user,
        options={
            "file_format": options.file_format,
            "protocol": options.protocol,
            "criterion": options.criterion,
            "line_base": options.line_base,
            "language_pair": options.language_pair,
        },
        summary={
            "rows": len(parsed.rows),
            "values": len(value_rows),
            "judgments": len(judgment_rows),
            "tasks": len(tasks),
            "items": n_items,
            "criteria": plan.criteria,
            "annotators": {a: users[a].get_username() for a in plan.annotators},
        },
    )


def _reserve_ids(model: type[models.Model], n: int) -> list[int]:
    """``n`` new primary keys of ``model``, in increasing order, for rows this transaction
    inserts with :func:`_insert_rows`. PostgreSQL draws them from the table's sequence, so that
    concurrent inserts elsewhere never collide; SQLite serialises writers (EvalSite opens its
    transactions IMMEDIATE), so the ids above the highest ever used stay ours until commit."""
    if n == 0:
        return []
    table = model._meta.db_table
    column = model._meta.pk.column
    quoted = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The sequence looked up once: pg_get_serial_sequence is not folded into a constant.
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [quoted(table), column])
            sequence = cursor.fetchone()[0]
            cursor.execute(
                "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, n]
            )
            return [row[0] for row in cursor.fetchall()]
        if connection.vendor != "sqlite":
            raise NotImplementedError(f"no id reservation for {connection.vendor}")
        cursor.execute(f"SELECT MAX({quoted(column)}) FROM {quoted(table)}")
        top = cursor.fetchone()[0] or 0
        # AUTOINCREMENT never reuses the ids of deleted rows; neither do we.
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        used = cursor.fetchone()
        top = max(top, used[0] if used else 0)
        return list(range(top + 1, top + n + 1))


def _insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (values of ``fields``, foreign keys as ids) without a model instance
    per row: COPY on PostgreSQL, one prepared INSERT on SQLite. Every column the model has is
    given here or has a database-side value; the values are converted for the database as
    the model's fields convert them (JSON, date-times, UUIDs)."""
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    missing = [f.name for f in meta.concrete_fields if f not in columns and not f.primary_key]
    if missing:
        raise ValueError(f"{meta.label}: no value for {', '.join(missing)}")
    quoted = connection.ops.quote_name
    table = quoted(meta.db_table)
    names = ", ".join(quoted(f.column) for f in columns)
    postgresql = connection.vendor == "postgresql"
    # psycopg adapts numbers, strings, date-times and UUIDs itself and COPY parses JSON from
    # its text; SQLite gets what the fields would give it.
    converters: list[tuple[int, Callable[[Any], Any]]] = []
    for index, f in enumerate(columns):
        # A foreign key's values are its target's (an assignment's UUID).
        kind = (f.target_field if f.is_relation else f).get_internal_type()  # type: ignore[attr-defined]
        if postgresql and kind == "JSONField":
            converters.append((index, partial(json.dumps, cls=f.encoder)))  # type: ignore[attr-defined]
        elif not postgresql and kind in ("DateTimeField", "UUIDField", "JSONField"):
            converters.append((index, partial(_db_value, f)))
    if converters:
        rows = (_converted(row, converters) for row in rows)
    with connection.cursor() as cursor:
        if postgresql:
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        placeholders = ", ".join(["%s"] * len(columns))
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", rows)


def _db_value(field: models.Field[Any, Any], value: Any) -> Any:
    return None if value is None else field.get_db_prep_save(value, connection)


def _converted(row: Sequence[Any], converters: list[tuple[int, Callable[[Any], Any]]]) -> list[Any]:
    values = list(row)
    for index, convert in converters:
        values[index] = convert(values[index])
    return values


def _annotator_accounts(
    campaign: Campaign, parsed: ParsedJudgments, annotators: list[str]
) -> dict[str, AbstractBaseUser]:
    """One account per annotator id of the file; an earlier import's account is reused."""
    user_model = get_user_model()
    wanted = {a: _username(campaign, a) for a in annotators}
    existing = {
        u.get_username(): u for u in user_model.objects.filter(username__in=wanted.values())
    }
    clashes = [name for name, u in existing.items() if u.has_usable_password()]
    if clashes:
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    f"the username {clashes[0]} belongs to an account that can log in; rename "
                    "that account or the annotator in the file",
                )
            ]
        )
    new = []
    for name in wanted.values():
        if name not in existing:
            account = user_model(username=name)
            account.set_unusable_password()
            new.append(account)
    user_model.objects.bulk_create(new, batch_size=BATCH)
    by_name = {u.get_username(): u for u in user_model.objects.filter(username__in=wanted.values())}
    return {a: by_name[name] for a, name in wanted.items()}


def judgment_file_text(rows: Sequence[dict[str, Any]], *, delimiter: str = "\t") -> bytes:
    """Our own import format from dicts (for tests, the API docs and round trips)."""
    columns = [c for c in EVALSITE_REQUIRED + EVALSITE_OPTIONAL if any(c in r for r in rows)]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return out.getvalue().encode()
