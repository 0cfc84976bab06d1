"""Whole-document rows of an import (Appraise's ESA/MQM export marks them in its ninth field):
each becomes a :class:`~annotation.models.DocumentJudgment` of the document screen that the
imported config's task shows for that document and system, when the import asks for document
scores (``ImportOptions.document_score``: the imported config then has document screens with a
document-level score); otherwise the file is refused, naming the first such row.

A task's items are laid out as document screens: the items of one document shown in one
system's (and run's) output, of one QC kind, are consecutive in segment order, the screen's
position that of its first item (``Item.screen``), as the task builder lays them out. A
document row whose screen lacks some of the document's segments (the file left their rows out)
gets real items without judgments for them, as a QC row without its original does.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils.translation import gettext as _

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.plan import (
    ImportContext,
    ImportOptions,
    ImportPlan,
    _item,
    _slot,
    unknown_system_message,
)
from annotation.judgment_import.planned import _PlannedItem
from annotation.judgment_import.rows import (
    KIND_OF_TYPE,
    REF,
    ImportRow,
    ParsedJudgments,
    Problems,
)
from annotation.models import Campaign, DocumentJudgment, ItemKind, Segment
from annotation.models.documents import DOCUMENT_SCORE_MAX, DOCUMENT_SCORE_MIN
from annotation.protocols import PROTOCOLS
from evalsite.db.bulk import insert_rows


@dataclass(frozen=True)
class PlannedDocument:
    """A whole-document row resolved: its task, the keys of its screen's items in document
    order, and what the document judgment stores."""

    row: ImportRow
    task: str
    items: tuple[Any, ...]
    document_id: int
    system_id: int | None
    run_id: int | None
    kind: str
    score: int


def documents_refused(parsed: ParsedJudgments, options: ImportOptions) -> None:
    """Refuse whole-document rows unless the import asks for document scores on a kind that
    shows document screens; the problem names the first such row and what to set up."""
    if not parsed.documents:
        return
    first = parsed.documents[0].line
    if not options.document_score:
        message = _(
            "a whole-document item: its score is the document's, not a segment's. Ask for a "
            "document-level score (the import's “document-level score” option, "
            "--document-score) to import it as a document judgment on document screens, or "
            "leave these rows out of the file (%(n)d such rows)"
        ) % {"n": len(parsed.documents)}
    elif not PROTOCOLS[options.protocol].document_screens_allowed:
        message = _(
            "a whole-document item, but %(protocol)s has no document screens: import the file "
            "under a kind that has them (direct assessment, ESA, MQM)"
        ) % {"protocol": options.protocol}
    else:
        return
    raise UploadError([UploadProblem(parsed.file, first, message)])


def documents_plan(
    campaign: Campaign,
    parsed: ParsedJudgments,
    context: ImportContext,
    options: ImportOptions,
    plan: ImportPlan,
) -> list[PlannedDocument]:
    """Every whole-document row matched with its screen's items (missing real items added to
    the plan); every problem names its row and is raised after the pass."""
    if not parsed.documents:
        return []
    problems = Problems(parsed.file)
    documents = _documents(campaign, {row.document for row in parsed.documents})
    answered = {(j.annotator, j.task) for j in plan.judgments.values()}
    planned: list[PlannedDocument] = []
    screens_taken: set[tuple[str, str, tuple[Any, ...]]] = set()
    for row in parsed.documents:
        found = _resolved(problems, row, documents, context, options)
        if found is None:
            continue
        document_id, segments, system_id, run_id, kind = found
        task = row.hit or f"annotator {row.annotator}"
        if (row.annotator, task) not in answered:
            problems.add(
                row.line,
                f"annotator {row.annotator} has no segment rows in HIT {row.hit or '—'}: a "
                "document score is stored with the assignment of its segments' judgments",
            )
            continue
        items = _screen_items(plan, task, segments, system_id, run_id, kind, context)
        if not items:
            problems.add(
                row.line,
                f"no {kind} segment rows of document {row.document} for "
                f"{row.system or 'the reference'} in HIT {row.hit or '—'}: its screen is unknown",
            )
            continue
        if (row.annotator, task, items) in screens_taken:
            problems.add(
                row.line,
                f"a second document score of document {row.document} for {row.system} by "
                f"annotator {row.annotator} (HIT {row.hit or '—'})",
            )
            continue
        screens_taken.add((row.annotator, task, items))
        planned.append(
            PlannedDocument(
                row, task, items, document_id, system_id, run_id, kind, round(row.score)
            )
        )
    problems.raise_if_any()
    return planned


def _documents(campaign: Campaign, names: set[str]) -> dict[str, tuple[int, list[int]]]:
    """The campaign's documents of these ids: (document id, its segment ids in order)."""
    found: dict[str, tuple[int, list[int]]] = {}
    for pk, document_id, name in (
        Segment.objects.filter(campaign=campaign, document__external_id__in=names)
        .order_by("position")
        .values_list("id", "document_id", "document__external_id")
    ):
        found.setdefault(name, (document_id, []))[1].append(pk)
    return found


