"""Document-level scores on document screens (a service and its selectors): when a protocol
config asks for one (``ProtocolConfig.document_score``), the annotator scores the whole document
(or window) of a document screen from 0 to 100 after its segments. It is stored as a
:class:`~annotation.models.DocumentJudgment`, one per annotator and screen, with the rules of a
segment's submit:

- a client-generated submission id: the same submit sent twice is stored once (a replay);
- a score is taken only for a screen the annotator has reached (its first item is at or before
  the task's current one), while the campaign is open and the hold on the task has not ended;
- a re-submit is a revision, accepted only when based on the latest one (else ``stale``); the
  earlier score goes to the history (:class:`~annotation.models.DocumentJudgmentRevision`);
- the screen's **last segment** is refused (409 ``document_score_missing``) until the document
  score is stored, so a finished screen always has one: the page sends the document score
  before the segments, an API client at any time before the screen's last segment.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.judging.screens import (
    JudgmentError,
    assignment_for,
    unsaved_closed_error,
    unsaved_hold_ended_error,
)
from annotation.models import (
    DOCUMENT_SCORE_MAX,
    DOCUMENT_SCORE_MIN,
    Assignment,
    Campaign,
    DocumentJudgment,
    DocumentJudgmentRevision,
    Item,
    ItemOutput,
    ProtocolConfig,
)
from annotation.signals import campaign_data_changed


@dataclass(frozen=True)
class DocumentScoreState:
    """What a document screen shows and sends of its document score: the screen's first item
    (the one a submit names), the positions of its first and last items in the task (from
    0), and the annotator's score so far (None) with its revision (0 when there is none)."""

    item_id: int
    first: int
    last: int
    score: int | None
    revision: int

    def as_json(self) -> dict[str, Any]:
        """As the annotator API shows it (positions from 1, as the items' ``position``)."""
        return {
            "item": self.item_id,
            "first": self.first + 1,
            "last": self.last + 1,
            "score": self.score,
            "revision": self.revision,
        }


def document_score_state(
    *, config: ProtocolConfig, item: Item, annotator_id: int
) -> DocumentScoreState | None:
    """The document score of the screen ``item`` is on, or None when its config asks for none
    (or the item is a screen of its own). Two queries."""
    if not config.asks_document_score or item.screen is None:
        return None
    items = list(
        Item.objects.filter(task_id=item.task_id, screen=item.screen)
        .order_by("position")
        .values_list("pk", "position")
    )
    first_id, first = items[0]
    found = (
        DocumentJudgment.objects.filter(annotator_id=annotator_id, screen_id=first_id)
        .values_list("score", "revision")
        .first()
    )
    score, revision = found if found is not None else (None, 0)
    return DocumentScoreState(first_id, first, items[-1][1], score, revision)


def document_score_missing(*, item: Item, config: ProtocolConfig, annotator_id: int) -> bool:
    """Whether a new answer to ``item`` must wait for its screen's document score: the config
    asks for one, the item is its screen's last and the annotator has not scored the screen.
    No query unless the config asks for document scores."""
    if not config.asks_document_score or item.screen is None:
        return False
    if Item.objects.filter(
        task_id=item.task_id, position=item.position + 1, screen=item.screen
    ).exists():
        return False
    return not DocumentJudgment.objects.filter(
        annotator_id=annotator_id, screen__task_id=item.task_id, screen__position=item.screen
    ).exists()


def document_score_missing_error() -> JudgmentError:
    return JudgmentError(
        "document_score_missing",
        _(
            "This screen also asks for a score of the whole document, which was not stored: "
            "send it before the screen's last segment. This answer was not saved."
        ),
        409,
    )


@dataclass(frozen=True)
class DocumentRecorded:
    judgment: DocumentJudgment
    created: bool
    replay: bool


def document_score_problem(score: Any) -> str | None:
    """Why ``score`` is not a document score (None when it is one): a whole number from 0 to
    100, as JSON gives it (``true`` is no number)."""
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or score != score  # NaN
        or score != int(score)
        or not DOCUMENT_SCORE_MIN <= score <= DOCUMENT_SCORE_MAX
    ):
        return _("The document score must be a whole number from %(lo)d to %(hi)d.") % {
            "lo": DOCUMENT_SCORE_MIN,
            "hi": DOCUMENT_SCORE_MAX,
        }
    return None


