"""The analysis page and the dashboard write the same digits for the same value: both go
through one formatter (``evalsite.formatting.number_text``), for the same campaign."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

ANALYSIS_ROW = re.compile(
    r'<td class="name">([^<]+)</td>\s*<td class="num">([^<]*)</td>\s*<td>[^<]*</td>\s*'
    r'<td>[^<]*</td>\s*<td class="num">([^<]*)</td>'
)
DASHBOARD_ROW = re.compile(
    r'<td class="name">([^<]+)</td>\s*<td class="num">([^<]*)</td>\s*<td class="bar-col">.*?'
    r'</td>\s*<td class="nowrap">[^<]*</td>\s*<td class="nowrap">[^<]*</td>\s*'
    r'<td class="num">([^<]*)</td>',
    re.DOTALL,
)


@pytest.mark.django_db
def test_the_analysis_page_and_the_dashboard_show_the_same_raw_means() -> None:
    owner = make_user("digits-owner", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    analysis_run_sync(campaign=campaign, user=owner)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    analysis = client.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    dashboard = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()

    # (system, raw mean) of every score criterion's systems, as each page writes them.
    on_analysis = sorted((name, raw) for name, _score, raw in ANALYSIS_ROW.findall(analysis))
    on_dashboard = sorted((name, raw) for name, _score, raw in DASHBOARD_ROW.findall(dashboard))
    assert len(on_analysis) >= 8  # systems × (adequacy, fluency, direct assessment)
    assert all(re.fullmatch(r"-?\d+\.\d\d", raw) for _name, raw in on_analysis)
    assert on_dashboard == on_analysis
