"""The annotation screen: the item an assignment is on, its shown outputs with their document
context, read in a few queries (and noting when the item was first shown)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import (
    Assignment,
    Campaign,
    Document,
    Item,
    ItemOutput,
    Judgment,
    ProtocolConfig,
    Reference,
    Segment,
    Task,
)
from annotation.protocols import Protocol
from annotation.tasking.services import assignment_resume
from annotation.tasking.source import TaskError
from evalsite.db import features
from evalsite.db.rawsql import Columns, chain, chain_rows, converted, hot_rows, model_field

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class JudgmentError(Exception):
    """A submit or page request that cannot be served; ``status`` is the HTTP status to answer."""

    def __init__(self, code: str, message: str, status: int, errors: list[str] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.errors = errors or []


def unsaved_closed_error() -> JudgmentError:
    """An answer sent to a closed campaign: not saved."""
    return JudgmentError(
        "closed",
        _(
            "This campaign is closed: it takes no more answers, so this one was not saved. "
            "Thank you for your work."
        ),
        409,
    )


def unsaved_hold_ended_error() -> JudgmentError:
    """An answer sent after the hold on its task ended: not saved."""
    return JudgmentError(
        "not_active",
        _(
            "Your hold on this task ended before this answer arrived, so it was not "
            "saved. Take the task again from My tasks to continue."
        ),
        409,
    )


@cache
def _assignment_query() -> tuple[str, list[Columns]]:
    columns = [
        Columns(Assignment, "a"),
        Columns(Task, "t"),
        Columns(ProtocolConfig, "c"),
        Columns(Campaign, "cp"),
    ]
    assignment, task, config, campaign = columns
    sql = f"""
        SELECT {assignment.sql}, {task.sql}, {config.sql}, {campaign.sql}
        FROM "{Assignment._meta.db_table}" a
        INNER JOIN "{Task._meta.db_table}" t ON a."task_id" = t."id"
        INNER JOIN "{ProtocolConfig._meta.db_table}" c ON t."config_id" = c."id"
        INNER JOIN "{Campaign._meta.db_table}" cp ON c."campaign_id" = cp."id"
        WHERE a."id" = %s AND a."annotator_id" = %s
    """
    return sql, columns


def assignment_for(assignment_id: uuid.UUID, annotator: User) -> Assignment:
    """The annotator's assignment with its task, config and campaign loaded (as
    ``select_related("task__config__campaign")``), or 404."""
    sql, columns = _assignment_query()
    db = transaction.get_connection()
    rows = hot_rows(
        db, sql, [model_field(Assignment, "id").get_db_prep_value(assignment_id, db), annotator.pk]
    )
    row = rows[0] if rows else None
    if row is None:
        raise JudgmentError("not_found", _("No such task."), 404)
    assignment, _rest = chain(row, columns, ["task", "config", "campaign"], db)
    return assignment


@cache
def _context_query(near: str | None) -> tuple[str, list[Columns]]:
    """The shown outputs of an item with their context. ``near`` ("source" or "reference", on
    PostgreSQL only) adds the neighbouring segments of the document within ±%s positions, their
    sources or first references, as two arrays in position order: one query instead of two."""
    output = Columns(ItemOutput, "o")
    item = Columns(Item, "i")
    segment = Columns(Segment, "s")
    document = Columns(Document, "d")
    near_select = near_join = ""
    if near is not None:
        segments, references = Segment._meta.db_table, Reference._meta.db_table
        text = 'r2."text"' if near == "reference" else 's2."source"'
        with_reference = (
            f' INNER JOIN "{references}" r2 ON r2."segment_id" = s2."id" AND r2."index" = 0'
            if near == "reference"
            else ""
        )
        near_select = ', near."at", near."text"'
        near_join = f"""
        LEFT JOIN LATERAL (
            SELECT array_agg(s2."position_in_document" ORDER BY s2."position_in_document") AS "at",
                array_agg({text} ORDER BY s2."position_in_document") AS "text"
            FROM "{segments}" s2{with_reference}
            WHERE s2."document_id" = s."document_id" AND NOT s2."id" = s."id"
                AND s2."position_in_document" BETWEEN s."position_in_document" - %s
                AND s."position_in_document" + %s
        ) near ON TRUE"""
    sql = f"""
        SELECT {output.sql}, {item.sql}, {segment.sql}, {document.sql},
            mine."answer", mine."revision", ref."text"{near_select}
        FROM "{ItemOutput._meta.db_table}" o
        INNER JOIN "{Item._meta.db_table}" i ON o."item_id" = i."id"
        LEFT OUTER JOIN "{Judgment._meta.db_table}" mine
            ON mine."item_id" = i."id" AND mine."annotator_id" = %s
        INNER JOIN "{Segment._meta.db_table}" s ON i."segment_id" = s."id"
        LEFT OUTER JOIN "{Reference._meta.db_table}" ref
            ON ref."segment_id" = s."id" AND ref."index" = %s
        INNER JOIN "{Document._meta.db_table}" d ON s."document_id" = d."id"{near_join}
        WHERE i."task_id" = %s AND i."position" = %s
    """
    return sql, [output, item, segment, document]


@dataclass(frozen=True)
class ScreenRead:
    """The read of one item's outputs with their context (``_context_query``, unordered): its
    SQL, its parameters, and what it joins of the neighbouring segments."""

    sql: str
    params: list[Any]
    near: str | None


def screen_read(
    *, config: ProtocolConfig, task_id: int, position: int, annotator: User
) -> ScreenRead:
    """The read of the item at ``position`` of a task as the config shows it, with the first
    reference as context. On PostgreSQL the neighbouring segments come with the outputs when the
    config shows context (one query); elsewhere ``near`` is None and a second query reads them."""
    near = None
    if config.context_segments and features.joins_lateral(transaction.get_connection()):
        near = "reference" if config.definition.mode(config.mode).shows_reference else "source"
    sql, _columns = _context_query(near)
    params: list[Any] = [annotator.pk, 0]
    if near is not None:
        params += [config.context_segments, config.context_segments]
    return ScreenRead(sql, [*params, task_id, position], near)


class ContextColumns(TypedDict):
    """What a ``_context_query`` row carries beside its output: the annotator's answer and its
    revision (None before the first answer), the reference shown as context and, with ``near``
    only, the neighbouring segments' positions and texts."""

    answer: dict[str, Any] | None
    answer_revision: int | None
    context_reference: str | None
    near_at: list[int]
    near_text: list[str]


