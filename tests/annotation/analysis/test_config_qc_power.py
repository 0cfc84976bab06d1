"""A protocol's QC mix and task size as bad-reference pairs, the figures of its QC test and
the warnings the setup page shows."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from scipy import stats

from annotation.analysis.qc_power import ConfigQCPower, config_qc_power, percent
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import ProtocolConfig
from evalcore.human.qc_power import pairs_for_target, qc_power
from tests.crowd_factories import crowd_study
from tests.factories import PASSWORD, make_config, make_rich_campaign

DEFAULTS = AnalysisSettings()


def _qc(
    protocol: str = "direct_assessment",
    *,
    settings: AnalysisSettings = DEFAULTS,
    n_systems: int = 4,
    places: list[tuple[int, int]] | None = None,
    **fields: Any,
) -> ConfigQCPower | None:
    config = ProtocolConfig(protocol=protocol, **fields)
    return config_qc_power(
        config=config, settings=settings, n_systems=n_systems, places=places or []
    )


def test_the_issues_two_bad_references_per_task_are_flagged_as_a_weak_test() -> None:
    # Twenty single-output items at 10 per 100: two pairs, paired t with one degree of freedom.
    qc = _qc(items_per_task=20, qc_bad_reference=10)
    assert qc is not None
    assert (qc.bad_references, qc.pairs) == (2, 2)
    assert qc.power == qc_power(2)
    assert qc.careful_text == "18 %"
    (warning,) = qc.warnings
    assert "2 bad-reference pairs" in warning
    assert "a careful worker passes 18 %" in warning
    assert f"About {pairs_for_target()} pairs reach 90 %" in warning


def test_a_task_without_a_bad_reference_says_that_nobody_can_be_judged() -> None:
    qc = _qc(items_per_task=3, qc_bad_reference=10)
    assert qc is not None
    assert qc.bad_references == 0
    assert not qc.power.testable
    (warning,) = qc.warnings
    assert "holds no bad-reference item" in warning


def test_one_pair_is_not_enough_for_the_test() -> None:
    qc = _qc(items_per_task=10, qc_bad_reference=10)
    assert qc is not None
    assert qc.pairs == 1
    (warning,) = qc.warnings
    assert "needs at least two" in warning


def test_every_degraded_output_of_a_screen_is_a_pair_and_each_criterion_is_tested() -> None:
    # Adequacy and fluency, 4 outputs a screen: one bad-reference screen is 4 pairs, tested
    # on both criteria; a screen is never wider than the campaign's systems.
    qc = _qc("adequacy_fluency", items_per_task=30, qc_bad_reference=10, outputs_per_screen=4)
    assert qc is not None
    assert (qc.bad_references, qc.pairs) == (3, 12)
    assert qc.power == qc_power(12, criteria=2)
    narrow = _qc(
        "adequacy_fluency",
        n_systems=2,
        items_per_task=30,
        qc_bad_reference=10,
        outputs_per_screen=4,
    )
    assert narrow is not None
    assert narrow.pairs == 6


def test_document_screens_count_the_segments_of_each_bad_window() -> None:
    # Six documents of 10 segments, whole-document screens, tasks of about 100 segments:
    # 10 screens a task, one of them a bad reference of 10 segments.
    places = [(document, place) for document in range(6) for place in range(10)]
    qc = _qc("esa", screen="document", places=places, items_per_task=100, qc_bad_reference=10)
    assert qc is not None
    assert (qc.bad_references, qc.pairs) == (1, 10)
    # Three screens a task hold no bad reference: the issue's rounding to nothing.
    small = _qc("esa", screen="document", places=places, items_per_task=30, qc_bad_reference=10)
    assert small is not None
    assert small.bad_references == 0
    assert "holds no bad-reference item" in small.warnings[0]
    # Before the source text is uploaded the windows are unknown.
    assert _qc("esa", screen="document", items_per_task=100) is None


def test_the_campaigns_qc_test_is_the_one_figured() -> None:
    wmt = DEFAULTS.with_preset("wmt")
    qc = _qc(items_per_task=100, qc_bad_reference=12, settings=wmt)
    assert qc is not None
    assert qc.power.test == "mannwhitney"
    assert qc.power == qc_power(12, test="mannwhitney")
    # WMT's unpaired test on 12 pairs passes a careful worker about two times in three.
    assert qc.power.low
    assert "pairs reach 90 %" in qc.warnings[0]


def test_rankings_get_no_figures() -> None:
    assert _qc("ranking", items_per_task=100) is None


def test_percent_never_rounds_to_certainty() -> None:
    assert percent(0.9996) == "99 %"
    assert percent(1.0) == "100 %"
    assert percent(0.0004) == "1 %"
    assert percent(0.0) == "0 %"


@pytest.mark.django_db(transaction=True)
def test_the_setup_page_shows_each_protocols_qc_figures_and_warnings(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    weak = make_config(campaign, "direct_assessment", name="weak", items_per_task=20, build=False)
    strong = make_config(
        campaign,
        "direct_assessment",
        name="strong",
        items_per_task=100,
        qc_bad_reference=15,
        build=False,
    )
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    html = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()

    def row(config: ProtocolConfig) -> str:
        return html[html.index(f'<tr id="config-{config.pk}">') :].split("</tr>")[0]

    assert "QC: 2 bad-reference pairs per task (paired t-test, p ≤ 0.05)" in row(weak)
    assert "a careful worker passes 18 %, a random clicker fails" in row(weak)
    assert 'class="qc-warning"' in row(weak)
    strong_qc = qc_power(15)
    assert f"a careful worker passes {percent(strong_qc.careful_pass)}" in row(strong)
    assert f'data-qc-careful="{strong_qc.careful_pass}"' in row(strong)
    assert 'class="qc-warning"' not in row(strong)


@pytest.mark.django_db(transaction=True)
def test_adding_a_protocol_without_a_bad_reference_lands_on_its_warning(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("annotation_setup", args=[campaign.pk])
    page = client.post(url, _form(campaign, name="tiny", items_per_task=3))
    assert page.status_code == 302
    config = ProtocolConfig.objects.get(campaign=campaign, name="tiny")
    # The page goes to the new protocol's row, which says what is wrong.
    assert page["Location"].endswith(f"#config-{config.pk}")
    html = client.get(page["Location"]).content.decode()
    row = html[html.index(f'<tr id="config-{config.pk}">') :].split("</tr>")[0]
    assert "QC: 0 bad-reference pairs per task" in row
    assert "holds no bad-reference item" in row


def _form(campaign: Any, **fields: Any) -> dict[str, Any]:
    """The add form's data as the page offers it, with ``fields``."""
    form = ProtocolConfigForm(instance=ProtocolConfig(campaign=campaign))
    data = {
        name: value
        for name, value in ((f, form[f].value()) for f in ProtocolConfigForm.Meta.fields)
        if value is not None and name != "fluency_first"
    }
    return {**data, "protocol": "direct_assessment", "mode": "source", **fields}


