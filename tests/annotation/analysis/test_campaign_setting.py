"""One analysis setting per campaign, read by every route: the analysis page, the API, the
reports and the background analysis. The WMT preset applies WMT's conventions, checked against
WMT's method computed here with numpy and scipy. A change of the setting makes the stored
results stale and signals a recomputation, as new judgments do; the analysis page shows the
stored result while it is fresh and says so."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.analysis.services import annotator_decision_record
from annotation.analysis.settings import PRESETS, AnalysisSettings
from annotation.models import Campaign, ItemKind, ItemOutputCredit, JudgmentValue
from annotation.protocols import DIRECT_ASSESSMENT
from annotation.signals import campaign_data_changed
from metrics.human import human_compute
from metrics.models import AnalysisResult
from metrics.queries import dashboard_status
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

WMT_SETTING = AnalysisSettings(resamples=200, seed=5).with_preset("wmt")


def test_the_wmt_preset_sets_wmt_conventions_and_is_recognised() -> None:
    wmt = AnalysisSettings().with_preset("wmt")
    assert (wmt.basis, wmt.qc_test, wmt.test, wmt.include_failed) == (
        "all",
        "mannwhitney",
        "mannwhitney",
        True,
    )
    # The other fields keep their values; a preset is recognised by its conventions alone.
    assert AnalysisSettings(seed=3, alpha=0.01).with_preset("wmt").seed == 3
    assert WMT_SETTING.preset == "wmt"
    assert AnalysisSettings().preset == "evalsite"
    assert AnalysisSettings(test="sign").preset is None
    assert WMT_SETTING.with_preset("evalsite") == AnalysisSettings(resamples=200, seed=5)
    # Stored as a dict: unknown keys (another version's) are ignored.
    assert AnalysisSettings.from_dict({**WMT_SETTING.as_dict(), "retired": 1}) == WMT_SETTING
    assert set(PRESETS) == {"evalsite", "wmt"}


def test_stored_settings_under_the_old_names_read_knowingly() -> None:
    """Settings stored under the counts' old names read under the new ones; both names of one
    count, or a seed left to each protocol (None), are refused by name."""
    old = {"n_bootstrap": 200, "ranking_bootstrap": 20, "seed": 5}
    assert AnalysisSettings.from_dict(old) == AnalysisSettings(
        resamples=200, trueskill_runs=20, seed=5
    )
    with pytest.raises(ValueError, match="'n_bootstrap' and 'resamples' are one setting"):
        AnalysisSettings.from_dict({"n_bootstrap": 200, "resamples": 300})
    with pytest.raises(ValueError, match="seed: None"):
        AnalysisSettings.from_dict({"seed": None})


@pytest.fixture
def judged(db: Any) -> tuple[Campaign, Client]:
    owner = make_user("setting-owner", organizer=True)
    # Merged: the WMT test below credits merged outputs to every system itself.
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10, merge_identical=True)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    return campaign, client


def _put_setting(client: Client, campaign: Campaign, body: dict[str, Any]) -> dict[str, Any]:
    response = client.put(
        reverse("api-campaign-analysis-settings", args=[campaign.pk]),
        body,
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return dict(response.json())


@pytest.mark.django_db
def test_every_route_reads_the_campaigns_setting(judged: tuple[Campaign, Client]) -> None:
    campaign, client = judged
    body = _put_setting(client, campaign, {"preset": "wmt", "resamples": 200, "seed": 5})
    assert body == {"settings": WMT_SETTING.as_dict(), "preset": "wmt", "changed": True}
    assert _put_setting(client, campaign, {"seed": 5})["changed"] is False
    campaign.refresh_from_db()
    assert campaign_analysis_settings(campaign=campaign) == WMT_SETTING
    got = client.get(reverse("api-campaign-analysis-settings", args=[campaign.pk])).json()
    assert got == {"settings": WMT_SETTING.as_dict(), "preset": "wmt"}

    # The analysis page without a query: the campaign's setting, in the form too.
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]))
    assert page.context["analysis"].settings == WMT_SETTING
    assert page.context["form"]["include_failed"].value() is True
    assert page.context["form"]["basis"].value() == "all"
    html = page.content.decode()
    assert "WMT conventions" in html
    assert 'id="settings-state"' in html
    assert "exploring" not in html

    # The API's analysis.
    api = client.get(reverse("api-campaign-analysis", args=[campaign.pk])).json()
    assert api["settings"] == WMT_SETTING.as_dict()

    # The reports: without a query as with the campaign's setting spelt out, and not as with
    # the defaults (WMT's normalisation over all items changes every z).
    explicit = "?" + "&".join(
        f"{k}={'on' if v is True else v}"
        for k, v in WMT_SETTING.as_dict().items()
        if v is not None and v is not False
    )
    for name, args in (
        ("campaign_report_judgments", [campaign.pk, "csv"]),
        ("campaign_report_systems", [campaign.pk, "csv"]),
        ("campaign_report_annotators", [campaign.pk]),
    ):
        url = reverse(name, args=args)
        plain = b"".join(client.get(url)).decode()
        assert plain == b"".join(client.get(url + explicit + "&analyse=1")).decode(), name
        assert plain != b"".join(client.get(url + "?preset=evalsite")).decode(), name

    # The background analysis.
    stored = human_compute(campaign=campaign)
    assert AnalysisSettings.from_dict(stored["analysis"]["settings"]) == WMT_SETTING


@pytest.mark.django_db
def test_the_wmt_preset_reproduces_wmts_method(judged: tuple[Campaign, Client]) -> None:
    """WMT's DA method, computed here: each annotator's raw scores standardised by the mean and
    SD (n − 1) of all their scores; a system's score the mean over segments of the mean z of its
    judgments (repeats included) by every annotator, QC verdicts notwithstanding; an
    annotator's QC p the one-sided Mann–Whitney U of originals against bad references."""
    campaign, _client = judged
    analysis = campaign_analysis_compute(campaign=campaign, settings=WMT_SETTING)
    [da] = [c for c in analysis.criteria if c.protocol == DIRECT_ASSESSMENT]
    rows = list(
        JudgmentValue.objects.filter(judgment__item__task__config_id=da.config_id).values_list(
            "judgment__annotator_id",
            "judgment__item__segment_id",
            "output__system_id",
            "output__kind",
            "value",
            "output__original_id",
            "output_id",
        )
    )
    annotator = np.array([r[0] for r in rows])
    value = np.array([r[4] for r in rows], dtype=float)
    z = np.empty_like(value)
    for a in np.unique(annotator):
        mine = annotator == a
        z[mine] = (value[mine] - value[mine].mean()) / value[mine].std(ddof=1)
    # The demo's systems produce the same text now and then: a merged output's z counts for
    # every system credited with it (after the annotator's z was computed on their answers).
    credited: dict[int, list[int]] = {}
    for output, system in ItemOutputCredit.objects.filter(
        output__item__task__config_id=da.config_id
    ).values_list("output_id", "system_id"):
        credited.setdefault(output, []).append(system)
    per_unit: dict[tuple[int, int], list[float]] = {}
    for (_a, segment, system, kind, _v, _o, output), zi in zip(rows, z, strict=True):
        if kind in (ItemKind.REAL, ItemKind.REPEAT):
            per_unit.setdefault((system, segment), []).append(float(zi))
        if kind == ItemKind.REAL:
            for other in credited.get(output, []):
                per_unit.setdefault((other, segment), []).append(float(zi))
    expected = {}
    for system in {s for s, _ in per_unit}:
        segments = [np.mean(v) for (s, _), v in per_unit.items() if s == system]
        expected[system] = float(np.mean(segments))
    got = {s.system_id: s.mean_z for s in da.systems if s.system_id in expected}
    assert len(got) >= 3
    assert got == pytest.approx(expected, rel=1e-12)
    assert all(a.included for a in da.annotators if a.decision is None)

    # QC: originals against their bad references, per annotator, as scipy computes it.
    value_of = {(r[0], r[6]): r[4] for r in rows}
    tested = 0
    for result in da.annotators:
        pairs = [
            (value_of[(r[0], r[5])], r[4])
            for r in rows
            if r[0] == result.annotator_id
            and r[3] == ItemKind.BAD_REFERENCE
            and (r[0], r[5]) in value_of
        ]
        if len(pairs) < 2:
            continue
        originals, bad = zip(*pairs, strict=True)
        reference = scipy.stats.mannwhitneyu(originals, bad, alternative="greater")
        assert result.qc_p == pytest.approx(reference.pvalue, rel=1e-12)
        tested += 1
    assert tested >= 3


