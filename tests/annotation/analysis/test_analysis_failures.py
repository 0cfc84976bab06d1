"""An analysis job never stays "queued" or "running" for ever: on real Celery worker processes
and Redis, a chunk that fails or is stopped at the hard time limit marks its job failed with a
readable message, and a job that stopped moving long ago (its message lost) is superseded by
"recompute now" and by automatic scheduling instead of blocking them."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.campaigns.services import campaign_data_import
from annotation.models import Reference, Segment
from metrics.models import AnalysisJob, AnalysisResult, StatsChunk, TaskClaim
from metrics.pipeline import analysis_params
from metrics.services import analysis_request
from metrics.tasks import analysis_start
from tests.factories import make_campaign, plain_files
from tests.support.workers import chunks_held, settings_for, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

FAST = {"metrics": ["bleu", "chrf"], "resamples": 50, "ar_trials": 100}


def test_a_chunk_whose_input_disappeared_fails_its_job_with_a_readable_error(
    celery_worker_process, campaign
) -> None:  # type: ignore[no-untyped-def]
    settings_for(campaign, **FAST)
    request = analysis_request(campaign=campaign)
    assert request.queued
    # Between the request and the scoring, the references go (the data was being replaced).
    Reference.objects.filter(segment__campaign=campaign).delete()
    celery_worker_process(name="failing")

    job = wait_for(request.job.pk, timeout=120)
    n_segments = Segment.objects.filter(campaign=campaign).count()
    assert job.status == AnalysisJob.Status.FAILED
    assert job.error.startswith(f"Scoring segments 0–{n_segments} failed: ValueError: "), job.error
    assert job.finished is not None
    assert not AnalysisResult.objects.filter(job=job).exists()

    # A failed job blocks nothing: the next request starts afresh.
    again = analysis_request(campaign=campaign)
    assert not again.reused
    assert again.job.pk != job.pk


def test_a_chunk_stopped_at_the_soft_time_limit_fails_its_job(
    celery_worker_process, campaign
) -> None:  # type: ignore[no-untyped-def]
    # The chunk waits at its write for a row another transaction holds until the 1 s limit
    # comes, however fast the host scores: interrupted in the middle of a query, it still
    # marks its job failed.
    settings_for(campaign, **FAST)
    limits = {"CELERY_TASK_SOFT_TIME_LIMIT": "1", "CELERY_TASK_TIME_LIMIT": "60"}
    request = analysis_request(campaign=campaign)
    with chunks_held(request.job):
        celery_worker_process(name="soft", env=limits)
        job = wait_for(request.job.pk, timeout=120)
    n_segments = Segment.objects.filter(campaign=campaign).count()
    assert job.status == AnalysisJob.Status.FAILED
    assert job.error == f"Scoring segments 0–{n_segments} took too long (soft time limit)."
    assert not TaskClaim.objects.filter(job=job).exists()


def pool_processes(worker_pid: int) -> list[int]:
    children = Path(f"/proc/{worker_pid}/task/{worker_pid}/children").read_text().split()
    return [int(pid) for pid in children]


def test_a_chunk_that_ignores_the_soft_limit_is_stopped_at_the_hard_limit_and_fails_its_job(
    celery_worker_process, campaign, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    settings_for(campaign, **FAST)
    limits = {"CELERY_TASK_SOFT_TIME_LIMIT": "2", "CELERY_TASK_TIME_LIMIT": "4"}
    request = analysis_request(campaign=campaign)
    with chunks_held(request.job):
        worker = celery_worker_process("--concurrency=1", name="hard", env=limits)
        log = tmp_path / "worker-hard.log"
        deadline = time.monotonic() + 60
        while "metrics.analysis_chunk[" not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        # The pool process freezes in the middle of the chunk (held at its write), as in a C
        # call that never returns: the soft limit cannot interrupt it, the hard limit kills it
        # from the worker's main process.
        (pool,) = pool_processes(worker.pid)
        os.kill(pool, signal.SIGSTOP)
        job = wait_for(request.job.pk, timeout=60)
    n_segments = Segment.objects.filter(campaign=campaign).count()
    assert job.status == AnalysisJob.Status.FAILED
    assert job.error == (
        f"Scoring segments 0–{n_segments} was stopped at the hard time limit of 4 s."
    )
    assert "Hard time limit (4s) exceeded" in log.read_text()


def make_stale(job_id: object, seconds: int) -> None:
    """Move a job's timestamps back, as if it had last moved ``seconds`` ago."""
    then = timezone.now() - timedelta(seconds=seconds)
    AnalysisJob.objects.filter(pk=job_id).update(created=then, started=then, progressed=then)


