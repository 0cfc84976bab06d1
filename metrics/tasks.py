"""Celery tasks of the metrics app: thin wrappers that take ids, fetch, and call the pipeline.

The statistics of a job are a group of chunk tasks; the chunk that completes the set (checked in
the database, so a chunk delivered twice cannot fire it early or twice) starts the final step.
This works on any broker, including the file-system one of the embedded default. A task of a job
that fails for good marks the job failed (:class:`JobTask`).

A worker process that dies with a task (SIGKILL, the out-of-memory killer) leaves the task's
message unacknowledged in Redis, which delivers it again only after the visibility timeout (40
minutes by default). Each task therefore records that it runs (a ``TaskClaim``); a worker that
starts again under the same node name — compose's restart, systemd's ``Restart=always`` — sends
the tasks its dead predecessor held at once, and a task whose process died with it twice fails
its job with a message instead of killing worker after worker.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from typing import Any

from celery import Task, current_app, group, shared_task
from celery.signals import worker_init, worker_ready
from celery.utils.dispatch import Signal
from django.utils import timezone

from annotation.models import Campaign, Run
from evalcore.version import code_stamp
from evalsite.jobs import RETRY, TRANSIENT, failure_record
from metrics import pipeline
from metrics.models import AnalysisJob, WiringProbe
from metrics.services import (
    ANALYSIS_REQUEST,
    ANALYSIS_START,
    BROKER_ERRORS,
    MAX_TASK_DEATHS,
    analysis_request,
    job_fail,
    job_progress,
    jobs_dispatch_pending,
    task_claim,
    task_claim_clear,
    tasks_orphaned,
)

logger = logging.getLogger(__name__)


@shared_task(bind=True, name="metrics.ping")
def ping(self, token: str) -> str:  # type: ignore[no-untyped-def]
    """Write one row, so that a test or an operator can see a worker reach the database."""
    probe, _ = WiringProbe.objects.get_or_create(
        token=token, defaults={"worker_hostname": self.request.hostname or "unknown"}
    )
    return probe.worker_hostname


def _job(job_id: str) -> AnalysisJob | None:
    """The job a task works for; ``None`` when it no longer exists, or when it was requested by
    other code than this worker runs (then it is failed, saying so)."""
    job = AnalysisJob.objects.select_related("campaign").filter(pk=job_id).first()
    if job is None:
        logger.info("analysis %s no longer exists", job_id)
        return None
    if "version" not in job.params:  # a job of a test, or of a release before versions
        return job
    running = code_stamp()
    requested = code_stamp(job.params["version"], job.params.get("libraries"))
    if requested != running:
        # Web and worker processes run different code, as during an upgrade: results this
        # worker computed would be filed under the requester's versions and pass for its own.
        message = (
            f"This analysis was requested by {requested}, but a worker runs {running}: the web "
            "and worker processes run different code (an upgrade under way?). Request it again "
            "once they all run the same versions."
        )
        if job_fail(job_id=job.pk, error=message):
            logger.warning("analysis %s: %s", job.pk, message)
        return None
    return job


@shared_task(name=ANALYSIS_REQUEST, **RETRY)
def analysis_request_task(campaign_id: str) -> str | None:
    """The debounced request after new data: reuses stored results when nothing changed."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return None
    return str(analysis_request(campaign=campaign).job.pk)


