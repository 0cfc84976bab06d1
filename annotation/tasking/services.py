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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from itertools import chain
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core import signing
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.crypto import get_random_string
from django.utils.text import slugify
from django.utils.translation import gettext as _

from annotation.models import (
    Assignment,
    Campaign,
    Invite,
    Item,
    ItemKind,
    ItemOutput,
    ProtocolConfig,
    Reference,
    Segment,
    System,
    Task,
    Translation,
)
from annotation.tasking.plan import (
    BAD_REFERENCE,
    QcMix,
    balanced_screens,
    is_character_based,
    make_bad_reference,
    plan_tasks,
    reference_units,
)
from evalsite.db.rawsql import hot_rows, model_field

logger = logging.getLogger(__name__)

BATCH = 2000
INVITE_SALT = "evalsite.invite"
# A link's signature carries when it was made (the setup page makes it). However long its invite
# is valid in the database (at most a year through the page), a link older than this is refused:
# an expiry changed by hand in the admin does not revive a leaked link of long ago.
INVITE_TOKEN_MAX_AGE = timedelta(days=366)


class TaskError(Exception):
    """A task operation that cannot be done, with a message for the user."""


# --------------------------------------------------------------------------------------------
# Building


@dataclass(frozen=True)
class BuildResult:
    tasks: int
    items: int
    outputs: int


# Told how a build gets on: its stage, and rows written of the rows to write (0 and 0 before
# the writing starts).
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def tasks_build(*, config: ProtocolConfig) -> BuildResult:
    """Build (or rebuild, while nobody has started) the tasks of a protocol config.

    Deterministic from ``config.seed``: the same data and settings give the same tasks.
    """
    with transaction.atomic():
        return tasks_build_locked(config_lock_for_build(config.pk), _no_progress)


def config_lock_for_build(config_id: int) -> ProtocolConfig:
    """The config, its row locked until the caller's transaction ends: one build of a config
    at a time, and no assignment slips in while it is rebuilt."""
    return ProtocolConfig.objects.select_for_update().select_related("campaign").get(pk=config_id)


def tasks_build_locked(config: ProtocolConfig, progress: Progress) -> BuildResult:
    """:func:`tasks_build` inside the caller's transaction, with the config from
    :func:`config_lock_for_build`; ``progress`` is told the stage and the rows written."""
    if Assignment.objects.filter(task__config=config).exists():
        raise TaskError(_("Annotators have started on these tasks; they cannot be rebuilt."))
    progress("removing", 0, 0)
    Task.objects.filter(config=config).delete()
    return _build(config, progress)