# An output as ``context_rows`` gives it, its ``ContextColumns`` set as attributes.
ContextOutput: TypeAlias = "WithAnnotations[ItemOutput, ContextColumns]"


def context_rows(
    rows: Sequence[Sequence[Any]], near: str | None, db: BaseDatabaseWrapper
) -> list[ContextOutput]:
    """The outputs of ``_context_query`` rows (see ``_outputs_with_context``)."""
    _sql, columns = _context_query(near)
    extra = [
        model_field(Judgment, "answer"),
        model_field(Judgment, "revision"),
        model_field(Reference, "text"),
    ]
    result = []
    for output, rest in chain_rows(rows, columns, ["item", "segment", "document"], db):
        output.answer, output.answer_revision, output.context_reference = converted(
            rest[: len(extra)], extra, db
        )
        if near is not None:
            output.near_at, output.near_text = rest[len(extra)] or [], rest[len(extra) + 1] or []
        result.append(output)
    return result


def _outputs_with_context(read: ScreenRead) -> list[ContextOutput]:
    """The shown outputs of one item in screen order, each row carrying the item, segment,
    document, the annotator's current answer and the reference used as context — one query with
    LEFT JOINs. With ``read.near``, each output also carries the neighbouring segments:
    ``near_at`` and ``near_text``, in position order."""
    db = transaction.get_connection()
    rows = hot_rows(db, read.sql + ' ORDER BY o."position" ASC', read.params)
    return context_rows(rows, read.near, db)


@dataclass
class ScreenSegment:
    """One segment of a document screen: its item, the outputs shown for it, the segment as
    shown beside them (its source, or its first reference) and the annotator's answer."""

    item: Item
    outputs: list[ItemOutput]
    text: str
    answer: dict[str, Any] | None
    revision: int


@dataclass
class Screen:
    """Everything the annotation page shows: one item, or (``segments``, see
    ``annotation.judging.documents``) the items of a document screen, ``item`` the first."""

    assignment: Assignment
    protocol: Protocol
    item: Item
    outputs: Sequence[ItemOutput]
    position: int
    total: int
    done: int
    revising: bool
    answer: dict[str, Any] | None
    revision: int
    shows_source: bool
    shows_reference: bool
    reference: str | None
    context_before: list[str] = field(default_factory=list)
    context_after: list[str] = field(default_factory=list)
    segments: list[ScreenSegment] = field(default_factory=list)
    # A document screen whose config asks for a document-level score: its state
    # (annotation.judging.document_scores.DocumentScoreState); None otherwise.
    document_score: Any = None

    @property
    def end(self) -> int:
        """The position after this screen's last item (the next screen's first)."""
        return self.segments[-1].item.position + 1 if self.segments else self.position + 1


