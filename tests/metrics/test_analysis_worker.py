"""The background analysis on real Celery worker processes and Redis, when workers die: a worker
killed with SIGKILL in the middle of a chunk does not stop the job, and the results equal an
uninterrupted run; a worker that starts again under the dead one's name sends its chunks again at
once. The whole pipeline on a worker, against the scoring core: test_analysis_pipeline_worker.py."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from metrics import pipeline
from metrics.models import AnalysisJob, AnalysisResult, StatsChunk, TaskClaim
from metrics.services import analysis_request
from tests.support.workers import chunks_held, settings_for, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

CHUNK = "metrics.analysis_chunk"


def test_a_worker_killed_in_the_middle_of_a_chunk_does_not_stop_the_job(
    celery_worker_process, campaign
) -> None:  # type: ignore[no-untyped-def]
    settings_for(campaign, metrics=["bleu", "chrf", "ter"], resamples=100, ar_trials=500)
    # Redis delivers the killed worker's chunk again once it has gone unacknowledged for longer
    # than the visibility timeout, which must exceed the time limits: short ones, for a short
    # test (this campaign's tasks take a fraction of a second).
    fast_redelivery = {
        "CELERY_VISIBILITY_TIMEOUT": "6",
        "CELERY_TASK_TIME_LIMIT": "5",
        "CELERY_TASK_SOFT_TIME_LIMIT": "4",
    }
    request = analysis_request(campaign=campaign)
    job_id = request.job.pk
    # The chunk waits at its write while the worker is killed: in the middle, however fast.
    with chunks_held(request.job):
        first = celery_worker_process(name="doomed", env=fast_redelivery)
        deadline = time.monotonic() + 60
        while not (claims := TaskClaim.objects.filter(job_id=job_id, task=CHUNK)):
            assert time.monotonic() < deadline, "the chunk did not start within 60 s"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    assert AnalysisJob.objects.get(pk=job_id).status == AnalysisJob.Status.RUNNING
    assert StatsChunk.objects.filter(job_id=job_id).count() == 0

    # A worker looks for such chunks when it starts, then every 100 s (kombu's Redis
    # transport): the rescuer starts once the chunk has been unacknowledged that long.
    overdue = claims[0].started + timedelta(
        seconds=int(fast_redelivery["CELERY_VISIBILITY_TIMEOUT"]) + 1
    )
    time.sleep(max(0.0, (overdue - timezone.now()).total_seconds()))
    celery_worker_process(name="rescuer", env=fast_redelivery)
    job = wait_for(job_id, timeout=120)
    assert job.status == AnalysisJob.Status.DONE, job.error
    assert not TaskClaim.objects.filter(job_id=job_id).exists()

    # The same analysis without interruption, in this process, gives the same documents.
    reference = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint=job.fingerprint,
        params=job.params,
        status=AnalysisJob.Status.RUNNING,
    )
    for chunk in pipeline.plan(campaign=campaign, params=job.params):
        pipeline.chunk_compute(job=reference, start=chunk.start, stop=chunk.stop)
    pipeline.finalize(reference)
    for kind in ("metrics", "human", "correlations"):
        assert (
            AnalysisResult.objects.get(job=job, kind=kind).data
            == AnalysisResult.objects.get(job=reference, kind=kind).data
        ), kind


def test_a_worker_started_again_under_its_name_sends_its_dead_predecessors_chunks_at_once(
    celery_worker_process,
    campaign,
    settings,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """As compose's restart policy or systemd's Restart=always does: the same node name, a new
    process. Redis's visibility timeout is left at its default (2,400 s): the job finishes long
    before it would deliver the chunks again."""
    settings_for(campaign, metrics=["bleu", "chrf", "ter"], resamples=100, ar_trials=500)
    settings.EVALSITE_CHUNK_SEGMENTS = 2  # two chunks of the campaign's four segments
    two_processes = {"CELERY_WORKER_CONCURRENCY": "2"}  # one per chunk: both start at once
    job = analysis_request(campaign=campaign).job
    job_id = job.pk
    # Both chunks wait at their writes while the worker is killed: in the middle, however fast.
    with chunks_held(job):
        first = celery_worker_process(name="restarted", env=two_processes)
        deadline = time.monotonic() + 120
        while TaskClaim.objects.filter(job_id=job_id, task="metrics.analysis_chunk").count() < 2:
            assert time.monotonic() < deadline, (tmp_path / "worker-restarted.log").read_text()
            time.sleep(0.05)
        claims = {c.key: c for c in TaskClaim.objects.filter(job_id=job_id)}
        assert {c.starts for c in claims.values()} == {1}
        assert {c.node.split("@")[0] for c in claims.values()} == {"restarted"}
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    killed = time.monotonic()
    assert StatsChunk.objects.filter(job_id=job_id).count() == 0
    assert AnalysisJob.objects.get(pk=job_id).status == AnalysisJob.Status.RUNNING

    celery_worker_process(name="restarted", env=two_processes)
    job = wait_for(job_id, timeout=240)
    assert job.status == AnalysisJob.Status.DONE, job.error
    assert time.monotonic() - killed < 240  # the visibility timeout is 2,400 s
    log = (tmp_path / "worker-restarted.log").read_text()
    assert log.count("sent again: this worker's previous process died with it") == 2, log
    # Every task ended in a living process: no claim is left.
    assert not TaskClaim.objects.filter(job_id=job_id).exists()
