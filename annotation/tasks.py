"""Celery tasks of the annotation app: thin wrappers that take ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from annotation.analysis.explore import TASK_EXPLORE, analysis_explore_run
from annotation.judgment_import.background import (
    TASK_JUDGMENT_IMPORT,
    judgment_import_fail,
    judgment_import_requeue,
    judgment_import_run,
)
from annotation.tasking.background import TASK_BUILD, task_build_fail, task_build_run
from evalsite.jobs import RETRY, RecordTask


class BuildTask(RecordTask):
    """A build that fails for good is marked failed with a readable message."""

    record_key = "build_id"
    subject = "The build"

    @staticmethod
    def fail(record_id: Any, message: str) -> Any:
        return task_build_fail(build_id=record_id, error=message)


@shared_task(base=BuildTask, name=TASK_BUILD, **RETRY)
def task_build(build_id: str) -> str:
    """Build the tasks of a queued :class:`~annotation.models.TaskBuild`."""
    build = task_build_run(build_id=build_id)
    return "skipped" if build is None else build.status


class ImportTask(RecordTask):
    """An import that fails for good is marked failed with a readable message, as a build is."""

    record_key = "job_id"
    subject = "The import"

    @staticmethod
    def fail(record_id: Any, message: str) -> Any:
        return judgment_import_fail(job_id=record_id, error=message)

    def on_retry(  # type: ignore[no-untyped-def]
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        # Waiting for the retry, the job keeps no heartbeat: it waits as a queued one.
        job_id = args[0] if args else kwargs.get("job_id")
        if job_id is not None:
            judgment_import_requeue(job_id=job_id)


@shared_task(base=ImportTask, name=TASK_JUDGMENT_IMPORT, **RETRY)
def judgment_import(job_id: str) -> str:
    """Import the judgments of a queued :class:`~annotation.models.JudgmentImportJob`."""
    job = judgment_import_run(job_id=job_id)
    return "skipped" if job is None else job.status


@shared_task(name=TASK_EXPLORE, **RETRY)
def analysis_explore(campaign_id: str, settings: dict[str, Any], key: str) -> str:
    """Analyse a campaign with settings an analyst is exploring (the result goes to the
    cache, where the analysis page finds it)."""
    return analysis_explore_run(campaign_id=campaign_id, settings=settings, key=key)