def document_score_record(
    *,
    assignment_id: uuid.UUID,
    annotator: User,
    item_id: int,
    revision_seen: int,
    submission_id: uuid.UUID,
    score: Any,
    now: datetime | None = None,
) -> DocumentRecorded:
    """Store an annotator's document score of the screen that item ``item_id`` is on (see the
    module docstring for the rules); a JudgmentError (404, 400 or 409) otherwise."""
    now = now or timezone.now()
    assignment = assignment_for(assignment_id, annotator)
    item = Item.objects.filter(pk=item_id, task_id=assignment.task_id).first()
    if item is None:
        raise JudgmentError("not_found", _("This item is not part of your task."), 404)
    config = assignment.task.config
    if not config.asks_document_score or item.screen is None:
        raise JudgmentError(
            "no_document_score", _("This screen asks for no document-level score."), 400
        )
    first = (
        ItemOutput.objects.filter(item__task_id=item.task_id, item__position=item.screen)
        .select_related("item__segment")
        .order_by("position")
        .first()
    )
    assert first is not None  # a screen's first item has its output
    existing = DocumentJudgment.objects.filter(annotator=annotator, screen=first.item).first()
    if existing is not None and _is_resent(existing, submission_id):
        return DocumentRecorded(existing, False, True)
    problem = document_score_problem(score)
    if problem:
        raise JudgmentError("invalid", problem, 400, [problem])
    _check_open(assignment, screen=item.screen)
    if existing is None:
        if revision_seen:
            raise _stale()
        return _score_new(assignment, annotator, first, submission_id, int(score), now)
    if revision_seen != existing.revision:
        raise _stale()
    return _score_revise(existing, submission_id, int(score), now, campaign_id=config.campaign_id)


def _is_resent(existing: DocumentJudgment, submission_id: uuid.UUID) -> bool:
    return (
        existing.submission_id == submission_id
        or DocumentJudgmentRevision.objects.filter(
            judgment=existing, submission_id=submission_id
        ).exists()
    )


def _check_open(assignment: Assignment, *, screen: int) -> None:
    """A JudgmentError unless the campaign is open, the hold has not ended and the annotator
    has reached the screen (whose first item is at ``screen``)."""
    if assignment.task.config.campaign.status == Campaign.Status.CLOSED:
        raise unsaved_closed_error()
    if assignment.status not in (Assignment.Status.ACTIVE, Assignment.Status.DONE):
        raise unsaved_hold_ended_error()
    if screen > assignment.items_done:
        raise JudgmentError("not_current", _("You can open items you have reached only."), 409)


def _score_new(
    assignment: Assignment,
    annotator: User,
    first: ItemOutput,
    submission_id: uuid.UUID,
    score: int,
    now: datetime,
) -> DocumentRecorded:
    shown_at = assignment.shown_at if assignment.shown_item_id == first.item_id else None
    judgment = DocumentJudgment(
        annotator=annotator,
        screen=first.item,
        assignment=assignment,
        document_id=first.item.segment.document_id,
        system_id=first.system_id,
        run_id=first.run_id,
        kind=first.item.kind,
        score=score,
        submission_id=submission_id,
        shown_at=shown_at,
        submitted_at=now,
        seconds=(now - shown_at).total_seconds() if shown_at else None,
    )
    try:
        with transaction.atomic():
            judgment.save(force_insert=True)
            campaign_data_changed.send(
                sender=DocumentJudgment, campaign_id=assignment.task.config.campaign_id
            )
    except IntegrityError:
        # Another submit for this screen won the race: the same one resent, or another window.
        stored = DocumentJudgment.objects.filter(annotator=annotator, screen=first.item).first()
        if stored is not None and stored.submission_id == submission_id:
            return DocumentRecorded(stored, False, True)
        raise _stale() from None
    return DocumentRecorded(judgment, True, False)


def _score_revise(
    existing: DocumentJudgment,
    submission_id: uuid.UUID,
    score: int,
    now: datetime,
    *,
    campaign_id: Any,
) -> DocumentRecorded:
    with transaction.atomic():
        bumped = DocumentJudgment.objects.filter(pk=existing.pk, revision=existing.revision).update(
            revision=existing.revision + 1,
            submission_id=submission_id,
            score=score,
            submitted_at=now,
        )
        if not bumped:
            raise _stale()
        DocumentJudgmentRevision.objects.create(
            judgment=existing,
            revision=existing.revision,
            submission_id=existing.submission_id,
            score=existing.score,
            shown_at=existing.shown_at,
            submitted_at=existing.submitted_at,
            seconds=existing.seconds,
        )
        campaign_data_changed.send(sender=DocumentJudgment, campaign_id=campaign_id)
    existing.revision += 1
    existing.submission_id = submission_id
    existing.score = score
    existing.submitted_at = now
    return DocumentRecorded(existing, False, False)


def _stale() -> JudgmentError:
    return JudgmentError(
        "stale",
        _(
            "This answer was changed in another window since you opened it. Your answer was "
            "not saved; reload the page to see the latest one."
        ),
        409,
    )
