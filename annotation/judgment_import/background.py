"""Imports of historical judgments in the background (services).

A file of a million rows takes minutes to import (``docs/benchmarks.md``), past gunicorn's
120 s: the upload page and the API record a :class:`JudgmentImportJob` holding the file and the
options, and a Celery worker runs it (``annotation.tasks.judgment_import``), as task builds run
(``annotation.tasking.background``, ``docs/background.md``).

- The import is one transaction, and the job turns done inside it: the page never shows "done"
  without the judgments, nor the judgments without "done". A refused file (``UploadError``)
  stores nothing and leaves its problems on the job, each naming the file and line; any other
  failure marks the job failed through the Celery task's ``on_failure``.
- While the transaction runs nothing it writes is visible: the worker reports its step to the
  cache, which the page and the API read.
- A job is claimed with a conditional UPDATE, and the import waits for the job's lock: a
  message delivered again after the job ended does nothing, one delivered while it runs waits
  and then finds it ended.
- A running job keeps a heartbeat (``evalsite.jobs.heartbeat``): one whose heartbeat is older
  than a minute (its worker was killed) is marked failed, naming the step it stopped in, when
  it is next looked at; its transaction died with the worker, so nothing was stored (an import
  that ends after all finds its job failed and rolls back). A job waiting for a retry is queued
  again, so that no heartbeat is expected of it.
- The file is removed from the job when the job ends; a job under way that has not moved for
  ``EVALSITE_JOB_STALE_SECONDS`` (its message was lost) is marked failed ("abandoned") when the
  campaign's imports are next looked at.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.db.models.functions import Length
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.progress import STAGES
from annotation.judgment_import.services import judgments_import
from annotation.judgment_import.standardised import scores_text
from annotation.judgment_import.wmt_segments import segment_numbering_text
from annotation.models import Campaign, JudgmentImportJob
from evalsite.formatting import count_text
from evalsite.jobs import (
    BROKER_ERRORS,
    heartbeat,
    progress_forget,
    progress_put,
    record_lock,
    registered_task,
    stale_abandon,
)

logger = logging.getLogger(__name__)

UNDER_WAY = (JudgmentImportJob.Status.QUEUED, JudgmentImportJob.Status.RUNNING)

# The Celery task that runs an import, by the name ``annotation.tasks`` registers it under.
TASK_JUDGMENT_IMPORT = "annotation.judgment_import"


def progress_key(job_id: Any) -> str:
    return f"evalsite:judgment-import:{job_id}"


def judgment_import_request(
    *,
    campaign: Campaign,
    upload: UploadFile,
    options: ImportOptions,
    user: User | None = None,
) -> JudgmentImportJob:
    """Record an import of ``upload`` onto ``campaign`` and send it to the workers. A queue
    that cannot be reached fails the job at once, saying so; nothing is stored then."""
    job = JudgmentImportJob.objects.create(
        campaign=campaign,
        file_name=upload.name[:255],
        content=upload.content,
        options=dataclasses.asdict(options),
        requested_by=user,
        language=translation.get_language() or settings.LANGUAGE_CODE,
    )
    try:
        registered_task(TASK_JUDGMENT_IMPORT).apply_async((str(job.pk),), retry=False)
    except BROKER_ERRORS as exc:
        logger.warning("broker unreachable, import %s not sent: %s", job.pk, exc)
        judgment_import_fail(
            job_id=job.pk,
            error=_(
                "The task queue cannot be reached right now, so the import could not start. "
                "Upload the file again when it is back."
            ),
        )
    job.refresh_from_db()
    return job


def judgment_import_run(*, job_id: Any) -> JudgmentImportJob | None:
    """Run a queued import (the worker's side); ``None`` when there is nothing to do (the job
    no longer exists or has ended). A refused file marks the job failed with its problems;
    other errors propagate (the Celery task marks the job failed) and store nothing."""
    now = timezone.now()
    if not JudgmentImportJob.objects.filter(pk=job_id, status__in=UNDER_WAY).update(
        status=JudgmentImportJob.Status.RUNNING, started=now, progressed=now
    ):
        return None
    # The file's bytes are read once, into the upload alone: the job's copy would double them.
    job = (
        JudgmentImportJob.objects.select_related("campaign", "requested_by")
        .defer("content")
        .get(pk=job_id)
    )
    running = JudgmentImportJob.objects.filter(pk=job.pk, status=JudgmentImportJob.Status.RUNNING)
    try:
        with heartbeat(running), translation.override(job.language), transaction.atomic():
            # A second delivery of this job waits for the first one's lock here, then finds it
            # ended.
            record_lock(running, key=f"judgment-import:{job.pk}")
            if not running.exists():
                return None
            record = judgments_import(
                campaign=job.campaign,
                upload=UploadFile(name=job.file_name, content=_job_content(job.pk)),
                user=job.requested_by,
                options=ImportOptions(**job.options),
                report=_reporter(job.pk),
            )
            finished = timezone.now()
            if not running.update(
                status=JudgmentImportJob.Status.DONE,
                result=record,
                content=b"",
                finished=finished,
                progressed=finished,
            ):
                # A reader took the job for dead (its heartbeat had stopped) and said that
                # nothing was stored: so it stays.
                transaction.set_rollback(True)
    except UploadError as exc:
        judgment_import_fail(
            job_id=job.pk,
            error=str(exc.problems[0]) if exc.problems else str(exc),
            problems=[{"file": p.file, "line": p.line, "message": p.message} for p in exc.problems],
        )
    finally:
        progress_forget(progress_key(job.pk))
    job.refresh_from_db()
    return job


def _job_content(job_id: Any) -> bytes:
    """The job's file, read alone (the job itself is loaded without it)."""
    return bytes(JudgmentImportJob.objects.values_list("content", flat=True).get(pk=job_id))


