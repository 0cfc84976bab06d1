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
- A running build keeps a heartbeat (``evalsite.jobs.heartbeat``), as judgment imports do: one
  whose heartbeat is older than a minute (its worker died: SIGKILL, the out-of-memory killer)
  is marked failed, naming the stage it stopped in, when the setup page next looks at it; its
  transaction died with the worker, so the tasks are as they were (a build that ends after all
  finds itself failed and rolls back). A queued build that has not moved for
  ``EVALSITE_JOB_STALE_SECONDS`` (its message was lost) is marked failed ("abandoned"). A
  message of a build that has ended does nothing.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import Assignment, ProtocolConfig, TaskBuild
from annotation.tasking.build import config_lock_for_build
from annotation.tasking.pull import config_build_locked
from annotation.tasking.source import TaskError
from evalsite.jobs import (
    BROKER_ERRORS,
    heartbeat,
    progress_forget,
    progress_put,
    record_lock,
    registered_task,
    stale_abandon,
)

logger = logging.getLogger(__name__)

UNDER_WAY = (TaskBuild.Status.QUEUED, TaskBuild.Status.RUNNING)

# The stages a build reports (``tasking.pull.config_build_locked``), as the page names them.
BUILD_STAGES = {
    "removing": gettext_lazy("Removing the old tasks"),
    "reading": gettext_lazy("Reading the campaign's data"),
    "planning": gettext_lazy("Planning screens, tasks and QC items"),
    "writing": gettext_lazy("Writing items"),
}

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
    task_builds_abandon_stale(builds=TaskBuild.objects.filter(config_id=config.pk))
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
    running = TaskBuild.objects.filter(pk=build.pk, status=TaskBuild.Status.RUNNING)
    try:
        with heartbeat(running), translation.override(build.language), transaction.atomic():
            # A second delivery of this build waits for the first one's lock here; then the
            # build has ended, and there is nothing left to do. (Not the build's row lock: the
            # heartbeat updates that row meanwhile.)
            record_lock(running, key=f"task-build:{build.pk}")
            if not running.exists():
                return None
            config = config_lock_for_build(build.config_id)
            result = config_build_locked(config, report)
            finished = timezone.now()
            if not running.update(
                status=TaskBuild.Status.DONE,
                tasks=result.tasks,
                items=result.items,
                saved_screens=result.saved_screens,
                saved_judgments=result.saved_judgments,
                finished=finished,
                progressed=finished,
            ):
                # A reader took the build for dead (its heartbeat had stopped) and said that
                # the tasks are as they were: so they stay.
                transaction.set_rollback(True)
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


def task_builds_abandon_stale(*, builds: QuerySet[TaskBuild]) -> int:
    """Mark the running ``builds`` whose heartbeat is older than
    ``evalsite.jobs.heartbeat_limit()`` failed (the worker stopped; the message names the
    stage), and those under way that have not moved for ``EVALSITE_JOB_STALE_SECONDS``
    ("abandoned"); the number marked."""
    return stale_abandon(
        builds,
        under_way=UNDER_WAY,
        failed=TaskBuild.Status.FAILED,
        what="task build",
        beating=TaskBuild.Status.RUNNING,
        stopped=_stopped_message,
    )


def _stopped_message(build_id: Any) -> str:
    """Why a running build whose heartbeat stopped failed, in its requester's language, naming
    the stage its worker was in (from the cache, where the worker reported it)."""
    language = TaskBuild.objects.filter(pk=build_id).values_list("language", flat=True).first()
    try:
        progress = cache.get(progress_key(build_id))
    except BROKER_ERRORS:
        progress = None
    with translation.override(language or settings.LANGUAGE_CODE):
        stage = BUILD_STAGES.get((progress or {}).get("stage", ""))
        if stage is None:
            return _(
                "The worker building the tasks stopped before its first stage; the tasks are as "
                "they were. Build again."
            )
        return _(
            "The worker building the tasks stopped during “%(stage)s”; the tasks are as they "
            "were. Build again."
        ) % {"stage": stage}


def _reporter(build_id: uuid.UUID) -> Any:
    """Progress of a build, for the setup page (``evalsite.jobs.progress_put``)."""
    key = progress_key(build_id)

    def report(stage: str, done: int, total: int) -> None:
        progress_put(key, {"stage": stage, "done": done, "total": total})

    return report
