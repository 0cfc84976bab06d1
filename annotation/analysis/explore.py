"""Explorations: the analysis of a large campaign with settings other than its own, run by a
Celery worker so that the page that asked never waits (``docs/reports.md``, "Exploring").

A request sends the job once per (inputs, settings) — the analysis cache key names both — and
the page polls :func:`analysis_explore_state` until the result is in the cache, where the page
then finds it. The job's state lives in the cache beside the result (no table: an exploration
is a view of the data, not a record): queued, running with the criteria done, or failed with
its reason. A job whose worker died stops moving; after ``EVALSITE_JOB_STALE_SECONDS`` the next
request starts it again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings as django_settings
from django.core.cache import cache

from annotation.analysis.selectors import analysis_cache_key, campaign_analysis_cached
from annotation.analysis.settings import AnalysisSettings
from annotation.models import Campaign
from evalsite.jobs import BROKER_ERRORS, registered_task

logger = logging.getLogger(__name__)

# The Celery task that runs an exploration, by the name ``annotation.tasks`` registers it under.
TASK_EXPLORE = "annotation.analysis_explore"
# How long a state outlives its last move (the result itself stays as long as the cache keeps
# analyses).
STATE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class ExploreState:
    """Where an exploration stands.

    Attributes:
        status: "queued", "running", "done" (the result is in the cache) or "failed".
        done, total: criteria analysed, of how many (0 of 0 until the job has read them).
        error: why it failed, in words.
    """

    status: str
    done: int = 0
    total: int = 0
    error: str = ""

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "ready": self.status == "done",
            "done": self.done,
            "total": self.total,
            "percent": self.percent,
            "error": self.error,
        }


def _state_key(result_key: str) -> str:
    return f"{result_key}:explore"


def _save(result_key: str, status: str, **fields: Any) -> None:
    state = {"status": status, "moved": time.time(), **fields}
    try:
        cache.set(_state_key(result_key), state, STATE_SECONDS)
    except Exception as exc:  # the page then says the job could not be followed
        logger.warning("exploration state not kept: %s", exc)


def analysis_explore_state(*, campaign: Campaign, settings: AnalysisSettings) -> ExploreState:
    """The state of the exploration of ``campaign`` with ``settings`` ("none" if not asked)."""
    key = analysis_cache_key(campaign=campaign, settings=settings)
    try:
        if cache.get(key) is not None:
            return ExploreState("done")
        state = cache.get(_state_key(key))
    except Exception as exc:
        return ExploreState("failed", error=f"The cache cannot be reached: {exc}")
    if not isinstance(state, dict):
        return ExploreState("none")
    if state["status"] in ("queued", "running") and (
        time.time() - float(state["moved"]) > django_settings.EVALSITE_JOB_STALE_SECONDS
    ):
        return ExploreState("failed", error="The job stopped moving (its worker was lost).")
    return ExploreState(
        str(state["status"]),
        done=int(state.get("done", 0)),
        total=int(state.get("total", 0)),
        error=str(state.get("error", "")),
    )


def analysis_explore_request(*, campaign: Campaign, settings: AnalysisSettings) -> ExploreState:
    """Start the exploration unless it is under way or done; its state."""
    state = analysis_explore_state(campaign=campaign, settings=settings)
    if state.status in ("queued", "running", "done"):
        return state
    key = analysis_cache_key(campaign=campaign, settings=settings)
    _save(key, "queued")
    try:
        registered_task(TASK_EXPLORE).apply_async(
            (str(campaign.pk), settings.as_dict(), key), retry=False
        )
    except BROKER_ERRORS as exc:
        logger.warning("broker unreachable, exploration not sent: %s", exc)
        error = "The task queue cannot be reached right now; reload the page to try again."
        _save(key, "failed", error=error)
        return ExploreState("failed", error=error)
    return ExploreState("queued")


def analysis_explore_run(*, campaign_id: str, settings: dict[str, Any], key: str) -> str:
    """The worker's side: analyse with progress; the result goes to the cache (where the page
    finds it), the state says how far it got or why it failed."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        _save(key, "failed", error="The campaign no longer exists.")
        return "failed"
    _save(key, "running")

    def progress(done: int, total: int) -> None:
        _save(key, "running", done=done, total=total)

    try:
        campaign_analysis_cached(
            campaign=campaign, settings=AnalysisSettings.from_dict(settings), progress=progress
        )
    except Exception as exc:
        _save(key, "failed", error=f"The analysis failed: {type(exc).__name__}: {exc}")
        raise
    _save(key, "done")
    return "done"