def _build(config: ProtocolConfig, progress: Progress) -> BuildResult:
    progress("reading", 0, 0)
    campaign = config.campaign
    protocol = config.definition
    mode = protocol.mode(config.mode)
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    systems = list(
        System.objects.filter(campaign=campaign).prefetch_related("runs").order_by("name")
    )
    if not segments or not systems:
        raise TaskError(_("Upload the source text and at least one system before building tasks."))
    references: dict[int, dict[int, Reference]] = {}
    for ref in Reference.objects.filter(segment__campaign=campaign):
        references.setdefault(ref.index, {})[ref.segment_id] = ref
    if mode.shows_reference:
        if 0 not in references:
            raise TaskError(_("This mode shows a reference, but the campaign has none."))
        # Every screen shows its segment's first reference: one without it cannot be judged.
        missing = [s for s in segments if s.pk not in references[0]]
        if missing:
            first = missing[0]
            raise TaskError(
                _(
                    "This mode shows a reference, but %(missing)s of %(total)s segments have "
                    "none (the first: document %(document)s, segment %(segment)s). Upload "
                    "their references, or pick a mode that shows the source."
                )
                % {
                    "missing": len(missing),
                    "total": len(segments),
                    "document": first.document.external_id,
                    "segment": first.external_id,
                }
            )
    runs = [list(system.runs.all()) for system in systems]
    translations = {
        (run_id, segment_id): (pk, text)
        for pk, run_id, segment_id, text in Translation.objects.filter(
            run__system__campaign=campaign
        ).values_list("pk", "run_id", "segment_id", "text")
    }
    # The reference shown as an output must differ from the one shown as context.
    output_ref_index = 1 if mode.shows_reference else 0
    with_reference_items = output_ref_index in references
    donors = (
        [references[0][s.pk].text if s.pk in references[0] else "" for s in segments]
        if 0 in references
        else [translations[(runs[0][0].pk, s.pk)][1] for s in segments]
    )
    character_based = is_character_based(campaign.target_language)
    donor_units = reference_units(donors, character_based=character_based)

    progress("planning", 0, 0)
    rng = np.random.default_rng(config.seed)
    k = protocol.outputs_per_screen(config.outputs_per_screen)
    screens = balanced_screens(len(segments), len(systems), k, rng)
    mix = QcMix(config.qc_bad_reference, config.qc_repeat, config.qc_reference)
    plans = plan_tasks(
        screens,
        items_per_task=config.items_per_task,
        mix=mix,
        rng=rng,
        with_reference_items=with_reference_items,
    )
    with_text = {i for i, text in enumerate(donors) if text.strip()}
    if any(
        item.kind == BAD_REFERENCE and not with_text - {item.screen.segment}
        for plan in plans
        for item in plan.items
    ):
        # A bad reference borrows a phrase from another segment's text.
        raise TaskError(
            _(
                "Bad-reference items borrow a phrase from another segment's %(donor)s, but "
                "fewer than two segments have one. Upload more segments, or set the "
                "bad-reference items to 0."
            )
            % {"donor": _("reference") if 0 in references else _("translation by the first system")}
        )

    # Every item and every output shown on it is a row.
    total = sum(1 + len(item.screen.systems) for plan in plans for item in plan.items)
    written = 0

    def write(model: type[Item] | type[ItemOutput], rows: list[Any]) -> None:
        nonlocal written
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            model.objects.bulk_create(batch)
            written += len(batch)
            progress("writing", written, total)

    progress("writing", 0, total)
    tasks = Task.objects.bulk_create(
        [
            Task(
                config=config,
                position=n,
                size=len(plan.items),
                annotations_needed=config.annotations_per_task,
            )
            for n, plan in enumerate(plans)
        ]
    )
    # Real items first (QC items point to them), then the copies.
    real_items: dict[tuple[int, int], Item] = {}
    rows = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, item in enumerate(plan.items):
            if item.kind == ItemKind.REAL:
                row = Item(
                    task=task,
                    position=position,
                    kind=item.kind,
                    segment=segments[item.screen.segment],
                )
                real_items[(task.pk, position)] = row
                rows.append(row)
    write(Item, rows)
    real_outputs: dict[int, list[ItemOutput]] = {}
    outputs = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, planned in enumerate(plan.items):
            if planned.kind != ItemKind.REAL:
                continue
            item = real_items[(task.pk, position)]
            segment = segments[planned.screen.segment]
            shown = []
            for slot, system_index in enumerate(planned.screen.systems):
                system_runs = runs[system_index]
                run = system_runs[(planned.screen.segment + system_index) % len(system_runs)]
                translation_id, text = translations[(run.pk, segment.pk)]
                shown.append(
                    ItemOutput(
                        item=item,
                        position=slot,
                        kind=ItemKind.REAL,
                        translation_id=translation_id,
                        system=systems[system_index],
                        run=run,
                        text=text,
                    )
                )
            real_outputs[item.pk] = shown
            outputs.extend(shown)
    write(ItemOutput, outputs)

    copies = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, planned in enumerate(plan.items):
            if planned.kind != ItemKind.REAL:
                assert planned.original is not None
                original = real_items[(task.pk, planned.original)]
                copies.append(
                    Item(
                        task=task,
                        position=position,
                        kind=planned.kind,
                        segment=original.segment,
                        original=original,
                    )
                )
    write(Item, copies)
    copy_outputs = []
    for copy in copies:
        originals = real_outputs[copy.original_id]
        reference_slot = (
            int(rng.integers(len(originals))) if copy.kind == ItemKind.REFERENCE else -1
        )
        # Ranked outputs are judged against each other: a bad-reference screen of a ranking
        # protocol degrades one output and repeats the others, so the degraded one can be ranked
        # below them. Scored outputs are judged one by one, so every output is degraded.
        bad_slot = (
            int(rng.integers(len(originals)))
            if copy.kind == ItemKind.BAD_REFERENCE and protocol.ranks and len(originals) > 1
            else None
        )
        for output in originals:
            common = {
                "item": copy,
                "position": output.position,
                "original": output,
                "translation_id": output.translation_id,
                "system": output.system,
                "run": output.run,
            }
            if copy.kind == ItemKind.BAD_REFERENCE and bad_slot in (None, output.position):
                bad = make_bad_reference(
                    output.text,
                    segment=copy.segment.position,
                    references=donors,
                    rng=rng,
                    character_based=character_based,
                    donor_units=donor_units,
                )
                copy_outputs.append(
                    ItemOutput(kind=ItemKind.BAD_REFERENCE, text=bad.text, **common)
                )
            elif output.position == reference_slot:
                reference = references[output_ref_index][copy.segment_id]
                copy_outputs.append(
                    ItemOutput(
                        item=copy,
                        position=output.position,
                        kind=ItemKind.REFERENCE,
                        reference=reference,
                        text=reference.text,
                    )
                )
            else:
                copy_outputs.append(ItemOutput(kind=ItemKind.REPEAT, text=output.text, **common))
    write(ItemOutput, copy_outputs)
    logger.info("built %d tasks for %s", len(tasks), config)
    return BuildResult(
        tasks=len(tasks),
        items=len(real_items) + len(copies),
        outputs=len(outputs) + len(copy_outputs),
    )


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
    if db.vendor == "postgresql":
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
    *, config: ProtocolConfig, annotator: AbstractBaseUser, now: datetime | None = None
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


