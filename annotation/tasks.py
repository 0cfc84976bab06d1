"""Celery tasks of the annotation app: thin wrappers that take ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from annotation.analysis.explore import TASK_EXPLORE, analysis_explore_run
from annotation.tasking.background import TASK_BUILD, task_build_fail, task_build_run
from evalsite.jobs import RETRY, failure_record


class BuildTask(Task):  # type: ignore[misc]
    """A build that fails for good — an error that is not retried, retries used up, the soft
    or the hard time limit — is marked failed with a readable message, so that it never stays
    "running" for ever. (Celery calls ``on_failure`` in the pool process for an exception, and
    in the worker's main process when the hard time limit killed the pool process.)"""

    def on_failure(  # type: ignore[no-untyped-def]
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        failure_record(
            exc,
            args,
            kwargs,
            key="build_id",
            subject="The build",
            max_retries=self.max_retries,
            fail=lambda build_id, message: task_build_fail(build_id=build_id, error=message),
        )


@shared_task(base=BuildTask, name=TASK_BUILD, **RETRY)
def task_build(build_id: str) -> str:
    """Build the tasks of a queued :class:`~annotation.models.TaskBuild`."""
    build = task_build_run(build_id=build_id)
    return "skipped" if build is None else build.status


@shared_task(name=TASK_EXPLORE, **RETRY)
def analysis_explore(campaign_id: str, settings: dict[str, Any], key: str) -> str:
    """Analyse a campaign with settings an analyst is exploring (the result goes to the
    cache, where the analysis page finds it)."""
    return analysis_explore_run(campaign_id=campaign_id, settings=settings, key=key)
