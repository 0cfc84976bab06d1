"""Planning an import: the rows of imported judgments resolved against the campaign (systems,
segments, originals) into the outputs, items, judgments and HITs to store; every problem names its
file and line."""

from __future__ import annotations

import difflib
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from annotation.campaigns.uploads import (
    UploadError,
    UploadProblem,
)
from annotation.judgment_import.alignment import texts_match
from annotation.judgment_import.checks import (
    bad_reference_spans_problem,
    screen_values_refused,
    spans_refused,
)
from annotation.judgment_import.planned import (
    ImportPlan,
    OutputKey,
    _PlannedItem,
    _PlannedJudgment,
    _PlannedOutput,
)
from annotation.judgment_import.rows import (
    BAD_REF,
    FORMAT_AUTO,
    KIND_OF_TYPE,
    MAX_LINE_NUMBER_DIGITS,
    REF,
    SYSTEM,
    ImportRow,
    ParsedJudgments,
    Problems,
    is_line_number,
)
from annotation.judgment_import.text_spans import (
    spans_fit_text,
    spans_on_text,
    texts_unneutralised,
)
from annotation.models import (
    ItemKind,
)
from annotation.protocols import DIRECT_ASSESSMENT, PROTOCOLS, SCORES_STANDARDISED, Criterion

logger = logging.getLogger(__name__)

# A row resolved against the campaign: (row, segment id, shown output, system id, run id,
# shown text, task name).
ResolvedRow = tuple[ImportRow, int, OutputKey, int | None, int | None, str, str]


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
        system_map: the file's system names → the campaign's, for names that differ (WMT's
            ``HuaweiTSC.5`` for an uploaded ``HuaweiTSC``); names not in it are used as they are.
        document_score: document screens with a document-level score (whole-document rows).
        segment_numbering: what a WMT sid counts (judgment_import/wmt_segments.py).
        scores: raw, standardised (z-scores taken as given, outside the scale) or auto
            (judgment_import/standardised.py).
        weights: MQM's weights of the imported config (Google's when empty): an Appraise
            release's batches may carry them.
    """

    file_format: str = FORMAT_AUTO
    protocol: str = DIRECT_ASSESSMENT
    criterion: str = ""
    line_base: int = 1
    language_pair: str = ""
    name: str = ""
    system_map: dict[str, str] = field(default_factory=dict)
    document_score: bool = False
    segment_numbering: str = "auto"
    scores: str = "auto"
    weights: dict[str, float] = field(default_factory=dict)


@dataclass
class ImportContext:
    """The campaign's ids that rows are matched against."""

    segment_by_position: dict[int, int]
    segment_by_key: dict[tuple[str, str], int]
    system_by_name: dict[str, int]
    run_by_name: dict[tuple[int, str], int]
    first_run: dict[int, int]
    translations: dict[tuple[int, int], tuple[int, str]]
    references: dict[int, tuple[int, str]]
    # Segment id -> its source text and its doc:seg name (files that carry texts are checked).
    sources: dict[int, str] = field(default_factory=dict)
    segment_names: dict[int, str] = field(default_factory=dict)


def _criterion(options: ImportOptions) -> dict[str, Criterion]:
    return {c.key: c for c in PROTOCOLS[options.protocol].import_criteria()}


def import_plan(
    parsed: ParsedJudgments, context: ImportContext, options: ImportOptions
) -> ImportPlan:
    """Resolve the rows against the campaign, then plan the SYSTEM rows and, once every
    original is known, the QC rows that copy them; problems are raised after each stage."""
    problems = Problems(parsed.file)
    protocol = PROTOCOLS[options.protocol]
    criteria = _criterion(options)
    default_criterion = _default_criterion(parsed, options, criteria)
    # One tuple for each distinct shown output and real item key, where each row made its own.
    shared: dict[Any, Any] = {}
    resolved = _resolved_rows(
        problems, parsed, context, options, criteria, default_criterion, shared
    )
    problems.raise_if_any()

    tasks: dict[str, dict[Any, _PlannedItem]] = {}
    judgments: dict[tuple[str, str, Any], _PlannedJudgment] = {}
    # Where each (annotator, source) and each (annotator, segment) was shown as a SYSTEM row.
    seen = _Seen(resolved)
    _plan_system_rows(problems, resolved, tasks, judgments, seen, default_criterion, shared)
    # What pass 2 alone needed is let go before pass 3 plans the QC rows.
    shared.clear()
    seen.wanted.clear()
    seen.wanted_in_task.clear()
    resolved = [r for r in resolved if r[0].type != SYSTEM]
    placeholders = _plan_qc_rows(problems, resolved, tasks, judgments, seen, default_criterion)
    problems.raise_if_any()

    screen_values_refused(problems, protocol, judgments, tasks)
    spans_refused(problems, protocol, judgments, tasks, overlaps=parsed.spans_may_overlap)
    problems.raise_if_any()
    _spread_hit_seconds(judgments, parsed)
    annotators = list(dict.fromkeys(row.annotator for row in parsed.rows))
    criteria_used = sorted({c for j in judgments.values() for (_, c), _v in j.values})
    logger.debug("planned %d placeholder originals", placeholders)
    return ImportPlan(
        tasks=tasks, judgments=judgments, annotators=annotators, criteria=criteria_used
    )


