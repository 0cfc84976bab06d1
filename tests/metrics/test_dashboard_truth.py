"""The dashboard says what the campaign does: its QC caption names the test, space and
threshold of the campaign's analysis setting (Mann–Whitney under the WMT preset, not a fixed
"paired t"), and Google's MQM TSV is offered only where an MQM protocol writes it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD
from tests.span_factories import generated_span_campaign

pytestmark = pytest.mark.django_db


def _dashboard(owner, campaign) -> str:  # type: ignore[no-untyped-def]
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    return client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()


def _caption(page: str) -> str:
    start = page.index('id="qc-method"')
    return page[start : page.index("</p>", start)]


def test_the_qc_caption_reads_the_campaigns_setting() -> None:
    owner, campaign, _config = generated_span_campaign(11, "esa")
    analysis_run_sync(campaign=campaign, user=owner)
    caption = _caption(_dashboard(owner, campaign))
    assert "paired t-test on raw scores, p ≤ 0.05" in caption
    assert "left out of the aggregates" in caption

    campaign.analysis_settings = {
        "qc_test": "mannwhitney",
        "qc_space": "z",
        "threshold": 0.01,
        "include_failed": True,
    }
    campaign.save(update_fields=["analysis_settings"])
    analysis_run_sync(campaign=campaign, user=owner)
    caption = _caption(_dashboard(owner, campaign))
    assert "paired t" not in caption
    assert "Mann" in caption
    assert "p ≤ 0.01" in caption
    assert "stay in the aggregates" in caption


@pytest.mark.parametrize(("protocol", "offered"), [("mqm", True), ("esa", False)])
def test_mqm_tsv_is_offered_only_for_mqm(protocol: str, offered: bool) -> None:
    owner, campaign, _config = generated_span_campaign(12, protocol)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    # The dashboard has the error-span section once a human analysis is stored.
    assert 'id="error-spans"' not in _dashboard(owner, campaign)
    analysis_run_sync(campaign=campaign, user=owner)
    assert 'id="error-spans"' in _dashboard(owner, campaign)
    mqm_tsv = reverse("campaign_report_spans", args=[campaign.pk, "mqm.tsv"])
    csv_link = reverse("campaign_report_spans", args=[campaign.pk, "csv"])
    for url in ("campaign_dashboard", "campaign_analysis"):
        page = client.get(reverse(url, args=[campaign.pk])).content.decode()
        assert csv_link in page
        assert (mqm_tsv in page) is offered
