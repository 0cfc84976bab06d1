"""In a real Chromium: the analysis page and the dashboard of one campaign show every system's
raw mean with the same digits (one formatter behind both pages)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.annotator_pages import log_in
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each score criterion's system rows: (system, raw mean) as the reader sees the cells.
ANALYSIS_RAW = """() => [...document.querySelectorAll('table.systems tbody tr')]
  .filter((tr) => tr.cells.length === 11)
  .map((tr) => [tr.querySelector('td.name').innerText, tr.cells[7].innerText])"""
DASHBOARD_RAW = """() => [...document.querySelectorAll('#human tbody tr')]
  .filter((tr) => tr.querySelectorAll('td.nowrap').length === 2)
  .map((tr) => [tr.querySelector('td.name').innerText, tr.querySelectorAll('td.nowrap')[1]
    .nextElementSibling.innerText])"""


def _sorted(rows: Any) -> list[tuple[str, str]]:
    return sorted((name, raw) for name, raw in rows)


def test_the_analysis_page_and_the_dashboard_show_the_same_digits(page, live_server) -> None:  # type: ignore[no-untyped-def]
    organizer = make_user("digits", organizer=True)
    campaign = make_judged_demo_campaign(owner=organizer, items_per_task=10)
    analysis_run_sync(campaign=campaign)
    log_in(page, live_server, "digits", lands_on="**/campaigns/")

    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/analysis/")
    on_analysis = _sorted(page.evaluate(ANALYSIS_RAW))
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/dashboard/")
    on_dashboard = _sorted(page.evaluate(DASHBOARD_RAW))

    assert len(on_analysis) >= 8  # systems × (adequacy, fluency, direct assessment)
    assert all(re.fullmatch(r"-?\d+\.\d\d", raw) for _name, raw in on_analysis)
    assert on_dashboard == on_analysis
