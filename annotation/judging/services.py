"""The annotation screen (a selector that also notes when an item was shown) and the recording of
judgments (a service).

Both run a fixed number of SQL queries whatever the size of the task: the item, its outputs, the
annotator's earlier answer and the reference come in one query; the progress comes from counters
on the task and the assignment.

Rules for a submit:
- at most one judgment per (annotator, item) — a database constraint; a re-submit of an answered
  item is a revision (the earlier answer goes to the history table);
- a submit carries a client-generated UUID: the same submit sent twice stores one judgment;
- a closed campaign takes no answers (new or revised) and shows no items;
- a new answer is accepted only for the current item (the first one not yet answered); a revision
  only when it is based on the latest revision — otherwise an explicit error, never a silent drop;
- the time per item is measured on the server, from when the item was first shown to its first
  answer; reloads, visits to earlier items and later revisions do not change it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Field
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.judging.document_scores import (
    document_score_missing,
    document_score_missing_error,
)
from annotation.judging.screens import (
    ContextOutput,
    JudgmentError,
    Screen,
    assignment_for,
    screen_at,
    screen_read,
    unsaved_closed_error,
    unsaved_hold_ended_error,
)
from annotation.judging.store import answer_insert, span_instances
from annotation.models import (
    Assignment,
    Campaign,
    Item,
    ItemOutput,
    Judgment,
    JudgmentRevision,
    JudgmentSpan,
    JudgmentValue,
    ProtocolConfig,
    Task,
)
from annotation.protocols.base import SpanRow
from annotation.signals import campaign_data_changed
from annotation.tasking.pull import pull_mode, task_grow
from evalsite.db.rawsql import Columns, chain_rows, converted, hot_rows, model_field

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

# The hot reads are written in SQL (evalsite/db/rawsql.py says why); rows become model instances as
# select_related makes them.


@dataclass(frozen=True)
class Recorded:
    judgment: Judgment
    created: bool
    replay: bool
    done: int
    total: int
    finished: bool
    # With ``with_next``: the task's current item after this submit (None when finished).
    next: Screen | None = None


# The assignment's state and the annotator's judgment, as ``submission_outputs`` names them.
_HELD = {
    "a_status": "status",
    "a_done": "items_done",
    "a_origin": "origin",
    "a_shown_item": "shown_item",
    "a_shown_at": "shown_at",
}
_MINE = {
    "j_id": "id",
    "j_revision": "revision",
    "j_submission": "submission_id",
    "j_answer": "answer",
    "j_shown_at": "shown_at",
    "j_submitted_at": "submitted_at",
    "j_seconds": "seconds",
}


class SubmissionColumns(TypedDict):
    """What ``submission_outputs`` sets on each output. The judgment's columns are all None
    when the annotator has not judged the item (``j_id`` says which), hence Any."""

    a_status: str
    a_done: int
    a_origin: str
    a_shown_item: int | None
    a_shown_at: datetime | None
    j_id: Any
    j_revision: Any
    j_submission: Any
    j_answer: Any
    j_shown_at: Any
    j_submitted_at: Any
    j_seconds: Any
    campaign_status: str


SubmissionOutput: TypeAlias = "WithAnnotations[ItemOutput, SubmissionColumns]"


@cache
def _submission_query() -> tuple[str, list[Columns], list[str], list[Field[Any, Any]]]:
    output = Columns(ItemOutput, "o")
    item = Columns(Item, "i")
    task = Columns(Task, "t")
    config = Columns(ProtocolConfig, "c")
    held = {name: model_field(Assignment, f) for name, f in _HELD.items()}
    mine = {name: model_field(Judgment, f) for name, f in _MINE.items()}
    campaign_status = model_field(Campaign, "status")
    state = ", ".join(
        [f'held."{f.column}"' for f in held.values()]
        + [f'mine."{f.column}"' for f in mine.values()]
        + [f'campaign."{campaign_status.column}"']
    )
    sql = f"""
        SELECT {output.sql}, {item.sql}, {task.sql}, {config.sql}, {state}
        FROM "{ItemOutput._meta.db_table}" o
        INNER JOIN "{Item._meta.db_table}" i ON o."item_id" = i."id"
        INNER JOIN "{Task._meta.db_table}" t ON i."task_id" = t."id"
        INNER JOIN "{Assignment._meta.db_table}" held
            ON held."task_id" = t."id" AND held."annotator_id" = %s AND held."id" = %s
        LEFT OUTER JOIN "{Judgment._meta.db_table}" mine
            ON mine."item_id" = i."id" AND mine."annotator_id" = %s
        INNER JOIN "{ProtocolConfig._meta.db_table}" c ON t."config_id" = c."id"
        INNER JOIN "{Campaign._meta.db_table}" campaign ON c."campaign_id" = campaign."id"
        WHERE o."item_id" = %s
        ORDER BY o."position" ASC
    """
    names = [*held, *mine, "campaign_status"]
    return (
        sql,
        [output, item, task, config],
        names,
        [*held.values(), *mine.values(), campaign_status],
    )


def submission_outputs(
    *, assignment_id: uuid.UUID, annotator: User, item_id: int
) -> list[SubmissionOutput]:
    """The shown outputs of an item of the annotator's task, in screen order, each carrying the
    assignment's state (``a_*``), the annotator's judgment of the item (``j_*``) and the
    campaign's status (``campaign_status``) — one query,
    no lock (every decision taken from them is guarded by a conditional UPDATE). Empty when
    the item is not part of that task. The submit serializer and ``judgment_record`` share it."""
    sql, columns, names, fields = _submission_query()
    db = transaction.get_connection()
    assignment_key = model_field(Assignment, "id").get_db_prep_value(assignment_id, db)
    rows = hot_rows(db, sql, [annotator.pk, assignment_key, annotator.pk, item_id])
    result = []
    for output, rest in chain_rows(rows, columns, ["item", "task", "config"], db):
        for name, value in zip(names, converted(rest, fields, db), strict=True):
            setattr(output, name, value)
        result.append(output)
    return result


def judgment_record(
    *,
    assignment_id: uuid.UUID,
    annotator: User,
    item_id: int,
    revision_seen: int,
    submission_id: uuid.UUID,
    answer: dict[str, Any],
    now: datetime | None = None,
    outputs: list[SubmissionOutput] | None = None,
    with_next: bool = False,
    checked: CheckedAnswer | None = None,
) -> Recorded:
    """Store an annotator's answer to an item (see the module docstring for the rules).

    Concurrency without a read lock: a new answer advances the assignment with a conditional
    UPDATE (``… WHERE items_done = <this item's position>``) and a revision bumps the judgment
    with one (``… WHERE revision = <the revision it was based on>``). Of two racing submits
    exactly one matches; the other is answered as a replay (same UUID) or as stale.
    ``outputs`` (from ``submission_outputs``) saves the query when the caller already has them,
    and ``checked`` (``answer_check`` of ``answer`` against those outputs) the second check.

    ``with_next`` also returns the screen of the task's current item after the submit
    (``Recorded.next``), noted as shown now as a GET of it would: a client shows it at once
    instead of asking for it. None when the task is finished, or when the hold has ended (a
    submit never re-claims a task; reading the current item says what to do).
    """
    now = now or timezone.now()
    recorded, advanced, next_outputs = judgment_store(
        assignment_id=assignment_id,
        annotator=annotator,
        item_id=item_id,
        revision_seen=revision_seen,
        submission_id=submission_id,
        answer=answer,
        now=now,
        outputs=outputs,
        with_next=with_next,
        checked=checked,
    )
    if not with_next or recorded.finished:
        return recorded
    if advanced is not None:
        # A new answer: the UPDATE that advanced the task already noted the next item as shown.
        screen: Screen | None = screen_at(
            assignment=advanced,
            annotator=annotator,
            position=advanced.items_done,
            now=now,
            mark_shown=False,
            outputs=next_outputs,
        )
    else:
        screen = _current_screen(assignment_id=assignment_id, annotator=annotator, now=now)
    return replace(recorded, next=screen)


def _current_screen(*, assignment_id: uuid.UUID, annotator: User, now: datetime) -> Screen | None:
    """The current item's screen as a GET of it shows it, or None where that GET would answer
    an error or re-claim an ended hold."""
    try:
        assignment = assignment_for(assignment_id, annotator)
    except JudgmentError:
        return None
    if (
        assignment.task.config.campaign.status == Campaign.Status.CLOSED
        or assignment.status not in (Assignment.Status.ACTIVE, Assignment.Status.DONE)
        or (
            assignment.status == Assignment.Status.ACTIVE
            and assignment.expires_at is not None
            and assignment.expires_at < now
        )
        or assignment.items_done >= assignment.task.size
    ):
        return None
    return screen_at(
        assignment=assignment,
        annotator=annotator,
        position=assignment.items_done,
        now=now,
        mark_shown=True,
    )


def judgment_store(
    *,
    assignment_id: uuid.UUID,
    annotator: User,
    item_id: int,
    revision_seen: int,
    submission_id: uuid.UUID,
    answer: dict[str, Any],
    now: datetime,
    outputs: list[SubmissionOutput] | None,
    with_next: bool,
    checked: CheckedAnswer | None = None,
) -> tuple[Recorded, Assignment | None, list[ContextOutput] | None]:
    """``judgment_record`` without the next screen; with a new answer and ``with_next``, also
    the advanced assignment as stored (its task and config loaded, the next item noted) and
    the next item's outputs when the write read them too (else None)."""
    if outputs is None:
        outputs = submission_outputs(
            assignment_id=assignment_id, annotator=annotator, item_id=item_id
        )
    if not outputs:
        raise JudgmentError("not_found", _("This item is not part of your task."), 404)
    first = outputs[0]
    if _is_resent(first, revision_seen=revision_seen, submission_id=submission_id):
        # The same submit again (a double click, a retried request): already stored.
        return (
            _replay(first.j_id, first.a_done, first.item.task.size, first.j_revision),
            None,
            None,
        )
    _check_accepted(first, revision_seen=revision_seen)
    if first.j_id is None and document_score_missing(
        item=first.item, config=first.item.task.config, annotator_id=annotator.pk
    ):
        raise document_score_missing_error()
    task = first.item.task
    if first.j_id is None and first.item.position + 1 >= task.size and pull_mode(task.config):
        # The last item built of a pull-mode task: its next batch is chosen now, so that this
        # answer does not finish the task (unless the allocation has stopped).
        task.size = task_grow(task_id=task.pk, position=first.item.position)
    if checked is None or checked.output_ids != tuple(o.pk for o in outputs):
        checked = answer_check(first.item.task.config, answer, outputs)
    accepted = _Accepted(
        first=first,
        assignment_id=assignment_id,
        annotator=annotator,
        submission_id=submission_id,
        now=now,
        normalised=checked.normalised,
        rows=checked.rows,
        spans=checked.spans,
    )
    if first.j_id is None:
        return _answer_new(accepted, with_next=with_next)
    return _answer_revise(accepted), None, None


@dataclass(frozen=True)
class _Accepted:
    """A submit that passed the checks, its answer valid."""

    # The item's first shown output, with the state ``submission_outputs`` notes on it.
    first: SubmissionOutput
    assignment_id: uuid.UUID
    annotator: User
    submission_id: uuid.UUID
    now: datetime
    # The answer as ``CheckedAnswer`` has it.
    normalised: dict[str, dict[str, Any]]
    rows: list[tuple[int, str, float]]
    spans: list[SpanRow]


def _is_resent(first: SubmissionOutput, *, revision_seen: int, submission_id: uuid.UUID) -> bool:
    """Whether this submit is stored already: as the judgment's latest revision, or as an
    earlier one (asked only when the submit is not based on the latest)."""
    return first.j_id is not None and (
        first.j_submission == submission_id
        or (
            revision_seen != first.j_revision
            and JudgmentRevision.objects.filter(
                judgment_id=first.j_id, submission_id=submission_id
            ).exists()
        )
    )


def _check_accepted(first: SubmissionOutput, *, revision_seen: int) -> None:
    """A JudgmentError unless the campaign is open, the hold on the task has not ended, and
    the answer is new for the current item or a revision based on the latest one."""
    if first.campaign_status == Campaign.Status.CLOSED:
        raise unsaved_closed_error()
    if first.a_status not in (Assignment.Status.ACTIVE, Assignment.Status.DONE):
        raise unsaved_hold_ended_error()
    if first.j_id is None and first.item.position != first.a_done:
        raise _not_current()
    if first.j_id is not None and revision_seen != first.j_revision:
        raise _stale()


@dataclass(frozen=True)
class CheckedAnswer:
    """An answer that passed its protocol's checks against the outputs ``output_ids`` (in
    screen order): as stored (by output id, a string, with an error-span kind's spans), its
    values as (output id, criterion, value) rows and its error spans as rows (with the length
    of the shown text)."""

    output_ids: tuple[int, ...]
    normalised: dict[str, dict[str, Any]]
    rows: list[tuple[int, str, float]]
    spans: list[SpanRow]


def answer_check(
    config: ProtocolConfig, answer: dict[str, Any], outputs: Sequence[ItemOutput]
) -> CheckedAnswer:
    """``answer`` checked against the shown ``outputs`` as the protocol asks; a JudgmentError
    (``invalid``, every problem in its ``errors``) otherwise. The submit API runs it once and
    hands the result to ``judgment_record``."""
    definition = config.definition
    ids = tuple(o.pk for o in outputs)
    texts = {o.pk: o.text for o in outputs}
    values, errors = definition.validate(answer, ids, texts=texts)
    if errors:
        raise JudgmentError("invalid", errors[0], 400, errors)
    normalised = definition.stored_answer(values, ids, answer)
    rows = [(oid, criterion, value) for (oid, criterion), value in values.items()]
    spans = [
        (o, start, end, len(texts[o]), severity, category)
        for o, start, end, _length, severity, category in definition.span_rows(normalised)
    ]
    return CheckedAnswer(ids, normalised, rows, spans)


def _answer_new(
    accepted: _Accepted, *, with_next: bool
) -> tuple[Recorded, Assignment | None, list[ContextOutput] | None]:
    """Store a new answer and advance the assignment past its item (``answer_insert``); with
    ``with_next``, also the assignment as stored and the next item's outputs, as
    ``judgment_store`` returns them."""
    first, annotator, now = accepted.first, accepted.annotator, accepted.now
    item = first.item
    task = item.task
    config = task.config
    shown_at = first.a_shown_at if first.a_shown_item == item.pk else None
    seconds = (now - shown_at).total_seconds() if shown_at else None
    done = item.position + 1
    finished = done >= task.size
    update, next_position = _advance_update(
        accepted, config, done=done, finished=finished, with_next=with_next
    )
    judgment = Judgment(
        item=item,
        annotator=annotator,
        assignment_id=accepted.assignment_id,
        submission_id=accepted.submission_id,
        answer=accepted.normalised,
        shown_at=shown_at,
        submitted_at=now,
        seconds=seconds,
    )
    # The next item's outputs come back from the same statement where it can.
    show = None
    if next_position is not None:
        show = screen_read(
            config=config, task_id=task.pk, position=next_position, annotator=annotator
        )
    stored, next_outputs = answer_insert(
        judgment=judgment,
        rows=accepted.rows,
        items_done=item.position,
        update=update,
        next_position=next_position,
        show=show,
        spans=accepted.spans,
    )
    if not stored:
        # Another submit for this item won the race (or the hold ended meanwhile).
        existing = Judgment.objects.filter(annotator=annotator, item=item).first()
        if existing is not None and existing.submission_id == accepted.submission_id:
            return _replay(existing.pk, done, task.size, existing.revision), None, None
        raise _not_current()
    campaign_data_changed.send(sender=Judgment, campaign_id=config.campaign_id)
    held = None
    if with_next and not finished:
        held = Assignment(
            pk=accepted.assignment_id,
            task=task,
            annotator_id=annotator.pk,
            status=Assignment.Status.ACTIVE,
            origin=first.a_origin,
            items_done=done,
            expires_at=update.get("expires_at"),
            shown_at=now,
        )
    return Recorded(judgment, True, False, done, task.size, finished), held, next_outputs


def _advance_update(
    accepted: _Accepted, config: ProtocolConfig, *, done: int, finished: bool, with_next: bool
) -> tuple[dict[str, Any], int | None]:
    """The assignment's fields a new answer sets, and the position of the next item when it is
    noted as shown (else None)."""
    now = accepted.now
    update: dict[str, Any] = {"items_done": done}
    if finished:
        update |= {"status": Assignment.Status.DONE, "completed_at": now}
    elif accepted.first.a_origin == Assignment.Origin.PULL:
        update["expires_at"] = now + timedelta(minutes=config.hold_minutes)
    next_position = None
    if with_next and not finished:
        # The answer's acknowledgement carries the next item, shown at once: its clock
        # starts now, noted in this UPDATE rather than in one more.
        next_position = done
        update["shown_at"] = now
    else:
        update["shown_item"] = None
    return update, next_position


def _answer_revise(accepted: _Accepted) -> Recorded:
    """Store a revision of the annotator's judgment of the item if it still is at the revision
    the answer was based on (else a stale error); the replaced answer goes to the history."""
    first, now = accepted.first, accepted.now
    item = first.item
    task = item.task
    with transaction.atomic():
        # A revision keeps the item's timing: the time to the first answer.
        bumped = Judgment.objects.filter(pk=first.j_id, revision=first.j_revision).update(
            revision=first.j_revision + 1,
            submission_id=accepted.submission_id,
            answer=accepted.normalised,
            submitted_at=now,
        )
        if not bumped:
            raise _stale()
        JudgmentRevision.objects.create(
            judgment_id=first.j_id,
            revision=first.j_revision,
            submission_id=first.j_submission,
            values=first.j_answer,
            shown_at=first.j_shown_at,
            submitted_at=first.j_submitted_at,
            seconds=first.j_seconds,
        )
        JudgmentValue.objects.bulk_create(
            [
                JudgmentValue(judgment_id=first.j_id, output_id=o, criterion=c, value=v)
                for o, c, v in accepted.rows
            ],
            update_conflicts=True,
            unique_fields=["judgment", "output", "criterion"],
            update_fields=["value"],
        )
        if task.config.definition.marks_spans:
            # The earlier spans stay in the revision's answer.
            JudgmentSpan.objects.filter(judgment_id=first.j_id).delete()
            _spans_store(first.j_id, accepted.spans)
        campaign_data_changed.send(sender=Judgment, campaign_id=task.config.campaign_id)
        revised = Judgment(
            pk=first.j_id,
            item=item,
            annotator=accepted.annotator,
            assignment_id=accepted.assignment_id,
            revision=first.j_revision + 1,
            submission_id=accepted.submission_id,
            answer=accepted.normalised,
            shown_at=first.j_shown_at,
            submitted_at=now,
            seconds=first.j_seconds,
        )
    finished = first.a_done >= task.size
    return Recorded(revised, False, False, first.a_done, task.size, finished)


def _spans_store(judgment_id: int, spans: list[SpanRow]) -> None:
    JudgmentSpan.objects.bulk_create(span_instances(judgment_id, spans))


def _replay(judgment_id: int, done: int, total: int, revision: int) -> Recorded:
    # The judgment's latest revision: the one a client's next revision is based on.
    return Recorded(
        Judgment(pk=judgment_id, revision=revision), False, True, done, total, done >= total
    )


def _not_current() -> JudgmentError:
    return JudgmentError(
        "not_current",
        _(
            "This item is no longer the current one (it was answered in another window, or "
            "you skipped ahead). Your answer was not saved; reload the page to continue "
            "where you are."
        ),
        409,
    )


def closed_message() -> str:
    """Why a closed campaign hands out no task."""
    return _("This campaign is closed: it hands out no more tasks.")


def _stale() -> JudgmentError:
    return JudgmentError(
        "stale",
        _(
            "This answer was changed in another window since you opened it. Your answer was "
            "not saved; reload the page to see the latest one."
        ),
        409,
    )