def _default_criterion(
    parsed: ParsedJudgments, options: ImportOptions, criteria: dict[str, Criterion]
) -> str:
    """The criterion of rows without one; refuses a file the protocol cannot take as a whole
    (a criterion it lacks, ranks without screens) before any row is read."""
    protocol = PROTOCOLS[options.protocol]
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
    if protocol.imports_need_screens and unscreened is not None:
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
    return default_criterion


def _resolved_rows(
    problems: Problems,
    parsed: ParsedJudgments,
    context: ImportContext,
    options: ImportOptions,
    criteria: dict[str, Criterion],
    default_criterion: str,
    shared: dict[Any, Any],
) -> list[ResolvedRow]:
    """Pass 1: every row's segment and shown output, its score checked against its criterion's
    scale; rows with a problem are left out (the problems are raised after the pass)."""
    protocol = PROTOCOLS[options.protocol]
    resolved: list[ResolvedRow] = []
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
        # Standardised scores leave the scale; every score is a finite number (rows.py).
        problem = (
            None
            if options.scores == SCORES_STANDARDISED
            else protocol.import_value_problem(scale, row.score, scale_hint=parsed.scale_hint)
        )
        if problem is not None:
            problems.add(row.line, problem)
            continue
        shown = _shown_output(problems, row, segment_id, context, options.system_map)
        if shown is None:
            continue
        source, system_id, run_id, text = shown
        source = shared.setdefault(source, source)
        bad_spans = bad_reference_spans_problem(row)
        if bad_spans is not None:
            problems.add(row.line, bad_spans)
            continue
        row = texts_unneutralised(row, context.sources.get(segment_id, ""), text)
        # A file without texts gives spans in its own offsets: they are placed on the text here.
        placed = spans_on_text(problems, row, text)
        if placed is None or not texts_match(
            problems,
            placed,
            segment_id,
            text,
            sources=context.sources,
            names=context.segment_names,
        ):
            continue
        if not spans_fit_text(problems, placed, text):
            continue
        task = row.hit or f"annotator {row.annotator}"
        resolved.append((placed, segment_id, source, system_id, run_id, text, task))
    return resolved


def _plan_system_rows(
    problems: Problems,
    resolved: list[ResolvedRow],
    tasks: dict[str, dict[Any, _PlannedItem]],
    judgments: dict[tuple[str, str, Any], _PlannedJudgment],
    seen: _Seen,
    default_criterion: str,
    shared: dict[Any, Any],
) -> None:
    """Pass 2: the SYSTEM rows, as real items, noting in ``seen`` where each was shown (the
    QC rows of pass 3 look their originals up there)."""
    for row, segment_id, source, system_id, run_id, text, task in resolved:
        if row.type != SYSTEM:
            continue
        key = row.item or shared.setdefault(("real", source), ("real", source))
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


def _plan_qc_rows(
    problems: Problems,
    resolved: list[ResolvedRow],
    tasks: dict[str, dict[Any, _PlannedItem]],
    judgments: dict[tuple[str, str, Any], _PlannedJudgment],
    seen: _Seen,
    default_criterion: str,
) -> int:
    """Pass 3: the REPEAT, BAD_REF and REF rows, each copying its original (or shown among
    the system outputs of a real screen); returns how many placeholder originals were added."""
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
            seen.add(("", wanted[1]), original, wanted=True)
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
    return placeholders


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
        slot = item.slot_of(kind, source) if item is not None else None
        if judgment is None or slot is None or judgment.value(slot, criterion) is None:
            return candidate
        n += 1
        candidate = (*key, n)