def annotation_screen(
    *,
    assignment_id: uuid.UUID,
    annotator: User,
    position: int | None = None,
    now: datetime | None = None,
) -> Screen:
    """The item at ``position`` (default: the current one) of an annotator's task. The first
    time the current item is shown is noted (for the server-side time per item); showing it
    again, or showing an earlier item for revision, keeps that time."""
    now = now or timezone.now()
    assignment = assignment_for(assignment_id, annotator)
    if assignment.task.config.campaign.status == Campaign.Status.CLOSED:
        # Nothing was sent yet: unlike a refused submit, no answer to call unsaved.
        raise JudgmentError(
            "closed",
            _("This campaign is closed: it takes no more answers. Thank you for your work."),
            409,
        )
    if assignment.status == Assignment.Status.EXPIRED or (
        assignment.status == Assignment.Status.ACTIVE
        and assignment.expires_at is not None
        and assignment.expires_at < now
    ):
        # Back after the hold ran out: return it to the pool and re-claim a slot if one is free
        # (extra queries only on this rare path).
        try:
            assignment = assignment_resume(assignment=assignment, now=now)
        except TaskError as exc:
            raise JudgmentError("not_active", str(exc), 409) from None
    task = assignment.task
    if assignment.status not in (Assignment.Status.ACTIVE, Assignment.Status.DONE):
        raise JudgmentError(
            "not_active",
            _("Your hold on this task has ended; take a task again from My tasks."),
            409,
        )
    current = assignment.items_done
    if position is None:
        if current >= task.size:
            raise JudgmentError("finished", _("You have finished this task."), 410)
        position = current
    if not 0 <= position < task.size or position > current:
        raise JudgmentError("not_current", _("You can open items you have reached only."), 404)
    return screen_at(
        assignment=assignment, annotator=annotator, position=position, now=now, mark_shown=True
    )


@cache
def _neighbours_query(references: bool) -> str:
    # No ORDER BY: the caller sorts.
    if references:
        select = f'SELECT s."position_in_document", r."text" FROM "{Reference._meta.db_table}" r'
        join = f' INNER JOIN "{Segment._meta.db_table}" s ON r."segment_id" = s."id"'
        where = ' AND r."index" = 0'
    else:
        select = f'SELECT s."position_in_document", s."source" FROM "{Segment._meta.db_table}" s'
        join = where = ""
    return (
        f'{select}{join} WHERE s."document_id" = %s'
        ' AND s."position_in_document" BETWEEN %s AND %s AND NOT s."id" = %s' + where
    )


def _neighbours(*, segment: Segment, low: int, high: int, references: bool) -> list[Any]:
    """(position in document, text) of the other segments of the document whose position is
    within ``low``..``high``: their first references (``references``) or their sources,
    unordered."""
    return hot_rows(
        transaction.get_connection(),
        _neighbours_query(references),
        [segment.document_id, low, high, segment.pk],
    )


def screen_at(
    *,
    assignment: Assignment,
    annotator: User,
    position: int,
    now: datetime,
    mark_shown: bool,
    outputs: list[ContextOutput] | None = None,
) -> Screen:
    """The screen of the item at ``position`` of an assignment already checked by the caller
    (with ``task__config`` loaded). ``mark_shown`` notes the current item as shown now unless
    it already is; a caller that noted it itself passes False. ``outputs``: the item's rows of
    ``_context_query`` when the caller already has them."""
    task = assignment.task
    config = task.config
    current = assignment.items_done
    protocol = config.definition
    mode = protocol.mode(config.mode)
    read = screen_read(config=config, task_id=task.pk, position=position, annotator=annotator)
    if outputs is None:
        outputs = _outputs_with_context(read)
    item = outputs[0].item
    segment = item.segment
    context_before: list[str] = []
    context_after: list[str] = []
    if config.context_segments:
        if read.near is not None:
            rows = list(zip(outputs[0].near_at, outputs[0].near_text, strict=True))
        else:
            low = segment.position_in_document - config.context_segments
            high = segment.position_in_document + config.context_segments
            rows = _neighbours(segment=segment, low=low, high=high, references=mode.shows_reference)
        for where, text in sorted(rows):
            (context_before if where < segment.position_in_document else context_after).append(text)
    if mark_shown and position == current and assignment.shown_item_id != item.pk:
        # The clock of the current item starts the first time it is shown: a reload does not
        # restart it, and opening an earlier item to revise it does not touch it.
        Assignment.objects.filter(pk=assignment.pk).exclude(shown_item=item).update(
            shown_item=item, shown_at=now
        )
    answer = outputs[0].answer
    return Screen(
        assignment=assignment,
        protocol=protocol,
        item=item,
        outputs=outputs,
        position=position,
        total=task.size,
        done=current,
        revising=answer is not None,
        answer=answer,
        revision=outputs[0].answer_revision or 0,
        shows_source=mode.shows_source,
        shows_reference=mode.shows_reference,
        reference=outputs[0].context_reference,
        context_before=context_before,
        context_after=context_after,
    )
