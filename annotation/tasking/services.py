"""Services for annotation tasks: building them, assigning them (pull and push), expiring idle
holds, and invite links.

Concurrency is the database's job: a claim is a conditional UPDATE of the task's ``slots_taken``
(``… WHERE slots_taken < annotations_needed``), so two annotators can never take the last slot
twice, and a check constraint backs it up. Pulls of one annotator are serialised by locking their
user row, so a double click cannot hand out two tasks.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from itertools import chain

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import (
    Assignment,
    Campaign,
    CrowdLink,
    ProtocolConfig,
    Task,
)
from annotation.tasking.source import TaskError
from evalsite.db import features
from evalsite.db.rawsql import hot_rows, model_field

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Building


# --------------------------------------------------------------------------------------------
# Assignment


def assignments_expire(*, now: datetime | None = None) -> int:
    """Return the tasks of annotators idle past their hold to the pool; the number expired.

    Every pull and every visit to My tasks calls this first, so on PostgreSQL it is one
    statement (data-modifying ``WITH``), atomic by itself: one round trip where nothing has
    expired, instead of BEGIN, a SELECT and COMMIT. On either path, holds another call is
    expiring at this moment are passed over (SKIP LOCKED)."""
    now = now or timezone.now()
    db = transaction.get_connection()
    if features.writes_in_one_statement(db):
        rows = hot_rows(
            db,
            _expire_sql(),
            [Assignment.Status.EXPIRED, Assignment.Status.ACTIVE, now],
        )
        return int(rows[0][0])
    with transaction.atomic():
        rows = list(
            Assignment.objects.select_for_update(skip_locked=True)
            .filter(status=Assignment.Status.ACTIVE, expires_at__lt=now)
            .values_list("pk", "task_id")
        )
        if not rows:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(
            status=Assignment.Status.EXPIRED
        )
        for task_id, n in Counter(task_id for _, task_id in rows).items():
            Task.objects.filter(pk=task_id).update(slots_taken=F("slots_taken") - n)
    return len(rows)


@cache
def _expire_sql() -> str:
    """``assignments_expire``'s statement on PostgreSQL: mark the holds past their time
    expired and give their tasks the slots back; the number expired."""
    assignment, task = Assignment._meta.db_table, Task._meta.db_table
    status = model_field(Assignment, "status").column
    expires = model_field(Assignment, "expires_at").column
    task_id = model_field(Assignment, "task").column
    slots = model_field(Task, "slots_taken").column
    return f"""
        WITH expired AS (
            UPDATE "{assignment}" SET "{status}" = %s
            WHERE "id" IN (
                SELECT "id" FROM "{assignment}"
                WHERE "{status}" = %s AND "{expires}" < %s
                FOR UPDATE SKIP LOCKED
            )
            RETURNING "{task_id}"
        ), freed AS (
            UPDATE "{task}" t SET "{slots}" = t."{slots}" - e.n
            FROM (SELECT "{task_id}", count(*) AS n FROM expired GROUP BY "{task_id}") e
            WHERE t."id" = e."{task_id}"
        )
        SELECT count(*) FROM expired
    """


def _claim_slot(task_id: int) -> bool:
    """Take one slot of a task if one is free: a single conditional UPDATE."""
    return bool(
        Task.objects.filter(pk=task_id, slots_taken__lt=F("annotations_needed")).update(
            slots_taken=F("slots_taken") + 1
        )
    )


def _hold_until(config: ProtocolConfig, now: datetime) -> datetime:
    return now + timedelta(minutes=config.hold_minutes)


def task_assign_next(
    *, config: ProtocolConfig, annotator: User, now: datetime | None = None
) -> Assignment | None:
    """Pull: the annotator's task in progress, or the next task with a free slot (earlier tasks
    first, so tasks fill up and finish; a task another pull is claiming at this moment is passed
    over for the next one). ``None`` when nothing is left for them."""
    now = now or timezone.now()
    assignments_expire(now=now)
    with transaction.atomic():
        # One pull at a time per annotator: a double click must not take two tasks.
        get_user_model().objects.select_for_update().filter(pk=annotator.pk).first()
        current = (
            Assignment.objects.filter(
                task__config=config, annotator=annotator, status=Assignment.Status.ACTIVE
            )
            .select_related("task")
            .first()
        )
        if current is not None:
            return current
        mine = dict(
            Assignment.objects.filter(task__config=config, annotator=annotator).values_list(
                "task_id", "status"
            )
        )
        # Resume an expired task of one's own first, then fresh ones.
        resumable = [t for t, status in mine.items() if status == Assignment.Status.EXPIRED]
        free = (
            Task.objects.filter(config=config, slots_taken__lt=F("annotations_needed"))
            .exclude(pk__in=list(mine))
            .order_by("position")
        )
        candidates: Iterator[tuple[int, Task | None]] = chain(
            ((task_id, None) for task_id in sorted(resumable)), _free_tasks(free)
        )
        for task_id, task in candidates:
            if not _claim_slot(task_id):
                continue
            if task_id in mine:
                Assignment.objects.filter(task_id=task_id, annotator=annotator).update(
                    status=Assignment.Status.ACTIVE,
                    claimed_at=now,
                    expires_at=_hold_until(config, now),
                )
                return Assignment.objects.select_related("task").get(
                    task_id=task_id, annotator=annotator
                )
            assignment = Assignment.objects.create(
                task_id=task_id,
                annotator=annotator,
                origin=Assignment.Origin.PULL,
                claimed_at=now,
                expires_at=_hold_until(config, now),
            )
            if task is not None:
                task.slots_taken += 1
                assignment.task = task
            return assignment
    return None


def _free_tasks(free: QuerySet[Task]) -> Iterator[tuple[int, Task | None]]:
    """The tasks of ``free`` to try to claim, in order, as (id, the task when loaded), read only
    as far as the caller goes: first the first one no other pull is claiming right now (SKIP
    LOCKED; this pull then holds its row, so its claim cannot fail), so annotators pulling at
    once each get a task at once instead of queueing on one row, each waiting for the pull
    before it to commit and then finding the slot gone. Then, if there is none, the first 50
    in order, locked or not: waiting for the pulls claiming them (one may roll back) rather than
    answering that nothing is left while a task may still be free."""
    for task in free.select_for_update(skip_locked=True)[:1]:
        yield task.pk, task
    for task_id in free.values_list("pk", flat=True)[:50]:
        yield task_id, None


def task_assign(*, task: Task, annotator: User, now: datetime | None = None) -> Assignment:
    """Push: an organizer gives a task to an annotator (no expiry). Holds that have expired
    are returned to the pool first, so their slots can be given; an annotator whose own hold on
    the task expired (or who released it) gets that assignment back, with their answers."""
    now = now or timezone.now()
    assignments_expire(now=now)
    with transaction.atomic():
        existing = (
            Assignment.objects.select_for_update().filter(task=task, annotator=annotator).first()
        )
        if existing is not None and existing.status in (
            Assignment.Status.ACTIVE,
            Assignment.Status.DONE,
        ):
            raise TaskError(_("%(user)s already has this task.") % {"user": annotator})
        if not _claim_slot(task.pk):
            raise TaskError(_("This task already has all the annotators it needs."))
        task.config.campaign.annotators.add(annotator)
        if existing is not None:
            existing.status = Assignment.Status.ACTIVE
            existing.origin = Assignment.Origin.PUSH
            existing.claimed_at = now
            existing.expires_at = None
            existing.save(update_fields=["status", "origin", "claimed_at", "expires_at"])
            return existing
        return Assignment.objects.create(
            task=task, annotator=annotator, origin=Assignment.Origin.PUSH, claimed_at=now
        )


def assignment_resume(*, assignment: Assignment, now: datetime | None = None) -> Assignment:
    """An annotator comes back to a task whose hold expired (or is past its time): they get it
    back if the task still has a free slot, with a fresh hold; otherwise a ``TaskError`` that
    says why. The judgments made so far are kept either way."""
    now = now or timezone.now()
    assignments_expire(now=now)
    with transaction.atomic():
        row = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("task__config__campaign")
            .get(pk=assignment.pk)
        )
        if row.status in (Assignment.Status.ACTIVE, Assignment.Status.DONE):
            return row
        if row.status != Assignment.Status.EXPIRED:
            raise TaskError(_("You gave this task back; take a task again from My tasks."))
        if not _claim_slot(row.task_id):
            raise TaskError(
                _(
                    "Your hold on this task expired and other annotators have taken all its "
                    "places. Your answers so far are kept; take another task from My tasks."
                )
            )
        row.status = Assignment.Status.ACTIVE
        row.expires_at = _hold_until(row.task.config, now)
        row.save(update_fields=["status", "expires_at"])
    logger.info("assignment %s resumed after its hold expired", row.pk)
    return row


def assignment_release(*, assignment: Assignment) -> None:
    """Give an unfinished task back to the pool (the judgments made so far stay)."""
    with transaction.atomic():
        updated = Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.ACTIVE
        ).update(status=Assignment.Status.RELEASED)
        if updated:
            Task.objects.filter(pk=assignment.task_id).update(slots_taken=F("slots_taken") - 1)


@dataclass(frozen=True)
class OpenConfig:
    config: ProtocolConfig
    free_tasks: int


def roster_withheld(*, now: datetime | None = None) -> Q:
    """The protocol configs whose tasks are the crowd's alone: a crowd link serves them (not
    withdrawn, not expired) and their campaign does not offer them to its own annotators
    (``Campaign.crowd_tasks_to_roster``). The crowd's entrance refuses their takes to anyone
    but the crowd's workers; an organizer may still assign such a task to anyone."""
    served = CrowdLink.objects.filter(
        config=OuterRef("pk"),
        invite__revoked=False,
        invite__expires_at__gt=now or timezone.now(),
    )
    return Q(Exists(served)) & Q(campaign__crowd_tasks_to_roster=False)


def configs_for_annotator(*, annotator: User) -> list[OpenConfig]:
    """Protocol configs of the active campaigns the user annotates (but not as a crowd
    worker, and not the crowd's alone: ``roster_withheld``), with how many tasks they could
    still take: a free slot, and no assignment of theirs or only one whose hold expired
    (``task_assign_next`` resumes those). Call ``assignments_expire`` first for fresh
    counts."""
    configs = list(
        ProtocolConfig.objects.filter(
            campaign__annotators=annotator, campaign__status=Campaign.Status.ACTIVE
        )
        # A crowd worker's campaign gives them their study's one task, through its link.
        .exclude(campaign__crowd_workers__user=annotator)
        .exclude(roster_withheld())
        .select_related("campaign")
        .order_by("campaign__name", "name")
    )
    result = []
    for config in configs:
        taken = Assignment.objects.filter(task=OuterRef("pk"), annotator=annotator).exclude(
            status=Assignment.Status.EXPIRED
        )
        free = (
            Task.objects.filter(config=config, slots_taken__lt=F("annotations_needed"))
            .exclude(Exists(taken))
            .count()
        )
        result.append(OpenConfig(config, free))
    return result


# --------------------------------------------------------------------------------------------
# Invites
