"""Reads of the task set-up page: the newest build of every protocol config, with its progress."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext as _

from annotation.models import (
    Campaign,
    TaskBuild,
)
from annotation.tasking.background import (
    BUILD_STAGES,
    progress_key,
    task_builds_abandon_stale,
)
from evalsite.formatting import count_text
from evalsite.jobs import BROKER_ERRORS


def task_builds_latest(*, campaign: Campaign) -> dict[int, dict[str, Any]]:
    """The newest build of every protocol config of the campaign that has one, by config id,
    as the setup page and its polls show it: status, stage, rows written and a message.

    Progress of a running build comes from the cache (its transaction hides it from the
    database, ``annotation.tasking.background``); a cache that cannot be read only hides the
    numbers."""

    # A running build whose worker died is failed here, when the page looks (its heartbeat).
    task_builds_abandon_stale(builds=TaskBuild.objects.filter(config__campaign=campaign))
    newest = TaskBuild.objects.filter(config=OuterRef("config")).order_by("-created")
    builds = list(
        TaskBuild.objects.filter(config__campaign=campaign, pk=Subquery(newest.values("pk")[:1]))
    )
    running = [b for b in builds if b.status == TaskBuild.Status.RUNNING]
    progress: dict[str, Any] = {}
    if running:
        try:
            progress = cache.get_many([progress_key(b.pk) for b in running])
        except BROKER_ERRORS:
            progress = {}
    return {b.config_id: _build_state(b, progress.get(progress_key(b.pk))) for b in builds}


def _build_state(build: TaskBuild, progress: dict[str, Any] | None) -> dict[str, Any]:
    stage, done, total = "", 0, 0
    if build.status == TaskBuild.Status.RUNNING and progress:
        stage, done, total = progress["stage"], progress["done"], progress["total"]
    percent = round(100 * done / total) if total else 0
    if build.status == TaskBuild.Status.DONE:
        message = _("Built %(tasks)s tasks with %(items)s items.") % {
            "tasks": count_text(build.tasks),
            "items": count_text(build.items),
        }
        if build.saved_screens or build.saved_judgments:
            message += " " + _(
                "Merging identical outputs saved %(screens)s screens and %(judgments)s "
                "judgments of outputs (all annotators of a task counted)."
            ) % {
                "screens": count_text(build.saved_screens),
                "judgments": count_text(build.saved_judgments),
            }
    elif build.status == TaskBuild.Status.FAILED:
        message = build.error
    elif build.status == TaskBuild.Status.QUEUED:
        message = _("Waiting for a worker.")
    elif stage == "writing":
        message = _("%(stage)s: %(done)s of %(total)s rows (%(percent)d%%).") % {
            "stage": BUILD_STAGES[stage],
            "done": count_text(done),
            "total": count_text(total),
            "percent": percent,
        }
    else:
        message = f"{BUILD_STAGES.get(stage, _('Starting'))}…"
    return {
        "id": str(build.pk),
        "config": build.config_id,
        "status": build.status,
        "status_label": str(build.get_status_display()),
        "active": build.active,
        "stage": stage,
        "done": done,
        "total": total,
        "percent": percent,
        "message": message,
        "tasks": build.tasks,
        "items": build.items,
        "saved_screens": build.saved_screens,
        "saved_judgments": build.saved_judgments,
        "tasks_text": count_text(build.tasks),
        "items_text": count_text(build.items),
        "created": build.created.isoformat(),
        "finished": build.finished.isoformat() if build.finished else None,
    }
