"""In a real Chromium, with a real Celery worker: an organizer keeps the analysis page open on a
campaign large enough that the page shows the stored background results. Making the WMT preset
the campaign's setting schedules a recomputation; the worker computes it and the open page
shows the new results, without a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache

from annotation.analysis.selectors import analysis_cache_key
from annotation.analysis.services import campaign_analysis_settings_save
from annotation.analysis.settings import AnalysisSettings
from tests.browser.annotator_pages import log_in, polled_until
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_setting_change_refreshes_an_open_analysis_page(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, settings, output_dir: Path
) -> None:
    organizer = make_user("ada", organizer=True)
    campaign = make_judged_demo_campaign(owner=organizer, items_per_task=10)
    first = analysis_run_sync(campaign=campaign)
    # As on a campaign of millions of judgments: the page never analyses in the request.
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 0
    settings.EVALSITE_AUTO_ANALYSIS = True
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = 1
    cache.delete(f"evalsite:analysis-scheduled:{campaign.pk}")
    celery_worker_process(name="analysis-page")

    log_in(page, live_server, "ada", lands_on="**/campaigns/")
    page.clock.install()  # runs as usual; polled_until moves it on to the next poll
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/analysis/")
    freshness = page.locator("#analysis-freshness")
    assert "up to date" in freshness.inner_text()
    methods = page.locator(".hint.method")
    assert "basis=real_and_repeat" in methods.first.inner_text()
    page.evaluate("() => { window.sameDocument = true; }")

    campaign.refresh_from_db()
    changed = campaign_analysis_settings_save(
        campaign=campaign, settings=AnalysisSettings().with_preset("wmt")
    )
    assert changed

    # The scheduled job runs in the worker; the page swaps its results in when it ends.
    polled_until(
        page,
        "(first) => document.getElementById('analysis-results').dataset.resultsJob !== first",
        str(first.pk),
    )
    assert "up to date" in page.locator("#analysis-freshness").inner_text()
    assert page.locator("#settings-preset").inner_text() == "WMT conventions"
    texts: list[Any] = page.locator(".hint.method").all_inner_texts()
    score_methods = [t for t in texts if "basis=" in t]
    assert score_methods
    assert all("basis=all" in t for t in score_methods)
    assert all("significance_test=mannwhitney" in t for t in score_methods)
    assert page.evaluate("() => window.sameDocument === true")
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.screenshot(path=shots / "analysis-page-after-setting-change.png", full_page=False)


def test_exploring_a_large_campaign_shows_progress_then_the_result(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, settings, output_dir: Path
) -> None:
    organizer = make_user("eve", organizer=True)
    campaign = make_judged_demo_campaign(owner=organizer, items_per_task=10)
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 0
    explored = AnalysisSettings(resamples=150).with_preset("wmt")
    cache.delete(analysis_cache_key(campaign=campaign, settings=explored))

    log_in(page, live_server, "eve", lands_on="**/campaigns/")
    page.goto(
        f"{live_server.url}/campaigns/{campaign.pk}/analysis/?preset=wmt&resamples=150&analyse=1"
    )
    # The page answers at once: no results yet, the job's progress instead.
    assert page.locator("#explore-progress").is_visible()
    assert page.locator("section.criterion").count() == 0
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.screenshot(path=shots / "analysis-exploring.png")

    celery_worker_process(name="explore-page")
    page.wait_for_selector("section.criterion", timeout=120_000)
    assert page.locator("#explore-progress").count() == 0
    assert "exploring other settings" in page.locator("#settings-state").inner_text()
    texts = [t for t in page.locator(".hint.method").all_inner_texts() if "basis=" in t]
    assert texts
    assert all("basis=all" in t and "resamples=150" in t for t in texts)
