"""Services of the metrics app: requesting, dispatching and scheduling background analyses.

Jobs are idempotent: a request whose inputs (content fingerprint) match a finished or running job
reuses it — unless that job has not moved for ``EVALSITE_JOB_STALE_SECONDS`` (a lost message, a
worker gone for good): such a job is marked failed ("abandoned") and a new one starts. Jobs are
created in the database first and sent to the broker after the transaction commits; when the
broker is unreachable the job stays recorded (``dispatched = False``) and is sent again later (on
the next request, the next status poll, or when a worker starts), so nothing that was asked for is
lost and no web request waits for the broker.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Campaign
from evalsite.jobs import BROKER_ERRORS, registered_task, stale_abandon
from metrics.models import AnalysisJob, TaskClaim
from metrics.pipeline import analysis_params, campaign_fingerprint

logger = logging.getLogger(__name__)

UNDER_WAY = (AnalysisJob.Status.QUEUED, AnalysisJob.Status.RUNNING)

# The Celery tasks these services send, by the names ``metrics.tasks`` registers them under:
# the tasks call these services, so the services look the tasks up instead of importing them.
ANALYSIS_START = "metrics.analysis_start"
ANALYSIS_REQUEST = "metrics.analysis_request"


@dataclass(frozen=True)
class AnalysisRequest:
    job: AnalysisJob
    reused: bool
    queued: bool  # False: the broker could not be reached; the job will be sent later


def _send(job_id: Any) -> bool:
    """Send a job to the broker without waiting for it to come back if it is down."""
    try:
        registered_task(ANALYSIS_START).apply_async((str(job_id),), retry=False)
    except BROKER_ERRORS as exc:
        logger.warning("broker unreachable, analysis %s kept for later: %s", job_id, exc)
        return False
    AnalysisJob.objects.filter(pk=job_id).update(dispatched=True)
    return True


def analysis_request(
    *,
    campaign: Campaign,
    user: User | AnonymousUser | None = None,
    force: bool = False,
) -> AnalysisRequest:
    """Ask for the analysis of the campaign's current data; reuse a job with the same inputs
    unless ``force``. The job is sent to the workers after the transaction commits; ``user``
    is kept as who asked for it when signed in."""
    params = analysis_params(campaign=campaign)
    fingerprint = campaign_fingerprint(campaign=campaign, params=params)
    with transaction.atomic():
        # One request at a time per campaign, so two clicks do not start two jobs.
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        # A job that stopped moving long ago is dead (its message lost, its worker gone): it is
        # superseded rather than reused, so it cannot block "recompute now" forever.
        jobs_abandon_stale(campaign_id=campaign.pk)
        existing = (
            AnalysisJob.objects.filter(campaign=campaign, fingerprint=fingerprint)
            .exclude(status=AnalysisJob.Status.FAILED)
            .order_by("-created")
            .first()
        )
        if existing is not None and not (force and existing.status == AnalysisJob.Status.DONE):
            reused = True
            job = existing
        else:
            reused = False
            job = AnalysisJob.objects.create(
                campaign=campaign,
                fingerprint=fingerprint,
                params=params,
                requested_by_id=user.pk if user is not None and user.is_authenticated else None,
            )
    queued = job.dispatched or job.status != AnalysisJob.Status.QUEUED
    if not queued:
        queued = _send(job.pk)
    return AnalysisRequest(job=job, reused=reused, queued=queued)


def jobs_dispatch_pending() -> int:
    """Send jobs that were recorded while the broker was down; the number sent."""
    sent = 0
    for job_id in AnalysisJob.objects.filter(
        status=AnalysisJob.Status.QUEUED, dispatched=False
    ).values_list("pk", flat=True)[:50]:
        if not _send(job_id):
            break
        sent += 1
    return sent


# Per process: debounce key → time.monotonic() until which this process knows an analysis is
# already scheduled (the key is in the cache), so judgments until then skip the cache round trip.
# The key's value is its expiry (Unix time); another process's is trusted up to this many
# seconds before it (clocks of web machines differ a little), and judgments in that last
# stretch ask the cache as before.
_SCHEDULED_UNTIL: dict[str, float] = {}
SCHEDULE_CLOCK_MARGIN = 2.0


def analysis_schedule_debounced(*, campaign_id: Any) -> bool:
    """After new data (judgments, uploads): schedule one analysis about a minute from now,
    at most once a minute per campaign. Never raises: a broker or cache outage only logs.

    Once this process has seen the campaign's debounce key (set by itself or by another
    process), it does not ask the cache again until shortly before the key expires: the
    annotation hot path makes no cache round trip for most judgments. If the cache loses the
    key meanwhile (Redis restarted empty), the next analysis is scheduled at most one window
    later than it would have been."""
    if not settings.EVALSITE_AUTO_ANALYSIS:
        return False
    delay = settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS
    window = max(delay, 1)
    key = f"evalsite:analysis-scheduled:{campaign_id}"
    if _SCHEDULED_UNTIL.get(key, 0.0) > time.monotonic():
        return False
    try:
        if not cache.add(key, time.time() + window, timeout=window):
            expires = cache.get(key)
            if isinstance(expires, int | float):
                _remember_scheduled(key, min(float(expires) - time.time(), window))
            return False
        registered_task(ANALYSIS_REQUEST).apply_async(
            (str(campaign_id),), countdown=delay, retry=False
        )
    except BROKER_ERRORS as exc:
        logger.warning("could not schedule the analysis of %s: %s", campaign_id, exc)
        return False
    _remember_scheduled(key, window)
    return True


def _remember_scheduled(key: str, seconds_left: float) -> None:
    trusted = seconds_left - SCHEDULE_CLOCK_MARGIN
    if trusted > 0:
        _SCHEDULED_UNTIL[key] = time.monotonic() + trusted


def jobs_abandon_stale(*, campaign_id: Any) -> int:
    """Mark the campaign's queued or running jobs that have not moved for
    ``EVALSITE_JOB_STALE_SECONDS`` as failed ("abandoned"); the number marked."""
    return stale_abandon(
        AnalysisJob.objects.filter(campaign_id=campaign_id),
        under_way=UNDER_WAY,
        failed=AnalysisJob.Status.FAILED,
        what="analysis",
    )


def job_progress(*, job_id: Any, done: int | None = None, add: int = 0, **fields: Any) -> None:
    """Record progress of a job (absolute ``done`` or ``add`` units)."""
    from django.db.models import F
    from django.db.models.functions import Least

    updates: dict[str, Any] = {"progressed": timezone.now(), **fields}
    if done is not None:
        updates["progress_done"] = done
    elif add:
        # Capped: a step redelivered after a worker died must not count twice.
        updates["progress_done"] = Least(F("progress_done") + add, F("progress_total"))
    AnalysisJob.objects.filter(pk=job_id).update(**updates)


def job_fail(*, job_id: Any, error: str) -> bool:
    """Mark a queued or running job failed with a readable ``error``; a job that has already
    finished or failed keeps its status and first error. Whether the job was marked."""
    return bool(
        AnalysisJob.objects.filter(pk=job_id, status__in=UNDER_WAY).update(
            status=AnalysisJob.Status.FAILED, error=error[:4000], finished=timezone.now()
        )
    )


# A task whose worker process died this many times while running it fails its job instead of
# starting again: a chunk or a final step that exhausts the machine's memory would otherwise
# kill every worker that takes it, for ever. Once may be an operator's kill or a host's restart.
MAX_TASK_DEATHS = 2


def task_claim_key(task: str, args: list[Any]) -> str:
    """A task of a job named by its name and its arguments after the job id."""
    return " ".join([task, *(str(a) for a in args[1:])])[:80]


def task_claim(*, job_id: Any, task: str, args: list[Any], node: str, incarnation: str) -> int:
    """Record that a worker process starts a task of a job (a :class:`TaskClaim`); the number
    of earlier starts of the same task whose process died with it (0 normally). A job that is
    no longer under way (a message delivered again after its job ended) is not claimed for."""
    key = task_claim_key(task, args)
    claims = TaskClaim.objects.filter(job_id=job_id, key=key)
    fields = {"node": node, "incarnation": incarnation, "started": timezone.now()}
    try:
        with transaction.atomic():
            if not AnalysisJob.objects.filter(pk=job_id, status__in=UNDER_WAY).exists():
                return 0
            claim = claims.select_for_update().first()
            if claim is None:
                try:
                    with transaction.atomic():
                        TaskClaim.objects.create(
                            job_id=job_id, key=key, task=task, args=args, **fields
                        )
                    return 0
                except IntegrityError:  # the same message started twice at once
                    claim = claims.select_for_update().get()
            claims.update(starts=F("starts") + 1, **fields)
            return claim.starts
    except IntegrityError:  # the job was deleted meanwhile
        return 0


def task_claim_clear(*, job_id: Any, task: str, args: list[Any]) -> None:
    """The task ended, in whatever way: its process did not die with it."""
    TaskClaim.objects.filter(job_id=job_id, key=task_claim_key(task, args)).delete()


def tasks_orphaned(*, node: str, incarnation: str) -> list[TaskClaim]:
    """The tasks that an earlier process of the worker named ``node`` started and did not
    finish: it died with them. Claims of jobs that are no longer under way are deleted."""
    orphans = []
    for claim in (
        TaskClaim.objects.filter(node=node).exclude(incarnation=incarnation).select_related("job")
    ):
        if claim.job.status in UNDER_WAY:
            orphans.append(claim)
        else:
            claim.delete()
    return orphans