@pytest.mark.django_db
def test_a_setting_change_stales_the_results_and_signals_a_recomputation(
    judged: tuple[Campaign, Client],
) -> None:
    campaign, client = judged
    analysis_run_sync(campaign=campaign)
    assert dashboard_status(campaign=campaign)["stale"] is False
    signalled: list[Any] = []

    def receiver(sender: Any, campaign_id: Any, **kwargs: Any) -> None:
        signalled.append(campaign_id)

    campaign_data_changed.connect(receiver, dispatch_uid="test-setting-change")
    try:
        _put_setting(client, campaign, {"preset": "wmt"})
        # The same setting again changes nothing and schedules nothing.
        _put_setting(client, campaign, {"preset": "wmt"})
    finally:
        campaign_data_changed.disconnect(dispatch_uid="test-setting-change")
    assert signalled == [campaign.pk]
    campaign.refresh_from_db()
    assert dashboard_status(campaign=campaign)["stale"] is True

    # The recomputation stores the analysis with the new setting; the dashboard names it.
    analysis_run_sync(campaign=campaign)
    assert dashboard_status(campaign=campaign)["stale"] is False
    html = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    setting_line = html[html.index('id="human-setting"') :].split("</p>")[0]
    assert "WMT conventions" in setting_line
    assert "annotators who failed QC kept" in setting_line


