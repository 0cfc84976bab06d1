"""Crowd links and their workers: creating a link, binding an account to a worker id, giving
the worker their task, and recording the completion code at its end."""

from __future__ import annotations

from urllib.parse import quote

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, get_random_string
from django.utils.translation import gettext as _

from annotation.crowd.qc import completion_passes, crowd_qc_compute
from annotation.models import (
    Assignment,
    Campaign,
    CrowdLink,
    CrowdPlatform,
    CrowdWorker,
    Invite,
    ProtocolConfig,
)
from annotation.tasking.invites import InviteError, invite_create, invite_login_allowed
from annotation.tasking.services import roster_withheld, task_assign_next

# Per-worker codes: no 0/O or 1/I, which people misread when they copy a code by hand.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10

# Where Prolific takes a participant back; {code} becomes their completion code.
PROLIFIC_RETURN_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def crowd_link_create(
    *,
    campaign: Campaign,
    created_by: User,
    config: ProtocolConfig,
    platform: str,
    id_parameter: str,
    rule: str,
    pass_code: str = "",
    fail_code: str = "",
    return_url: str = "",
    label: str = "",
    days: int = 30,
) -> CrowdLink:
    """An invite link for a crowd study: one link for every worker, each bound by their id."""
    if config.campaign_id != campaign.pk:
        raise ValueError("the protocol belongs to another campaign")
    with transaction.atomic():
        invite = invite_create(campaign=campaign, label=label, created_by=created_by, days=days)
        return CrowdLink.objects.create(
            invite=invite,
            platform=platform,
            id_parameter=id_parameter,
            config=config,
            rule=rule,
            pass_code=pass_code,
            fail_code=fail_code,
            return_url=return_url,
        )


def crowd_link_protocol_set(*, link: CrowdLink, config: ProtocolConfig) -> CrowdLink:
    """Serve ``config`` (a protocol of the link's campaign) through ``link`` from now on: its
    study URL stays the one the platform has. Workers who started a task of the protocol
    before finish that task; new ones get tasks of ``config``."""
    if config.campaign_id != link.invite.campaign_id:
        raise ValueError("the protocol belongs to another campaign")
    CrowdLink.objects.filter(pk=link.pk).update(config=config)
    link.config = config
    return link


def crowd_roster_offer_set(*, campaign: Campaign, offer: bool) -> None:
    """Whether the campaign's own annotators may take tasks of the protocols its crowd links
    serve (``annotation.tasking.services.roster_withheld``)."""
    Campaign.objects.filter(pk=campaign.pk).update(crowd_tasks_to_roster=offer)
    campaign.crowd_tasks_to_roster = offer


def _username(platform: str, worker_id: str) -> str:
    # The same worker in two campaigns has two accounts: a random suffix keeps them apart.
    return f"{platform}-{worker_id[:64]}-{get_random_string(6).lower()}"


def crowd_worker_enter(*, invite: Invite, worker_id: str) -> CrowdWorker:
    """The worker of ``worker_id`` on the link's platform in the invite's campaign, with an
    account (no password) made for them on their first visit; they are an annotator of the
    campaign. ``worker_id`` must already be validated (forms.WorkerIdForm)."""
    link: CrowdLink = invite.crowd
    campaign = invite.campaign
    with transaction.atomic():
        worker = (
            CrowdWorker.objects.select_related("user")
            .filter(campaign=campaign, platform=link.platform, worker_id=worker_id)
            .first()
        )
        if worker is None:
            try:
                # The unique constraint decides between two first visits at the same moment.
                with transaction.atomic():
                    user = get_user_model().objects.create_user(
                        username=_username(link.platform, worker_id)
                    )
                    user.set_unusable_password()
                    user.save(update_fields=["password"])
                    worker = CrowdWorker.objects.create(
                        campaign=campaign,
                        link=link,
                        platform=link.platform,
                        worker_id=worker_id,
                        user=user,
                    )
            except IntegrityError:
                worker = CrowdWorker.objects.select_related("user").get(
                    campaign=campaign, platform=link.platform, worker_id=worker_id
                )
        elif not invite_login_allowed(user=worker.user):
            raise InviteError(_("This worker id belongs to an account that must log in."))
        if worker.link_id != link.pk and worker.completed_at is None:
            worker.link = link
            worker.save(update_fields=["link"])
        if invite.used_at is None:
            Invite.objects.filter(pk=invite.pk, used_at__isnull=True).update(used_at=timezone.now())
        campaign.annotators.add(worker.user)
    return worker


def crowd_task_start(*, worker: CrowdWorker) -> Assignment | None:
    """The worker's task: the one they finished (they are done), the one in progress (of the
    protocol the link served when they started it), or the next free task of the link's
    protocol. None when no task is left for them."""
    if worker.assignment_id is not None:
        held = (
            Assignment.objects.filter(
                pk=worker.assignment_id,
                status__in=[Assignment.Status.DONE, Assignment.Status.ACTIVE],
            )
            .select_related("task")
            .first()
        )
        if held is not None and (
            held.status == Assignment.Status.DONE
            or worker.link is None
            or held.task.config_id != worker.link.config_id
        ):
            return held
    if worker.link is None:
        return None
    assignment = task_assign_next(config=worker.link.config, annotator=worker.user)
    if assignment is not None and assignment.pk != worker.assignment_id:
        CrowdWorker.objects.filter(pk=worker.pk).update(assignment=assignment)
        worker.assignment = assignment
    return assignment


