"""Exploring other settings on a large campaign never makes the page wait: a real Celery worker
analyses them while the page shows the job's progress, and the page then shows the result from
the cache. A job that cannot run says why."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation.analysis.explore import analysis_explore_run, analysis_explore_state
from annotation.analysis.selectors import analysis_cache_key, campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from tests.dashboard_factories import make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db(transaction=True)

QUERY = "preset=wmt&resamples=100&analyse=1"
EXPLORED = AnalysisSettings(resamples=100).with_preset("wmt")


def test_a_large_campaign_is_explored_by_a_worker_while_the_page_shows_progress(
    celery_worker_process, settings: Any
) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("explorer", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 0  # as on a campaign of millions of judgments
    cache.delete(analysis_cache_key(campaign=campaign, settings=EXPLORED))
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("campaign_analysis", args=[campaign.pk]) + "?" + QUERY

    # No worker yet: the page answers at once, with the job queued and nothing computed.
    page = client.get(url)
    shown = page.context["shown"]
    assert shown.analysis is None
    assert shown.explore.status == "queued"
    html = page.content.decode()
    assert 'id="explore-progress"' in html
    assert "computed in the background" in html
    status_url = reverse("campaign_analysis_explore", args=[campaign.pk]) + "?" + QUERY
    assert client.get(status_url).json()["status"] == "queued"
    # Asking again joins the queued job.
    assert client.get(url).context["shown"].explore.status == "queued"

    celery_worker_process(name="explorer")
    deadline = time.monotonic() + 120
    while (state := client.get(status_url).json())["status"] != "done":
        assert state["status"] in ("queued", "running"), state
        assert time.monotonic() < deadline, state
        time.sleep(0.3)
    assert state == {
        "status": "done",
        "ready": True,
        "done": 0,
        "total": 0,
        "percent": 0,
        "error": "",
    }

    # The page now shows the worker's result: the analysis with the explored settings.
    page = client.get(url)
    shown = page.context["shown"]
    assert shown.explore is None
    assert shown.campaign_setting is False
    direct = campaign_analysis_compute(campaign=campaign, settings=EXPLORED)
    assert shown.analysis.to_json() == direct.to_json()


def test_an_exploration_that_cannot_run_says_why(settings: Any) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("explorer2", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    key = analysis_cache_key(campaign=campaign, settings=EXPLORED)
    cache.delete(key)
    assert analysis_explore_state(campaign=campaign, settings=EXPLORED).status == "none"
    # The worker's side for a campaign that no longer exists (deleted since the request).
    gone = str(uuid.uuid4())
    assert analysis_explore_run(campaign_id=gone, settings=EXPLORED.as_dict(), key=key) == "failed"
    state = analysis_explore_state(campaign=campaign, settings=EXPLORED)
    assert (state.status, state.error) == ("failed", "The campaign no longer exists.")
    # The page's next request starts it again rather than showing the failure for ever.
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 0
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]) + "?" + QUERY)
    assert page.context["shown"].explore.status == "queued"


@pytest.mark.django_db
def test_the_analysis_reports_its_progress_criterion_by_criterion() -> None:
    owner = make_user("explorer3", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    calls: list[tuple[int, int]] = []
    analysis = campaign_analysis_compute(
        campaign=campaign,
        settings=EXPLORED,
        progress=lambda done, total: calls.append((done, total)),
    )
    n = len(analysis.criteria)
    assert n == 6  # adequacy, fluency, rank, DA's score, ESA's score, MQM
    assert calls == [(done, n) for done in range(1, n + 1)]