def judgment_import_fail(
    *, job_id: Any, error: str, problems: list[dict[str, Any]] | None = None
) -> bool:
    """Mark a queued or running job failed with a readable ``error`` (and a refused file's
    ``problems``) and drop its file; one that has ended keeps its status. Whether it was
    marked."""
    now = timezone.now()
    return bool(
        JudgmentImportJob.objects.filter(pk=job_id, status__in=UNDER_WAY).update(
            status=JudgmentImportJob.Status.FAILED,
            error=error[:4000],
            problems=problems or [],
            content=b"",
            finished=now,
            progressed=now,
        )
    )


def judgment_import_requeue(*, job_id: Any) -> bool:
    """Put a running job that waits for a retry (its transaction rolled back) back in the
    queue, where no heartbeat is expected of it; whether it was running."""
    return bool(
        JudgmentImportJob.objects.filter(pk=job_id, status=JudgmentImportJob.Status.RUNNING).update(
            status=JudgmentImportJob.Status.QUEUED, progressed=timezone.now()
        )
    )


def judgment_imports_abandon_stale(*, campaign: Campaign) -> int:
    """Mark the campaign's running imports whose heartbeat is older than
    ``evalsite.jobs.heartbeat_limit()`` failed (the worker stopped; the message names the
    step), and those under way that have not moved for ``EVALSITE_JOB_STALE_SECONDS``
    ("abandoned"); the number marked."""
    jobs = JudgmentImportJob.objects.filter(campaign=campaign)
    marked = stale_abandon(
        jobs,
        under_way=UNDER_WAY,
        failed=JudgmentImportJob.Status.FAILED,
        what="judgment import",
        beating=JudgmentImportJob.Status.RUNNING,
        stopped=_stopped_message,
    )
    if marked:
        # Their files too are dropped, as those of every job that ended.
        jobs.exclude(status__in=UNDER_WAY).annotate(size=Length("content")).filter(
            size__gt=0
        ).update(content=b"")
    return marked


def judgment_import_state(job: JudgmentImportJob) -> dict[str, Any]:
    """The job as the status page and the API show it: status, the step under way (from the
    cache while it runs), a message, a refused file's problems and what a finished job stored."""
    step, steps, stage = 0, len(STAGES), ""
    if job.status == JudgmentImportJob.Status.RUNNING:
        try:
            progress = cache.get(progress_key(job.pk))
        except BROKER_ERRORS:
            progress = None
        if progress:
            stage, step, steps = progress["stage"], progress["step"], progress["steps"]
    result = job.result if job.status == JudgmentImportJob.Status.DONE else None
    return {
        "id": str(job.pk),
        "status": job.status,
        "status_label": str(job.get_status_display()),
        "active": job.active,
        "file_name": job.file_name,
        "stage": stage,
        "step": step,
        "steps": steps,
        "percent": 100 if result else round(100 * max(step - 1, 0) / steps),
        "message": _job_message(job, stage, step, steps),
        "error": job.error,
        "problems": job.problems,
        "import": None
        if result is None
        else {
            "id": result.pk,
            "protocol_config": result.config_id,
            "name": result.config.name,
            "file_format": result.file_format,
            "summary": result.summary,
        },
        "created": job.created.isoformat(),
        "finished": job.finished.isoformat() if job.finished else None,
    }


def _job_message(job: JudgmentImportJob, stage: str, step: int, steps: int) -> str:
    if job.status == JudgmentImportJob.Status.DONE and job.result is not None:
        done = _("Imported %(judgments)s judgments of %(annotators)s annotators as “%(name)s”.") % {
            "judgments": count_text(job.result.summary["judgments"]),
            "annotators": count_text(len(job.result.summary["annotators"])),
            "name": job.result.config.name,
        }
        summary = job.result.summary
        notes = [segment_numbering_text(summary), scores_text(summary)]
        return " ".join(filter(None, [done, *notes]))
    if job.status == JudgmentImportJob.Status.FAILED:
        return job.error
    if job.status == JudgmentImportJob.Status.QUEUED:
        return _("Waiting for a worker.")
    if stage:
        return _("Step %(step)d of %(steps)d: %(stage)s…") % {
            "step": step,
            "steps": steps,
            "stage": stage,
        }
    return _("Starting…")


def _stopped_message(job_id: Any) -> str:
    """Why a running job whose heartbeat stopped failed, in its requester's language, naming
    the step its worker was in (from the cache, where the worker reported it)."""
    language = (
        JudgmentImportJob.objects.filter(pk=job_id).values_list("language", flat=True).first()
    )
    try:
        progress = cache.get(progress_key(job_id))
    except BROKER_ERRORS:
        progress = None
    with translation.override(language or settings.LANGUAGE_CODE):
        if not progress:
            return _(
                "The worker running the import stopped before its first step; nothing was "
                "stored. Import the file again."
            )
        return (
            _(
                "The worker running the import stopped during step %(step)d of %(steps)d "
                "(%(stage)s); nothing was stored. Import the file again."
            )
            % progress
        )


def _reporter(job_id: Any) -> Any:
    """Progress of an import, for its page (``evalsite.jobs.progress_put``)."""
    key = progress_key(job_id)

    def report(stage: str, step: int, steps: int) -> None:
        progress_put(key, {"stage": stage, "step": step, "steps": steps})

    return report
