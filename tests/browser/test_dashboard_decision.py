"""In a real Chromium, with a real Celery worker: an organizer keeps the dashboard open while an
include/exclude decision is recorded. The decision schedules a recomputation as new judgments
do, the worker computes it, and the open dashboard shows the annotator left out of the
aggregates, without a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from annotation.analysis.services import annotator_decision_record
from tests.browser.annotator_pages import log_in, polled_until
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _qc_cells(page: Any, username: str) -> list[str]:
    """The "In aggregates" cell of every QC row of ``username`` on the page."""
    rows = page.locator("#qc tbody tr", has=page.locator(f"td.name:text-is('{username}')"))
    return [rows.nth(i).locator("td").last.inner_text() for i in range(rows.count())]


def test_a_decision_refreshes_an_open_dashboard(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, settings, output_dir: Path
) -> None:
    organizer = make_user("dora", organizer=True)
    campaign = make_judged_demo_campaign(owner=organizer, items_per_task=10)
    first = analysis_run_sync(campaign=campaign)
    settings.EVALSITE_AUTO_ANALYSIS = True
    settings.EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = 1
    cache.delete(f"evalsite:analysis-scheduled:{campaign.pk}")
    celery_worker_process(name="refresher")

    log_in(page, live_server, "dora", lands_on="**/campaigns/")
    page.clock.install()  # runs as usual; polled_until moves it on to the next poll
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/dashboard/")
    page.wait_for_selector("#heatmaps .js-plotly-plot svg.main-svg")
    before = _qc_cells(page, "rater-a")
    assert before
    assert set(before) == {"yes"}
    page.evaluate("() => { window.sameDocument = true; }")

    rater = get_user_model().objects.get(username="rater-a")
    annotator_decision_record(
        campaign=campaign,
        annotator=rater,
        included=False,
        reason="spot check",
        decided_by=organizer,
    )

    # The scheduled job runs in the worker; the page swaps its panels in when it ends.
    polled_until(
        page,
        "(first) => document.getElementById('dashboard').dataset.resultsJob !== first",
        str(first.pk),
    )
    page.wait_for_selector("#heatmaps .js-plotly-plot svg.main-svg")
    assert set(_qc_cells(page, "rater-a")) == {"no (by decision)"}
    assert page.evaluate("() => window.sameDocument === true")
    assert page.is_hidden("#reload-flag")
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.locator("#qc").screenshot(path=shots / "dashboard-after-decision.png")