@pytest.mark.django_db
def test_the_analysis_page_shows_the_stored_result_while_it_is_fresh(
    judged: tuple[Campaign, Client], settings: Any
) -> None:
    campaign, client = judged
    job = analysis_run_sync(campaign=campaign)
    # Mark the stored document, to see that the page shows it rather than computing its own.
    stored = AnalysisResult.objects.get(job=job, kind=AnalysisResult.Kind.HUMAN)
    stored.data["analysis"]["version"] = "stored-by-the-background-job"
    stored.save(update_fields=["data"])
    url = reverse("campaign_analysis", args=[campaign.pk])
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 0

    page = client.get(url)
    shown = page.context["shown"]
    assert (shown.stored, shown.fresh, shown.job_id) == (True, True, str(job.pk))
    html = page.content.decode()
    assert "stored-by-the-background-job" in html
    assert "up to date" in html
    assert f'data-results-job="{job.pk}"' in html
    # Downloads say where their numbers come from: the same stored result, up to date.
    tex = client.get(reverse("campaign_report_systems", args=[campaign.pk, "tex"]))
    assert tex["X-EvalSite-Analysis"].startswith("stored background result computed ")
    assert tex["X-EvalSite-Analysis"].endswith(", up to date")
    assert f"% results: {tex['X-EvalSite-Analysis']}" in tex.content.decode()
    assert "stored-by-the-background-job" in tex.content.decode()
    api = client.get(reverse("api-campaign-report-annotators", args=[campaign.pk]))
    assert api["X-EvalSite-Analysis"] == tex["X-EvalSite-Analysis"]

    # A decision since: a large campaign shows the stored result, marked out of date, and
    # waits for the recomputation (the page polls quickly); a small one is analysed now.
    rater = get_user_model().objects.get(username="rater-a")
    annotator_decision_record(
        campaign=campaign, annotator=rater, included=False, reason="test", decided_by=None
    )
    page = client.get(url)
    assert (page.context["shown"].stored, page.context["shown"].fresh) == (True, False)
    html = page.content.decode()
    assert "stored-by-the-background-job" in html
    assert "out of date" in html
    assert 'data-waiting="1"' in html
    # A download waits for nothing: it analyses the data as it is now, and says so.
    fresh = client.get(reverse("campaign_report_systems", args=[campaign.pk, "csv"]))
    assert fresh["X-EvalSite-Analysis"].startswith("computed for this request at ")
    settings.EVALSITE_ANALYSIS_LIVE_VALUES = 10**9
    page = client.get(url)
    shown = page.context["shown"]
    assert (shown.stored, shown.fresh) == (False, True)
    assert "stored-by-the-background-job" not in page.content.decode()
    excluded = [
        a.included for c in shown.analysis.criteria for a in c.annotators if a.username == "rater-a"
    ]
    assert excluded
    assert not any(excluded)


@pytest.mark.django_db
def test_other_settings_are_explored_and_can_become_the_campaigns(
    judged: tuple[Campaign, Client],
) -> None:
    campaign, client = judged
    query = "preset=wmt&resamples=100&analyse=1"
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]) + "?" + query)
    assert page.context["exploring"] is True
    assert page.context["analysis"].settings.preset == "wmt"
    # The form shows the settings that apply: the preset's conventions in their fields.
    form = page.context["form"]
    assert (form["qc_test"].value(), form["basis"].value(), form["resamples"].value()) == (
        "mannwhitney",
        "all",
        100,
    )
    assert form["include_failed"].value() is True
    html = page.content.decode()
    assert "exploring other settings" in html
    assert "Make these the campaign" in html
    assert campaign_analysis_settings(campaign=campaign) == AnalysisSettings()

    saved = client.post(reverse("campaign_analysis_settings", args=[campaign.pk]) + "?" + query)
    assert saved.status_code == 302
    campaign.refresh_from_db()
    setting = campaign_analysis_settings(campaign=campaign)
    assert setting.preset == "wmt"
    assert setting.resamples == 100
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]))
    assert page.context["exploring"] is False
    # An invalid query changes nothing.
    refused = client.post(
        reverse("campaign_analysis_settings", args=[campaign.pk]) + "?threshold=7"
    )
    assert refused.status_code == 302
    campaign.refresh_from_db()
    assert campaign_analysis_settings(campaign=campaign) == setting


@pytest.mark.django_db
def test_when_every_annotator_is_left_out_the_pages_say_so_and_where_to_include(
    judged: tuple[Campaign, Client],
) -> None:
    campaign, client = judged
    for rater in get_user_model().objects.filter(username__startswith="rater-"):
        annotator_decision_record(
            campaign=campaign, annotator=rater, included=False, reason="test", decided_by=None
        )
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]))
    assert all(c.nobody_included for c in page.context["analysis"].criteria)
    html = page.content.decode()
    assert html.count('class="note nobody-included"') == len(page.context["analysis"].criteria)
    assert "Keep annotators who failed QC" in html
    analysis_run_sync(campaign=campaign)
    dashboard = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert 'class="note nobody-included"' in dashboard
    # With one annotator back, the note goes.
    rater = get_user_model().objects.get(username="rater-a")
    annotator_decision_record(
        campaign=campaign, annotator=rater, included=True, reason="back", decided_by=None
    )
    page = client.get(reverse("campaign_analysis", args=[campaign.pk]))
    assert 'class="note nobody-included"' not in page.content.decode()
