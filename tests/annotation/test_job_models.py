"""The three kinds of background job record share one abstract model: its fields, statuses,
ordering and the ``active`` and ``percent_of`` answers."""

from __future__ import annotations

import pytest

from annotation.models import Job, JudgmentImportJob, TaskBuild
from metrics.models import AnalysisJob

JOBS = (TaskBuild, JudgmentImportJob, AnalysisJob)
SHARED = ("id", "status", "error", "requested_by", "created", "started", "finished", "progressed")


@pytest.mark.parametrize("model", JOBS, ids=[m.__name__ for m in JOBS])
def test_every_job_record_has_the_shared_fields_and_order(model: type[Job]) -> None:
    assert issubclass(model, Job)
    names = [f.name for f in model._meta.concrete_fields]
    assert set(SHARED) <= set(names)
    assert model._meta.ordering == ["-created"]
    assert [c for c, _ in model._meta.get_field("status").choices] == [
        "queued",
        "running",
        "done",
        "failed",
    ]


@pytest.mark.parametrize("model", JOBS, ids=[m.__name__ for m in JOBS])
def test_a_queued_or_running_job_is_active(model: type[Job]) -> None:
    assert [model(status=s).active for s in model.Status] == [True, True, False, False]


def test_percent_counts_steps_and_falls_back_on_the_status() -> None:
    assert AnalysisJob(status="running", progress_done=1, progress_total=3).percent == 33
    assert AnalysisJob(status="running", progress_done=2, progress_total=3).percent == 67
    assert AnalysisJob(status="running").percent == 0
    assert AnalysisJob(status="done").percent == 100
    assert TaskBuild(status="done").percent_of(0, 0) == 100
    assert TaskBuild(status="failed").percent_of(5, 10) == 50
