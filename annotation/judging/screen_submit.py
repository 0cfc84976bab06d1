"""A whole screen's answers in one submit (a service): every segment of a document screen, and
its document-level score, stored together or not at all.

The rules of a submit (``annotation.judging.services``) hold for each segment, in document
order: a new answer only for the task's current item, a revision only when based on the latest,
a resent submit (the same submission ids) stored once. On top of them:

- all or nothing: one transaction; the first refusal (or any invalid answer) rolls back every
  answer of the request, and the refusal names the segment;
- concurrency: the assignment's row is locked first (``SELECT … FOR UPDATE``), so two submits of
  one screen (two windows, a resend) run one after the other, and the second is answered as a
  replay or as stale; single-item submits of the same task wait for it too (their conditional
  ``UPDATE`` of the assignment);
- every answer is checked before anything is written, so an invalid request names every
  segment whose answer is wrong, not only the first;
- the screen's document score (when its config asks for one) is stored first, as a separate
  document-score submit would be before the screen's last segment;
- time per item: the first new answer of the screen gets the time since the screen was shown;
  each later one is noted as shown when the one before it was stored (0 s), as sequential
  submits noted them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.judging.document_scores import DocumentRecorded, document_score_record
from annotation.judging.gates import gate_check
from annotation.judging.screens import JudgmentError
from annotation.judging.services import (
    CheckedAnswer,
    Recorded,
    answer_check,
    judgment_store,
    submission_outputs,
)
from annotation.models import Assignment, Item

# The most items one screen submit takes (a document screen of the longest talks has ~100).
MAX_ITEMS = 500


@dataclass(frozen=True)
class ItemAnswer:
    """One segment's answer as a screen submit carries it (the fields of a single submit)."""

    item_id: int
    revision: int
    submission_id: uuid.UUID
    answer: dict[str, Any]


@dataclass(frozen=True)
class ScoreAnswer:
    """The screen's document-level score as a screen submit carries it."""

    revision: int
    submission_id: uuid.UUID
    score: Any


@dataclass(frozen=True)
class ScreenRecorded:
    """What a screen submit stored: per item (in the request's order) and the document score,
    and the task's progress after it."""

    items: list[tuple[int, Recorded]]
    document: DocumentRecorded | None
    done: int
    total: int

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def created(self) -> bool:
        """Whether anything new was stored (else: replays and unchanged revisions only)."""
        return any(r.created for _i, r in self.items) or bool(
            self.document and self.document.created
        )


class ScreenError(JudgmentError):
    """A refused screen submit, naming the item (and its segment, from 1 in its document) that
    was refused; ``None`` when the whole request was."""

    def __init__(self, exc: JudgmentError, item: Item | None) -> None:
        message = exc.message if item is None else f"{_segment_label(item)}: {exc.message}"
        super().__init__(exc.code, message, exc.status, exc.errors)
        self.item_id = None if item is None else item.pk
        self.segment = None if item is None else item.segment.position_in_document + 1


def _segment_label(item: Item) -> str:
    return _("Segment %(n)s") % {"n": item.segment.position_in_document + 1}


