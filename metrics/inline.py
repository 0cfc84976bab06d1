"""The background analysis run in the calling process: what the workers do with a job (start,
every chunk, finalize), one step after the other. For ``manage.py analyse`` (the demo's results
before ``make run`` serves them) and for tests; a web request never calls it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils import timezone

from annotation.models import Campaign
from metrics import pipeline
from metrics.models import AnalysisJob, AnalysisResult


def analysis_job_run_here(
    job: AnalysisJob, *, progress: Callable[[int, int], None] | None = None
) -> AnalysisJob:
    """Run ``job`` to the end here; ``progress(done, total)`` after every step."""
    chunks = pipeline.plan(campaign=job.campaign, params=job.params)
    metrics, _ = pipeline.usable_metrics(job.params)
    job.status = AnalysisJob.Status.RUNNING
    job.stage = AnalysisJob.Stage.STATISTICS
    job.progress_total = len(chunks) + len(metrics) + 2
    job.started = timezone.now()
    job.save(update_fields=["status", "stage", "progress_total", "started"])
    for done, chunk in enumerate(chunks, start=1):
        pipeline.chunk_compute(job=job, start=chunk.start, stop=chunk.stop)
        if progress is not None:
            progress(done, job.progress_total)
    job.stage = AnalysisJob.Stage.FINALIZE
    job.progress_done = len(chunks)
    job.save(update_fields=["stage", "progress_done"])
    steps = [len(chunks)]

    def finalize_step(n: int) -> None:
        steps[0] += n
        if progress is not None:
            progress(steps[0], job.progress_total)

    pipeline.finalize(job, progress=finalize_step)
    job.status = AnalysisJob.Status.DONE
    job.stage = AnalysisJob.Stage.FINISHED
    job.progress_done = job.progress_total
    job.finished = timezone.now()
    job.save(update_fields=["status", "stage", "progress_done", "finished"])
    return job


def campaign_analysis_run_here(
    *, campaign: Campaign, user: Any = None, progress: Callable[[int, int], None] | None = None
) -> AnalysisJob | None:
    """Bring the campaign's stored results up to date here: None when they already are (the
    newest result has the campaign's current fingerprint), else the finished job. The job is
    recorded as dispatched, so no worker takes it as well."""
    params = pipeline.analysis_params(campaign=campaign)
    fingerprint = pipeline.campaign_fingerprint(campaign=campaign, params=params)
    newest = AnalysisResult.objects.filter(campaign=campaign).order_by("-created").first()
    if newest is not None and newest.fingerprint == fingerprint:
        return None
    job = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint=fingerprint,
        params=params,
        dispatched=True,
        requested_by=user,
    )
    return analysis_job_run_here(job, progress=progress)
