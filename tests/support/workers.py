"""Waiting for a real Celery worker's results, the settings the worker tests share, and chunks
held at their writes so that a worker meets them under way."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from annotation.models import Campaign
from metrics import pipeline
from metrics.models import AnalysisJob, StatsChunk
from tests.dashboard_factories import campaign_resampling_set
from tests.factories import record_once_ended
from tests.support.threads import held_in_a_transaction


def wait_for(job_id: Any, timeout: float = 300) -> AnalysisJob:
    ended = (AnalysisJob.Status.DONE, AnalysisJob.Status.FAILED)
    job: AnalysisJob = record_once_ended(
        AnalysisJob, job_id, ended=lambda job: job.status in ended, timeout=timeout, interval=0.5
    )
    return job


def settings_for(
    campaign: Campaign, *, resamples: int | None = None, seed: int | None = None, **fields: Any
) -> None:
    """The metric settings ``fields``, and the campaign's one resample count and seed."""
    campaign_resampling_set(campaign, resamples=resamples, seed=seed)
    ms = pipeline.metric_settings(campaign.pk)
    for name, value in fields.items():
        ms._meta.get_field(name)  # a misspelt name fails here, not silently
        setattr(ms, name, value)
    ms.save()


def chunks_held(job: AnalysisJob) -> AbstractContextManager[None]:
    """Hold, in another transaction, a statistics row that each chunk of the job writes: a
    chunk scores its segments and then waits at its write for as long as the block lasts — a
    chunk still under way when a time limit comes or its worker is killed, whatever the host's
    speed. The rows are rolled back."""
    run = job.campaign.systems.order_by("name").first().runs.order_by("position").first()
    metric = next(iter(pipeline.usable_metrics(job.params)[0]))
    starts = [chunk.start for chunk in pipeline.plan(campaign=job.campaign, params=job.params)]

    def write() -> None:
        for start in starts:
            StatsChunk.objects.create(
                job=job, run=run, metric=metric, start=start, stop=start + 1, data=b""
            )

    return held_in_a_transaction(write)