def screen_record(
    *,
    assignment_id: uuid.UUID,
    annotator: User,
    screen_item_id: int,
    answers: list[ItemAnswer],
    document_score: ScoreAnswer | None = None,
    now: datetime | None = None,
) -> ScreenRecorded:
    """Store the answers of one screen (see the module docstring): the screen is the one item
    ``screen_item_id`` of the annotator's task is on; ``answers`` are of its items, any order.
    A :class:`ScreenError` (400, 404 or 409) with nothing stored otherwise."""
    now = now or timezone.now()
    with transaction.atomic():
        task_id = _locked_task(assignment_id, annotator)
        items = _screen_items(task_id, screen_item_id, answers)
        ordered = sorted(answers, key=lambda a: items[a.item_id].position)
        checked = _all_checked(assignment_id, annotator, ordered, items)
        document = None
        if document_score is not None:
            try:
                document = document_score_record(
                    assignment_id=assignment_id,
                    annotator=annotator,
                    item_id=screen_item_id,
                    revision_seen=document_score.revision,
                    submission_id=document_score.submission_id,
                    score=document_score.score,
                    now=now,
                )
            except JudgmentError as exc:
                raise ScreenError(exc, None) from None
        stored = []
        for answer in ordered:
            item = items[answer.item_id]
            try:
                recorded, _held, _outputs = judgment_store(
                    assignment_id=assignment_id,
                    annotator=annotator,
                    item_id=answer.item_id,
                    revision_seen=answer.revision,
                    submission_id=answer.submission_id,
                    answer=answer.answer,
                    now=now,
                    outputs=None,
                    # Notes the next item as shown now: its time starts when this one is stored.
                    with_next=True,
                    checked=checked[answer.item_id],
                )
            except JudgmentError as exc:
                raise ScreenError(exc, item) from None
            stored.append((answer.item_id, recorded))
        done, total = (
            Assignment.objects.filter(pk=assignment_id)
            .values_list("items_done", "task__size")
            .get()
        )
    by_request = {item_id: i for i, item_id in enumerate(a.item_id for a in answers)}
    stored.sort(key=lambda pair: by_request[pair[0]])
    return ScreenRecorded(stored, document, done, total)


def _locked_task(assignment_id: uuid.UUID, annotator: User) -> int:
    """The task of the annotator's assignment, its row locked until the transaction ends."""
    task_id = (
        Assignment.objects.select_for_update()
        .filter(pk=assignment_id, annotator=annotator)
        .values_list("task_id", flat=True)
        .first()
    )
    if task_id is None:
        raise ScreenError(JudgmentError("not_found", _("No such task."), 404), None)
    return task_id


def _screen_items(task_id: int, screen_item_id: int, answers: list[ItemAnswer]) -> dict[int, Item]:
    """The answered items by id, checked: part of the task, each once, all on the screen of
    item ``screen_item_id``."""
    ids = [a.item_id for a in answers]
    if len(set(ids)) != len(ids):
        raise _invalid(_("Each item may be answered once in a screen submit."))
    found = Item.objects.filter(task_id=task_id, pk__in=[screen_item_id, *ids]).select_related(
        "segment"
    )
    items = {item.pk: item for item in found}
    if screen_item_id not in items or any(i not in items for i in ids):
        raise ScreenError(
            JudgmentError("not_found", _("This item is not part of your task."), 404), None
        )
    screen = items[screen_item_id]
    for item_id in ids:
        item = items[item_id]
        if (screen.screen is None and item.pk != screen.pk) or item.screen != screen.screen:
            raise _invalid(_("Every answered item must be on the same screen."))
    return items


def _invalid(message: str) -> ScreenError:
    return ScreenError(JudgmentError("invalid", message, 400, [message]), None)


def _all_checked(
    assignment_id: uuid.UUID,
    annotator: User,
    answers: list[ItemAnswer],
    items: dict[int, Item],
) -> dict[int, CheckedAnswer]:
    """Every answer checked against its item's shown outputs, before anything is stored: a
    ScreenError naming the first wrong segment, with every wrong segment's problems in its
    ``errors``; or the refusal of a gate (the tutorial)."""
    checked: dict[int, CheckedAnswer] = {}
    problems: list[tuple[Item, JudgmentError]] = []
    for answer in answers:
        outputs = submission_outputs(
            assignment_id=assignment_id, annotator=annotator, item_id=answer.item_id
        )
        config = outputs[0].item.task.config
        if not checked and not problems:
            # No real item before the protocol's tutorial lets the annotator through.
            gate_check(config=config, annotator=annotator)
        try:
            checked[answer.item_id] = answer_check(config, answer.answer, outputs)
        except JudgmentError as exc:
            problems.append((items[answer.item_id], exc))
    if problems:
        item, first = problems[0]
        errors = [
            f"{_segment_label(i)}: {problem}" for i, exc in problems for problem in exc.errors
        ]
        raise ScreenError(JudgmentError(first.code, first.errors[0], 400, errors), item)
    return checked