def test_a_stale_job_is_superseded_by_recompute_now_and_by_automatic_scheduling(
    celery_worker_process, campaign, as_role, settings
) -> None:  # type: ignore[no-untyped-def]
    settings_for(campaign, **FAST)
    settings.EVALSITE_JOB_STALE_SECONDS = 3600

    # A job whose worker died for good in the middle: "running", not moving for a while.
    dead = analysis_request(campaign=campaign).job
    AnalysisJob.objects.filter(pk=dead.pk).update(status="running", stage="statistics")
    make_stale(dead.pk, 3000)  # within the limit: still taken for alive, and reused
    client = as_role("owner")
    url = reverse("api-analysis", args=[campaign.pk])
    reused = client.post(url).json()
    assert (reused["reused"], reused["job"]["id"]) == (True, str(dead.pk))

    make_stale(dead.pk, 3700)  # beyond the limit: dead, and "recompute now" supersedes it
    body = client.post(url).json()
    assert body["reused"] is False
    assert body["detail"] == "The analysis is queued."
    dead.refresh_from_db()
    assert dead.status == AnalysisJob.Status.FAILED
    assert dead.error.startswith("abandoned: no progress since ")
    assert body["job"]["id"] != str(dead.pk)
    forced = body["job"]["id"]

    # Its message lost from Redis: "queued", sent, never started. Automatic scheduling (the same
    # request without force) supersedes it too.
    make_stale(forced, 3700)
    automatic = analysis_request(campaign=campaign)
    assert not automatic.reused
    lost = AnalysisJob.objects.get(pk=forced)
    assert (lost.status, lost.dispatched) == (AnalysisJob.Status.FAILED, True)
    assert lost.error.startswith("abandoned: no progress since ")

    # A worker then gets all three messages: the abandoned jobs stay failed, the new one runs.
    celery_worker_process(name="after")
    job = wait_for(automatic.job.pk, timeout=180)
    assert job.status == AnalysisJob.Status.DONE, job.error
    time.sleep(2)  # the abandoned jobs' messages have been delivered and ignored
    assert set(AnalysisJob.objects.filter(campaign=campaign).values_list("status", flat=True)) == {
        AnalysisJob.Status.FAILED,
        AnalysisJob.Status.DONE,
    }
    assert AnalysisJob.objects.get(pk=forced).error == lost.error


def test_an_analysis_of_a_campaign_without_systems_fails_saying_what_to_upload(owner) -> None:  # type: ignore[no-untyped-def]
    # The usual first upload (source and references, the systems later) schedules an analysis:
    # it failed chunk by chunk with "ValueError: no outputs to score" on the dashboard.
    campaign = make_campaign(owner=owner)
    source_only = [f for f in plain_files() if f.role != "systems"]
    campaign_data_import(campaign=campaign, files=source_only, user=owner)
    job = AnalysisJob.objects.create(
        campaign=campaign, fingerprint="e" * 64, params=analysis_params(campaign=campaign)
    )
    assert analysis_start.apply(args=(str(job.pk),)).get() == 0
    job.refresh_from_db()
    assert job.status == AnalysisJob.Status.FAILED
    assert job.error == (
        "The campaign has no system outputs to score yet: upload at least one system."
    )
    assert not StatsChunk.objects.filter(job=job).exists()
