"""Waiting for a real Celery worker's results, and the campaigns and settings the worker tests
share."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from django.db import connections, transaction

from annotation.models import Campaign
from metrics import pipeline
from metrics.models import AnalysisJob, StatsChunk
from tests.factories import record_once_ended


def wait_for(job_id: Any, timeout: float = 300) -> AnalysisJob:
    ended = (AnalysisJob.Status.DONE, AnalysisJob.Status.FAILED)
    job: AnalysisJob = record_once_ended(
        AnalysisJob, job_id, ended=lambda job: job.status in ended, timeout=timeout, interval=0.5
    )
    return job


def large_campaign(owner: Any, n_segments: int = 600) -> Campaign:
    """Distinct synthetic sentences (no two pairs alike), so chunks take a while to score."""
    from annotation.campaigns.services import campaign_data_import
    from annotation.campaigns.uploads import UploadFile
    from tests.factories import lines, make_campaign

    rng = np.random.default_rng(4)
    vocabulary = [f"w{i}" for i in range(400)]
    refs = [
        " ".join(rng.choice(vocabulary, size=int(rng.integers(15, 30)))) for _ in range(n_segments)
    ]

    def noisy(rate: float, seed: int) -> list[str]:
        g = np.random.default_rng(seed)
        return [
            " ".join(w if g.random() > rate else str(g.choice(vocabulary)) for w in ref.split())
            for ref in refs
        ]

    files = [
        UploadFile("src.xx", lines([f"source {i} " + r for i, r in enumerate(refs)]), "source"),
        UploadFile("ref.yy", lines(refs), "references"),
    ]
    for s, rate in enumerate((0.1, 0.3, 0.5, 0.7)):
        for r in range(3):
            files.append(
                UploadFile(f"sys{s}.run{r}.txt", lines(noisy(rate, 10 * s + r)), "systems")
            )
    campaign = make_campaign(owner=owner, name="large")
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def settings_for(campaign: Campaign, **fields: Any) -> None:
    ms = pipeline.metric_settings(campaign.pk)
    for name, value in fields.items():
        setattr(ms, name, value)
    ms.save()


@contextmanager
def first_chunk_held(job: AnalysisJob) -> Iterator[None]:
    """Hold, in another transaction, a statistics row that the job's first chunk writes: the
    chunk scores its segments and then waits at its write for as long as the block lasts —
    a chunk that runs into a time limit whatever the host's speed. The row is rolled back."""
    run = job.campaign.systems.order_by("name").first().runs.order_by("position").first()
    metric = next(iter(pipeline.usable_metrics(job.params)[0]))
    holding, release = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                StatsChunk.objects.create(
                    job=job, run=run, metric=metric, start=0, stop=1, data=b""
                )
                holding.set()
                release.wait(300)
                transaction.set_rollback(True)
        except BaseException as exc:
            failure.append(exc)
            holding.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(30), "the row was not held within 30 s"
    assert not failure, failure
    try:
        yield
    finally:
        release.set()
        thread.join(30)
