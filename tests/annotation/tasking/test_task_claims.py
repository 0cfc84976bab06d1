"""Tasks that die with their worker process: each task of a job records that it runs (a
``TaskClaim``) and removes the record when it ends, so a record that outlives its task says the
process died with it. A task whose process died with it twice fails its job with a message
instead of running a third time; a worker that starts under the name of one that died sends
that one's tasks again (``tests/metrics/test_analysis_worker.py`` kills a real worker for it), but
fails those that died twice and leaves alone those of other workers, of jobs no longer under
way, and of a namesake that is alive."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from metrics.models import AnalysisJob, StatsChunk, TaskClaim
from metrics.services import task_claim, task_claim_clear, task_claim_key
from metrics.tasks import analysis_chunk, tasks_rescue

pytestmark = pytest.mark.django_db(transaction=True)

CHUNK = "metrics.analysis_chunk"


def job_of(campaign: Any, status: str = AnalysisJob.Status.RUNNING) -> AnalysisJob:
    return AnalysisJob.objects.create(
        campaign=campaign, fingerprint="f" * 64, status=status, stage=AnalysisJob.Stage.STATISTICS
    )


def claim(job: AnalysisJob, *, node: str, starts: int, start: int = 0) -> TaskClaim:
    args = [str(job.pk), start, start + 10]
    return TaskClaim.objects.create(
        job=job,
        key=task_claim_key(CHUNK, args),
        task=CHUNK,
        args=args,
        node=node,
        incarnation="a-dead-process",
        starts=starts,
    )


def test_a_claim_counts_the_starts_whose_process_died_and_goes_when_the_task_ends(
    campaign,
) -> None:  # type: ignore[no-untyped-def]
    job = job_of(campaign)
    args = [str(job.pk), 0, 10]
    mine = {"job_id": job.pk, "task": CHUNK, "args": args}
    assert task_claim(**mine, node="w@h", incarnation="first") == 0
    # Started again while the claim is there: the first process died with the task.
    assert task_claim(**mine, node="w@h", incarnation="second") == 1
    stored = TaskClaim.objects.get(job=job)
    assert (stored.key, stored.starts, stored.incarnation) == (f"{CHUNK} 0 10", 2, "second")
    assert stored.args == args
    task_claim_clear(**mine)
    assert not TaskClaim.objects.exists()
    assert task_claim(**mine, node="w@h", incarnation="third") == 0

    # A message delivered again after its job finished claims nothing.
    done = job_of(campaign, AnalysisJob.Status.DONE)
    args = [str(done.pk), 0, 10]
    assert task_claim(job_id=done.pk, task=CHUNK, args=args, node="w@h", incarnation="x") == 0
    assert not TaskClaim.objects.filter(job=done).exists()


def test_a_task_whose_process_died_twice_fails_its_job_instead_of_running(campaign) -> None:  # type: ignore[no-untyped-def]
    job = job_of(campaign)
    claim(job, node="w@h", starts=2)
    analysis_chunk.apply(args=(str(job.pk), 0, 10))
    job.refresh_from_db()
    assert job.status == AnalysisJob.Status.FAILED
    assert job.error == (
        "Scoring segments 0–10 failed: the worker process running it died twice "
        "(killed, or out of memory?)."
    )
    assert not StatsChunk.objects.filter(job=job).exists()
    assert not TaskClaim.objects.exists()


def test_a_starting_worker_fails_what_died_twice_and_leaves_other_claims_alone(
    campaign,
) -> None:  # type: ignore[no-untyped-def]
    twice = job_of(campaign)
    claim(twice, node="w@h", starts=2)
    finished = job_of(campaign, AnalysisJob.Status.DONE)
    claim(finished, node="w@h", starts=1)
    elsewhere = job_of(campaign)
    claim(elsewhere, node="other@h", starts=1)

    assert tasks_rescue(node="w@h") == 0

    twice.refresh_from_db()
    assert twice.status == AnalysisJob.Status.FAILED
    assert "died twice" in twice.error
    # The finished job's claim is dropped; the other worker's stays, its job untouched.
    assert list(TaskClaim.objects.values_list("node", flat=True)) == ["other@h"]
    elsewhere.refresh_from_db()
    assert elsewhere.status == AnalysisJob.Status.RUNNING


def test_a_starting_worker_sends_nothing_while_a_namesake_is_alive(
    celery_worker_process, campaign
) -> None:  # type: ignore[no-untyped-def]
    celery_worker_process(name="twin")
    node = f"twin@{socket.gethostname()}"
    job = job_of(campaign)
    claim(job, node=node, starts=1)

    # The live worker named twin may be running the task: it is not sent again.
    assert tasks_rescue(node=node) == 0
    assert TaskClaim.objects.get(job=job).starts == 1
    job.refresh_from_db()
    assert job.status == AnalysisJob.Status.RUNNING