class JobTask(Task):  # type: ignore[misc]
    """A task of one analysis job (its id the first argument). When the task fails for good —
    an error that is not retried, retries used up, the soft or the hard time limit — the job is
    marked failed with a readable message, so that it never stays "running" for ever. (Celery
    calls ``on_failure`` in the pool process for an exception, and in the worker's main process
    when the hard time limit killed the pool process; not for a retry, nor for a worker lost
    with its message re-queued.)"""

    # What the task does, for the message; formatted with the task's arguments.
    subject = "The analysis"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the task inside its claim (see the module's docstring); a task whose worker
        process already died with it ``MAX_TASK_DEATHS`` times fails its job instead."""
        node = self.request.hostname
        if not node or not args:  # called as a function, not as a task: nothing to rescue
            return super().__call__(*args, **kwargs)
        job_id, claim_args = args[0], list(args)
        try:
            deaths = task_claim(
                job_id=job_id, task=self.name, args=claim_args, node=node, incarnation=incarnation()
            )
        except TRANSIENT:  # the task's own first query retries; a claim is a convenience
            logger.warning("could not record that %s%s runs", self.name, tuple(args))
            deaths = 0
        if deaths >= MAX_TASK_DEATHS:
            job_fail(job_id=job_id, error=died_message(self.subject.format(*args), deaths))
            task_claim_clear(job_id=job_id, task=self.name, args=claim_args)
            return None
        try:
            return super().__call__(*args, **kwargs)
        finally:
            try:
                task_claim_clear(job_id=job_id, task=self.name, args=claim_args)
            except TRANSIENT:
                logger.warning("could not record that %s%s ended", self.name, tuple(args))

    def on_failure(  # type: ignore[no-untyped-def]
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        failure_record(
            exc,
            args,
            kwargs,
            key="job_id",
            subject=self.subject.format(*(args or ())),
            max_retries=self.max_retries,
            fail=lambda job_id, message: job_fail(job_id=job_id, error=message),
        )


def died_message(subject: str, deaths: int) -> str:
    times = {1: "once", 2: "twice"}.get(deaths, f"{deaths} times")
    return (
        f"{subject} failed: the worker process running it died {times} (killed, or out of memory?)."
    )


@shared_task(base=JobTask, name=ANALYSIS_START, subject="Planning the analysis", **RETRY)
def analysis_start(job_id: str) -> int:
    """Plan the chunks of a job and send them as a group."""
    job = _job(job_id)
    if job is None or job.status in (AnalysisJob.Status.DONE, AnalysisJob.Status.FAILED):
        return 0
    chunks = pipeline.plan(campaign=job.campaign, params=job.params)
    metrics, _ = pipeline.usable_metrics(job.params)
    total = len(chunks) + len(metrics) + 2
    now = timezone.now()
    AnalysisJob.objects.filter(pk=job.pk, status=AnalysisJob.Status.QUEUED).update(
        status=AnalysisJob.Status.RUNNING,
        stage=AnalysisJob.Stage.STATISTICS,
        started=now,
        progressed=now,
        progress_total=total,
        progress_done=0,
        dispatched=True,
    )
    if not chunks:
        job_fail(job_id=job.pk, error="The campaign has no segments to score.")
        return 0
    if not Run.objects.filter(system__campaign=job.campaign).exists():
        # The usual first upload brings the source and references alone, and schedules an
        # analysis: every chunk would fail with "ValueError: no outputs to score".
        job_fail(
            job_id=job.pk,
            error="The campaign has no system outputs to score yet: upload at least one system.",
        )
        return 0
    group(analysis_chunk.s(str(job.pk), c.start, c.stop) for c in chunks).apply_async()
    return len(chunks)


@shared_task(
    base=JobTask, name="metrics.analysis_chunk", subject="Scoring segments {1}–{2}", **RETRY
)
def analysis_chunk(job_id: str, start: int, stop: int) -> int:
    """Statistics of one chunk; the chunk that completes the set starts the final step."""
    job = _job(job_id)
    if job is None or job.status != AnalysisJob.Status.RUNNING:
        return 0
    pipeline.chunk_compute(job=job, start=start, stop=stop)
    done = pipeline.chunks_stored(job)
    job_progress(job_id=job.pk, done=done)
    n_chunks = len(pipeline.plan(campaign=job.campaign, params=job.params))
    # Exactly one chunk wins this conditional update and sends the final step.
    if done >= n_chunks and AnalysisJob.objects.filter(
        pk=job.pk, status=AnalysisJob.Status.RUNNING, stage=AnalysisJob.Stage.STATISTICS
    ).update(stage=AnalysisJob.Stage.FINALIZE, progressed=timezone.now()):
        analysis_finalize.delay(str(job.pk))
    return done


@shared_task(base=JobTask, name="metrics.analysis_finalize", subject="The final step", **RETRY)
def analysis_finalize(job_id: str) -> str:
    """Scores, significance, the human analysis and correlations; the job is done."""
    job = _job(job_id)
    if job is None or job.status != AnalysisJob.Status.RUNNING:
        return "skipped"
    n_chunks = len(pipeline.plan(campaign=job.campaign, params=job.params))
    pipeline.finalize(job, progress=lambda units: job_progress(job_id=job.pk, add=units))
    total = AnalysisJob.objects.get(pk=job.pk).progress_total
    # Only a job still running becomes done: one abandoned meanwhile stays failed.
    AnalysisJob.objects.filter(pk=job.pk, status=AnalysisJob.Status.RUNNING).update(
        status=AnalysisJob.Status.DONE,
        stage=AnalysisJob.Stage.FINISHED,
        progress_done=max(total, n_chunks),
        finished=timezone.now(),
    )
    return "done"


def _dispatch_pending_on_start(**kwargs: Any) -> None:
    """A worker that starts sends the jobs recorded while the broker was down."""
    try:
        jobs_dispatch_pending()
    except Exception:  # a worker must start even if this fails; the next poll retries
        logger.exception("could not send pending analyses")


# Names the start of a worker's main process (set before the pool's processes fork, which
# inherit it): claims of an earlier process under the same node name are its predecessor's.
INCARNATION_VARIABLE = "EVALSITE_WORKER_INCARNATION"


def incarnation() -> str:
    return os.environ.get(INCARNATION_VARIABLE, "")


def _new_incarnation(**kwargs: Any) -> None:
    os.environ[INCARNATION_VARIABLE] = uuid.uuid4().hex


def _compile_kernels(**kwargs: Any) -> None:
    """Load TER's and WER's compiled kernels (numba's cache; compiled on the first start after
    an install) before the pool's processes fork, so that they inherit them rather than each
    loading or compiling them on its first chunk."""
    from evalcore.scoring.edit_distance import warm_up  # numba: in workers, not web processes

    try:
        warm_up()
    except Exception:  # a worker must start even if this fails; each process compiles on use
        logger.exception("could not load the compiled edit-distance kernels")


def _torch_threads(sender: Any = None, **kwargs: Any) -> None:
    """BERTR's encoder runs on each pool process's share of the cores (set before the pool
    forks): torch's default, a thread per core in every process, puts two threads on each core
    with concurrency 2, which took 1.5 times as long (benchmarks/bertr.py). An operator's
    EVALSITE_TORCH_THREADS is kept."""
    from evalcore.scoring.bertr import THREADS_ENV  # torch itself is imported only on use

    concurrency = int(getattr(sender, "concurrency", None) or 1)
    os.environ.setdefault(THREADS_ENV, str(max(1, len(os.sched_getaffinity(0)) // concurrency)))


def _rescue_on_start(sender: Any = None, **kwargs: Any) -> None:
    """A worker that starts sends again the tasks its predecessor under the same node name
    died with (see the module's docstring)."""
    try:
        tasks_rescue(node=sender.hostname)
    except Exception:  # a worker must start even if this fails; Redis redelivers them later
        logger.exception("could not send again the tasks of this worker's predecessor")


# The worker's start-up hooks, in the order they run; MetricsConfig.ready connects them.
WORKER_RECEIVERS: list[tuple[Signal, Callable[..., None]]] = [
    (worker_init, _new_incarnation),
    (worker_init, _compile_kernels),
    (worker_init, _torch_threads),
    (worker_ready, _dispatch_pending_on_start),
    (worker_ready, _rescue_on_start),
]


def tasks_rescue(*, node: str) -> int:
    """Send the tasks that an earlier process of the worker ``node`` died with; a task it
    died with ``MAX_TASK_DEATHS`` times fails its job instead. The number sent.

    Node names must be unique among live workers (Celery's default, ``celery@<host name>``, is,
    one worker per machine or container). Should another live worker answer to this one's name
    after all, nothing is sent: its tasks may be running."""
    orphans = tasks_orphaned(node=node, incarnation=incarnation())
    if not orphans:
        return 0
    if _namesakes(node):
        logger.warning(
            "another live worker is named %s: its tasks are not sent again; give each worker "
            "its own name (celery worker -n)",
            node,
        )
        return 0
    sent = 0
    for claim in orphans:
        task = current_app.tasks.get(claim.task)
        subject = getattr(task, "subject", claim.task).format(*claim.args)
        if task is None or claim.starts >= MAX_TASK_DEATHS:
            reason = died_message(subject, claim.starts)
            job_fail(job_id=claim.job_id, error=reason)
            claim.delete()
            logger.warning("analysis %s: %s", claim.job_id, reason)
            continue
        try:
            task.apply_async(args=claim.args, retry=False)
        except BROKER_ERRORS as exc:
            logger.warning("could not send %s again: %s", claim.key, exc)
            break
        sent += 1
        logger.warning(
            "analysis %s: %s sent again: this worker's previous process died with it",
            claim.job_id,
            subject,
        )
    return sent


def _namesakes(node: str) -> bool:
    """Whether a live worker other than this process answers to ``node``. Asked over the
    broker's broadcast: the worker itself cannot answer yet, its consumer starts after this."""
    try:
        replies = current_app.control.broadcast(
            "stats", destination=[node], reply=True, timeout=2.0
        )
    except Exception:  # a transport without broadcast (the embedded file system): one worker
        return False
    return any(
        info.get("pid") != os.getpid()
        for reply in replies or []
        for name, info in reply.items()
        if name == node and isinstance(info, dict)
    )