@pytest.mark.django_db(transaction=True)
def test_the_crowd_page_shows_each_links_qc_and_warns_when_a_link_is_made(owner) -> None:  # type: ignore[no-untyped-def]
    # The crowd factory's study: 10-item tasks with 3 bad references, one output each.
    link = crowd_study(owner)
    client = Client()
    client.force_login(owner)
    url = reverse("crowd_setup", args=[link.config.campaign_id])
    html = client.get(url).content.decode()
    assert "QC: 3 bad-reference pairs per task (paired t-test, p ≤ 0.05)" in html
    assert "a careful worker passes 32 %" in html
    response = client.post(
        url,
        {"platform": "prolific", "config": link.config.pk, "rule": "not_failed", "days": 7},
        follow=True,
    )
    assert response.status_code == 200
    warnings = [str(m) for m in response.context["messages"] if m.level_tag == "warning"]
    assert len(warnings) == 1
    assert "weak with 3 bad-reference pairs per task" in warnings[0]


@pytest.mark.parametrize("protocol", ["adequacy_fluency", "esa", "mqm"])
def test_a_new_protocols_defaults_tell_careful_from_random_nine_times_in_ten(protocol: str) -> None:
    # The defaults of a new protocol (100 items, 12 bad references per 100, k = 5) with the
    # campaign's default QC test, four systems: at least 40 pairs.
    qc = _qc(protocol, n_systems=4)
    assert qc is not None
    assert qc.pairs >= 40
    assert qc.power.meets_target
    assert qc.warnings == []


def test_one_output_direct_assessment_meets_the_target_with_the_defaults() -> None:
    # Twelve pairs (12 bad references per 100 items): the paired t passes a careful worker
    # with the noncentral t's probability and fails a random clicker at least 90 % of the time.
    qc = _qc("direct_assessment")
    assert qc is not None
    assert qc.pairs == 12
    t0 = stats.t.ppf(0.95, 11)
    assert qc.power.careful_pass == pytest.approx(1 - stats.nct.cdf(t0, 11, 12**0.5), abs=1e-9)
    assert qc.power.careful_pass > 0.94
    assert qc.power.random_fail >= 0.9
    assert qc.power.meets_target
    assert qc.warnings == []


def test_ten_bad_references_per_hundred_fall_just_short_for_one_output() -> None:
    # Ten pairs pass a careful worker 89.8 % of the time (docs/crowd.md).
    qc = _qc("direct_assessment", qc_bad_reference=10)
    assert qc is not None
    assert qc.pairs == 10
    assert qc.power.careful_pass == pytest.approx(0.8975, abs=1e-3)
    assert not qc.power.meets_target
    assert not qc.power.low