def _resolved(
    problems: Problems,
    row: ImportRow,
    documents: dict[str, tuple[int, list[int]]],
    context: ImportContext,
    options: ImportOptions,
) -> tuple[int, list[int], int | None, int | None, str] | None:
    """The row's document (id, segments), system, run and QC kind; None with a problem added."""
    if not DOCUMENT_SCORE_MIN <= row.score <= DOCUMENT_SCORE_MAX:
        problems.add(row.line, f"document score {row.score:g} is not between 0 and 100")
        return None
    if row.document not in documents:
        problems.add(row.line, f"unknown document {row.document!r}: not in this campaign")
        return None
    document_id, segments = documents[row.document]
    kind = KIND_OF_TYPE[row.type]
    if row.type == REF:
        return document_id, segments, None, None, kind
    name = options.system_map.get(row.system, row.system)
    system_id = context.system_by_name.get(name)
    if system_id is None:
        problems.add(row.line, unknown_system_message(name, context.system_by_name))
        return None
    return document_id, segments, system_id, context.first_run.get(system_id), kind


def _screen_items(
    plan: ImportPlan,
    task: str,
    segments: list[int],
    system_id: int | None,
    run_id: int | None,
    kind: str,
    context: ImportContext,
) -> tuple[Any, ...]:
    """The keys of the task's items of this document, system and kind, in document order; a
    real screen gets items without judgments for the segments the file left out."""
    shown: dict[int, Any] = {}
    for key, item in plan.tasks.get(task, {}).items():
        if item.kind == kind and _shows(item.outputs[0], system_id, run_id):
            shown.setdefault(item.segment_id, key)
    if kind == ItemKind.REAL and shown and run_id is not None:
        for segment_id in segments:
            translation = context.translations.get((run_id, segment_id))
            if segment_id in shown or translation is None:
                continue
            source = ("t", translation[0])
            key = ("placeholder", source)
            item = _item(plan.tasks, task, key, segment_id)
            _slot(item, ItemKind.REAL, source, system_id, run_id, translation[1])
            shown[segment_id] = key
    return tuple(shown[s] for s in segments if s in shown)


def _shows(output: Any, system_id: int | None, run_id: int | None) -> bool:
    if system_id is None:
        return bool(output.source[0] == "r")
    return bool(output.system_id == system_id and output.run_id == run_id)


def document_screens(
    plan: ImportPlan, segment_position: dict[int, int], segment_document: dict[int, int]
) -> dict[tuple[str, Any], int]:
    """Lay every task's items out as document screens (reordering ``plan.tasks`` in place):
    returns each (task, item key)'s ``Item.screen``, the position of its screen's first item."""
    screens: dict[tuple[str, Any], int] = {}
    for name, items in plan.tasks.items():
        groups: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
        for key, item in items.items():
            first = item.outputs[0] if item.outputs else None
            group = (
                segment_document.get(item.segment_id),
                item.kind,
                first.source[0] if first else "",
                first.system_id if first else None,
                first.run_id if first else None,
            )
            groups[group].append(key)
        ordered: dict[Any, Any] = {}
        for keys in groups.values():
            keys.sort(key=lambda k: segment_position.get(items[k].segment_id, 0))
            start = len(ordered)
            for key in keys:
                ordered[key] = items[key]
                screens[(name, key)] = start
        plan.tasks[name] = ordered
    return screens


def documents_insert(
    planned: list[PlannedDocument],
    tasks: dict[str, dict[Any, _PlannedItem]],
    user_id: dict[str, Any],
    assignment_id: dict[tuple[str, str], uuid.UUID],
    now: datetime,
) -> int:
    """Store the document judgments (revision 1: an import has no earlier scores)."""
    rows = []
    for doc in planned:
        row = doc.row
        rows.append(
            (
                user_id[row.annotator],
                tasks[doc.task][doc.items[0]].id,
                assignment_id[(row.annotator, doc.task)],
                doc.document_id,
                doc.system_id,
                doc.run_id,
                doc.kind,
                doc.score,
                1,
                uuid.uuid4(),
                _when(row.started),
                _when(row.submitted) or now,
                row.seconds,
            )
        )
    insert_rows(
        DocumentJudgment,
        (
            "annotator",
            "screen",
            "assignment",
            "document",
            "system",
            "run",
            "kind",
            "score",
            "revision",
            "submission_id",
            "shown_at",
            "submitted_at",
            "seconds",
        ),
        rows,
    )
    return len(rows)


def _when(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)