def task_assign(
    *, task: Task, annotator: AbstractBaseUser, now: datetime | None = None
) -> Assignment:
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


def configs_for_annotator(*, annotator: AbstractBaseUser) -> list[OpenConfig]:
    """Protocol configs of the active campaigns the user annotates, with how many tasks they
    could still take: a free slot, and no assignment of theirs or only one whose hold expired
    (``task_assign_next`` resumes those). Call ``assignments_expire`` first for fresh counts."""
    configs = list(
        ProtocolConfig.objects.filter(
            campaign__annotators=annotator, campaign__status=Campaign.Status.ACTIVE
        )
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


def invite_create(
    *, campaign: Campaign, label: str, created_by: AbstractBaseUser, days: int = 30
) -> Invite:
    return Invite.objects.create(
        campaign=campaign,
        label=label,
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )


def invite_token(*, invite: Invite) -> str:
    """The signed token of an invite link (its validity is checked on use)."""
    return signing.dumps({"invite": invite.pk}, salt=INVITE_SALT, compress=True)


class InviteError(Exception):
    pass


def invite_from_token(*, token: str) -> Invite:
    """The invite a token names, if the signature is valid and the invite usable."""
    try:
        data = signing.loads(token, salt=INVITE_SALT, max_age=INVITE_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise InviteError(
            _("This invite link has expired; ask the organizer for a new one.")
        ) from None
    except signing.BadSignature:
        raise InviteError(_("This invite link is not valid.")) from None
    invite = Invite.objects.select_related("campaign", "user").filter(pk=data.get("invite")).first()
    if invite is None or invite.revoked:
        raise InviteError(_("This invite link has been withdrawn."))
    if invite.expires_at < timezone.now():
        raise InviteError(_("This invite link has expired; ask the organizer for a new one."))
    return invite


def invite_login_allowed(*, user: AbstractBaseUser) -> bool:
    """Whether an invite link may log someone in as ``user``: only an annotator account that a
    link created itself (no usable password, no staff rights, organizes nothing). Anything else
    would let whoever holds the link become that person."""
    if user.has_usable_password() or not user.is_active:
        return False
    if getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        return False
    if user.has_perm("annotation.add_campaign"):
        return False
    return not Campaign.objects.filter(Q(owner=user) | Q(organizers=user)).exists()


def invite_accept(*, invite: Invite, current_user: AbstractBaseUser | None) -> AbstractBaseUser:
    """Make someone an annotator of the invite's campaign and return the account to use.

    A logged-in user stays themselves: they join the campaign, the use is recorded, but the link
    is not bound to them (it never becomes a way to log in as them). Without a login, the link
    logs in the annotator account it created on its first anonymous use, creating it now if
    needed. ``invite.user`` is only ever that account.
    """
    users = get_user_model()
    with transaction.atomic():
        invite = (
            Invite.objects.select_for_update(of=("self",)).select_related("user").get(pk=invite.pk)
        )
        if invite.used_at is None:
            invite.used_at = timezone.now()
            invite.save(update_fields=["used_at"])
        if current_user is not None and current_user.is_authenticated:
            user = current_user
        elif invite.user is not None:
            if not invite_login_allowed(user=invite.user):
                raise InviteError(
                    _(
                        "This invite link belongs to an account that must log in with its "
                        "password; ask the organizer for a new link."
                    )
                )
            user = invite.user
        else:
            base = slugify(invite.label)[:40] or "annotator"
            user = users.objects.create_user(username=f"{base}-{get_random_string(6).lower()}")
            user.set_unusable_password()
            user.save(update_fields=["password"])
            invite.user = user
            invite.save(update_fields=["user"])
        invite.campaign.annotators.add(user)
    return user