def crowd_take(*, user: User, config: ProtocolConfig) -> tuple[bool, Assignment | None]:
    """A take of ``config`` by a crowd worker of its campaign: (True, their one task — the
    one they finished, the one in progress or the next free one, as their study link gives
    it — or None when ``config`` is not their link's protocol or no task is left). (False,
    None) for anyone else: the usual take applies. A crowd worker does one task of their
    study, whatever they open afterwards; a campaign they were added to otherwise is theirs
    to take tasks of as any annotator's."""
    worker = (
        CrowdWorker.objects.filter(user_id=user.pk, campaign_id=config.campaign_id)
        .select_related("link__config")
        .first()
    )
    if worker is None:
        return False, None
    if worker.link is None:
        return True, None
    # The task they started before the link changed protocol is theirs to finish.
    if worker.link.config_id != config.pk and (
        worker.assignment_id is None
        or not Assignment.objects.filter(pk=worker.assignment_id, task__config=config).exists()
    ):
        return True, None
    return True, crowd_task_start(worker=worker)


def crowd_one_task_message() -> str:
    """Why a crowd worker gets no other task of their study's campaign."""
    return _(
        "You came through a crowd study: it gives you one task, which you reach through the "
        "study's link. Return to the platform when you have finished it."
    )


def crowd_tasks_withheld(*, config: ProtocolConfig, annotator: User) -> bool:
    """Whether ``config``'s tasks are the crowd's alone (``roster_withheld``), so that the
    campaign's own ``annotator`` gets none — but the one they hold already, if any."""
    if not ProtocolConfig.objects.filter(pk=config.pk).filter(roster_withheld()).exists():
        return False
    return not Assignment.objects.filter(
        task__config=config, annotator=annotator, status=Assignment.Status.ACTIVE
    ).exists()


def crowd_tasks_message() -> str:
    """Why an annotator of the campaign gets no task of a protocol its crowd links serve."""
    return _(
        "The tasks of this protocol are for the workers of a crowd study. Ask the organizer "
        "if you should take them too."
    )


def _code(link: CrowdLink | None, passed: bool) -> str:
    fixed = "" if link is None else link.pass_code if passed else link.fail_code
    return fixed or get_random_string(CODE_LENGTH, allowed_chars=CODE_ALPHABET)


def crowd_completion_record(*, worker: CrowdWorker, assignment: Assignment) -> CrowdWorker:
    """Decide and store the worker's completion code once their task is done: the QC test on
    their judgments, the link's rule, the pass or fail code. Later calls return what was
    stored (the worker sees the same code every time)."""
    if assignment.status != Assignment.Status.DONE or assignment.annotator_id != worker.user_id:
        raise ValueError("the worker has not finished this task")
    with transaction.atomic():
        worker = (
            CrowdWorker.objects.select_for_update(of=("self",))
            .select_related("link")
            .get(pk=worker.pk)
        )
        if worker.completed_at is not None:
            return worker
        config = assignment.task.config
        qc = crowd_qc_compute(config=config, annotator_id=worker.user_id)
        rule = worker.link.rule if worker.link is not None else "not_failed"
        passed = completion_passes(rule=rule, qc=qc)
        worker.assignment = assignment
        worker.passed = passed
        worker.code = _code(worker.link, passed)
        worker.qc = qc.to_json()
        worker.completed_at = timezone.now()
        worker.save(update_fields=["assignment", "passed", "code", "qc", "completed_at"])
    return worker


def crowd_stopped_record(*, worker: CrowdWorker) -> CrowdWorker:
    """A worker whom the protocol's tutorial stopped ends with the fail code (no QC: they
    judged no real item), so that the platform can tell them from one who left; later calls
    return what was stored."""
    with transaction.atomic():
        worker = (
            CrowdWorker.objects.select_for_update(of=("self",))
            .select_related("link")
            .get(pk=worker.pk)
        )
        if worker.completed_at is None:
            worker.passed = False
            worker.code = _code(worker.link, False)
            worker.completed_at = timezone.now()
            worker.save(update_fields=["passed", "code", "completed_at"])
    return worker


def crowd_return_url(*, worker: CrowdWorker) -> str:
    """Where the completion page sends the worker back to, with their code; "" for none."""
    link = worker.link
    if link is None:
        return ""
    template = link.return_url or (
        PROLIFIC_RETURN_URL if link.platform == CrowdPlatform.PROLIFIC else ""
    )
    return template.replace("{code}", quote(worker.code, safe=""))


def crowd_code_matches(*, worker: CrowdWorker, code: str) -> bool:
    """Whether ``code`` is the code the worker was shown (case and spaces ignored)."""
    given = code.strip().upper()
    return bool(worker.code) and constant_time_compare(given, worker.code.upper())