def _segment(
    problems: Problems, row: ImportRow, context: ImportContext, line_base: int
) -> int | None:
    value = row.segment
    if is_line_number(value):
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


def unknown_system_message(name: str, known: Iterable[str]) -> str:
    """Why a system name is refused, with the campaign's closest names as suggestions."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)
    # WMT's ids add a submission number (HuaweiTSC.5): a name the id starts with is a match.
    close += [k for k in known if name.startswith(f"{k}.") and k not in close]
    hint = (
        f"; did you mean {' or '.join(repr(c) for c in close)}? Map it with a system name map"
        if close
        else "; upload its outputs first, or map the name with a system name map"
    )
    return f"unknown system {name!r}{hint}"


def _shown_output(
    problems: Problems,
    row: ImportRow,
    segment_id: int,
    context: ImportContext,
    system_map: dict[str, str],
) -> tuple[OutputKey, int | None, int | None, str] | None:
    if row.type == REF:
        reference = context.references.get(segment_id)
        if reference is None:
            problems.add(row.line, "REF row for a segment without a reference")
            return None
        return ("r", reference[0]), None, None, reference[1]
    system_name = system_map.get(row.system, row.system)
    system_id = context.system_by_name.get(system_name)
    if system_id is None:
        problems.add(row.line, unknown_system_message(system_name, context.system_by_name))
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
    # A bad reference shows its degraded text: the row's, where the file (or its batches) has it.
    text = translation[1] if row.type != BAD_REF else row.output_text
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
    slot = item.slot_of(kind, source)
    if slot is None:
        slot = len(item.outputs)
        item.outputs = (
            *item.outputs,
            _PlannedOutput(kind, source, system_id, run_id, text, original),
        )
    return slot


class _Seen:
    """Where each (annotator, output) and (annotator, segment) was shown, ``""`` standing for
    any annotator: the first place in file order, overall and per HIT (a dict lookup, where a
    scan of every place made QC rows that fall back to other annotators quadratic). Only what
    a QC row of ``resolved`` will look up is kept: four places of every SYSTEM row held a
    third of a million-row import's memory."""

    def __init__(self, resolved: list[ResolvedRow]) -> None:
        self.first: dict[tuple[str, Any], tuple[str, Any, int]] = {}
        self.first_in_task: dict[tuple[str, Any, str], tuple[str, Any, int]] = {}
        self.wanted: set[tuple[str, Any]] = set()
        self.wanted_in_task: set[tuple[str, Any, str]] = set()
        for row, segment_id, source, *_, task in resolved:
            if row.type != SYSTEM:
                what = segment_id if row.type == REF else source
                self.wanted.update(((row.annotator, what), ("", what)))
                self.wanted_in_task.update(((row.annotator, what, task), ("", what, task)))

    def add(
        self, lookup: tuple[str, Any], place: tuple[str, Any, int], *, wanted: bool = False
    ) -> None:
        """Note ``place`` for ``lookup`` where a QC row will look for it (``wanted``: surely)."""
        if wanted or lookup in self.wanted:
            self.first.setdefault(lookup, place)
        in_task = (*lookup, place[0])
        if wanted or in_task in self.wanted_in_task:
            self.first_in_task.setdefault(in_task, place)

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
    problems: Problems,
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
    if judgment.value(slot, criterion) is not None:
        problems.add(
            row.line,
            f"a second {criterion} of the same output by annotator {row.annotator} "
            f"on the same screen (HIT {row.hit or '—'})",
        )
        return
    judgment.values = (*judgment.values, (_value_key(slot, criterion), row.score))
    if row.spans is not None:  # several rows' spans of one output are checked together
        spans = judgment.spans = judgment.spans or {}
        lines = judgment.span_lines = judgment.span_lines or {}
        spans[slot] = spans.get(slot, ()) + row.spans
        lines[slot] = lines.get(slot, ()) + (row.line,) * len(row.spans)


@lru_cache(maxsize=1024)
def _value_key(slot: int, criterion: str) -> tuple[int, str]:
    """A planned value's key, one tuple for every judgment that uses it."""
    return (slot, criterion)


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
