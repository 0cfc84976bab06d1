"""Background builds of a protocol config's tasks (services).

A build of WMT size (2,000 segments × 15 systems) takes tens of seconds, too long for a web
request: the setup page records a :class:`TaskBuild` and a Celery worker runs it
(``annotation.tasks.task_build``), as analysis jobs run (``docs/background.md``).

- At most one build per config is queued or running (a partial unique constraint): a second
  click while one is under way joins it instead of starting another.
- The build itself is one transaction (``tasking.tasks_build_locked``): a build that fails, or whose
  worker dies, leaves the tasks as they were. The build record turns done in the same
  transaction, so the page never shows "done" without the tasks nor the tasks without "done".
- While that transaction runs, nothing it writes is visible to others, its progress included:
  the worker reports its stage and rows written to the cache (Redis, or files in ``var/cache``
  for the embedded default), which the page reads.
- A build whose worker died (SIGKILL, the out-of-memory killer) stays "running" until Redis
  delivers its message again (the visibility timeout), or until it has not moved for
  ``EVALSITE_JOB_STALE_SECONDS`` — the analysis jobs' rule: the next click then marks it failed
  ("abandoned") and starts a new build. A message of a build that has ended does nothing.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from annotation.models import Assignment, ProtocolConfig, TaskBuild
from annotation.tasking.build import config_lock_for_build
from annotation.tasking.pull import config_build_locked
from annotation.tasking.source import TaskError
from evalsite.jobs import (
    BROKER_ERRORS,
    progress_forget,
    progress_put,
    registered_task,
    stale_abandon,
)

logger = logging.getLogger(__name__)

UNDER_WAY = (TaskBuild.Status.QUEUED, TaskBuild.Status.RUNNING)

# The Celery task that runs a build, by the name ``annotation.tasks`` registers it under: the task
# calls this module, so this module looks the task up instead of importing it.
TASK_BUILD = "annotation.task_build"


@dataclass(frozen=True)
class BuildRequest:
    build: TaskBuild
    joined: bool  # a build of the config was already under way: no second one was started
    queued: bool  # False: the queue could not be reached, and the build failed saying so


def progress_key(build_id: Any) -> str:
    return f"evalsite:task-build:{build_id}"


def task_build_request(*, config: ProtocolConfig, user: User | None = None) -> BuildRequest:
    """Queue a build of the config's tasks, or join the one under way. Raises ``TaskError``
    at once when annotators have started (a rebuild would be refused anyway)."""
    task_builds_abandon_stale(config_id=config.pk)
    if Assignment.objects.filter(task__config=config).exists():
        raise TaskError(_("Annotators have started on these tasks; they cannot be rebuilt."))
    for _attempt in range(3):
        try:
            with transaction.atomic():
                build = TaskBuild.objects.create(
                    config=config,
                    requested_by=user,
                    language=translation.get_language() or settings.LANGUAGE_CODE,
                )
        except IntegrityError:
            # The constraint decides, not a check before the insert: two clicks at once.
            existing = TaskBuild.objects.filter(config=config, status__in=UNDER_WAY).first()
            if existing is not None:
                return BuildRequest(build=existing, joined=True, queued=True)
            continue  # it ended between the insert and the look-up: try again
        return BuildRequest(build=build, joined=False, queued=_send(build))
    raise RuntimeError(f"could not queue a build of {config}")


def _send(build: TaskBuild) -> bool:
    """Send a build to the workers without waiting for a broker that is down; a build that
    cannot be sent fails at once, saying so (the organizer clicks again later)."""
    try:
        registered_task(TASK_BUILD).apply_async((str(build.pk),), retry=False)
    except BROKER_ERRORS as exc:
        logger.warning("broker unreachable, build %s not sent: %s", build.pk, exc)
        task_build_fail(
            build_id=build.pk,
            error=_(
                "The task queue cannot be reached right now, so the build could not start. "
                "Build again when it is back."
            ),
        )
        build.refresh_from_db()
        return False
    return True


def task_build_run(*, build_id: Any) -> TaskBuild | None:
    """Run a queued build (the worker's side); ``None`` when there is nothing to do (the build
    no longer exists, or has ended: a message delivered again). A refused build (``TaskError``)
    is marked failed with its message, in the requester's language; other errors propagate
    (the Celery task marks the build failed) and leave the tasks as they were."""
    now = timezone.now()
    # Claimed with a conditional UPDATE: a build that ended is never run again.
    if not TaskBuild.objects.filter(pk=build_id, status__in=UNDER_WAY).update(
        status=TaskBuild.Status.RUNNING, started=now, progressed=now
    ):
        return None
    build = TaskBuild.objects.get(pk=build_id)
    report = _reporter(build.pk)
    try:
        with translation.override(build.language), transaction.atomic():
            config = config_lock_for_build(build.config_id)
            # A second delivery of this build waits for the first one's lock here; then the
            # build is done, and there is nothing left to do.
            if not (
                TaskBuild.objects.select_for_update()
                .filter(pk=build.pk, status=TaskBuild.Status.RUNNING)
                .exists()
            ):
                return None
            result = config_build_locked(config, report)
            finished = timezone.now()
            TaskBuild.objects.filter(pk=build.pk).update(
                status=TaskBuild.Status.DONE,
                tasks=result.tasks,
                items=result.items,
                saved_screens=result.saved_screens,
                saved_judgments=result.saved_judgments,
                finished=finished,
                progressed=finished,
            )
    except TaskError as exc:
        task_build_fail(build_id=build.pk, error=str(exc))
    finally:
        progress_forget(progress_key(build.pk))
    build.refresh_from_db()
    return build


def task_build_fail(*, build_id: Any, error: str) -> bool:
    """Mark a queued or running build failed with a readable ``error``; one that has ended
    keeps its status. Whether the build was marked."""
    now = timezone.now()
    return bool(
        TaskBuild.objects.filter(pk=build_id, status__in=UNDER_WAY).update(
            status=TaskBuild.Status.FAILED, error=error[:4000], finished=now, progressed=now
        )
    )


def task_builds_abandon_stale(*, config_id: int) -> int:
    """Mark the config's builds that have not moved for ``EVALSITE_JOB_STALE_SECONDS`` failed
    ("abandoned"), as analysis jobs are; the number marked."""
    return stale_abandon(
        TaskBuild.objects.filter(config_id=config_id),
        under_way=UNDER_WAY,
        failed=TaskBuild.Status.FAILED,
        what="task build",
    )


def _reporter(build_id: uuid.UUID) -> Any:
    """Progress of a build, for the setup page (``evalsite.jobs.progress_put``)."""
    key = progress_key(build_id)

    def report(stage: str, done: int, total: int) -> None:
        progress_put(key, {"stage": stage, "done": done, "total": total})

    return report
