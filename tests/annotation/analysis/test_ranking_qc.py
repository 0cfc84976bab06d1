"""Annotator QC of ranking protocols end to end: judgments in the database → the analysis → the
annotator report, the judgment report's status column, the analysis page and the dashboard's QC
table. A synthetic ranking campaign with one careless ranker (random ranks): they fail the
bad-reference test on ranks, leave the rankings, and Expected Wins recover the systems' order."""

from __future__ import annotations

import csv
import io
from collections import Counter
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.analysis.results import QC_FAILED, QC_PASSED
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.services import annotator_decision_record
from annotation.analysis.settings import AnalysisSettings
from annotation.models import Campaign, ItemKind, ItemOutput
from annotation.reports.annotators import annotator_report_csv
from annotation.reports.judgments import STATUS_CODES, annotator_labels, judgment_row_statistics
from evalcore.human import ItemType, analyse_rankings, synthetic_rankings
from metrics.presenters.human import human_panel
from tests.analysis_factories import build_judged_campaign
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

CARELESS = 3
SYSTEMS = ["s1", "s2", "s3", "s4", "s5"]


@pytest.fixture
def ranked(owner):  # type: ignore[no-untyped-def]
    synthetic = synthetic_rankings(
        n_annotators=6,
        n_systems=5,
        n_segments=60,
        screens_per_annotator=100,
        careless=[CARELESS],
        degradation=2.5,
        seed=0,  # a careless ranker passes a 5% test 5% of the time: not with this seed
    )
    built = build_judged_campaign(
        owner=owner,
        judgments=synthetic.judgments,
        system_names=SYSTEMS,
        protocol="ranking",
        criterion="rank",
    )
    return synthetic, built


SETTINGS = AnalysisSettings(trueskill_runs=20, seed=5)


def test_the_careless_ranker_fails_qc_and_expected_wins_recover_the_order(ranked) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = ranked
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=SETTINGS).criteria
    assert criterion.kind == "ranking"
    by_name = {a.username: a for a in criterion.annotators}
    careless = by_name[f"judge{CARELESS:02d}"]
    assert careless.qc_status == QC_FAILED
    assert not careless.included
    assert careless.qc_n == 9
    diligent = [a for name, a in by_name.items() if name != f"judge{CARELESS:02d}"]
    assert all(a.qc_status == QC_PASSED and a.included for a in diligent)
    assert all(a.qc_mean_difference > 1 for a in diligent)  # type: ignore[operator]
    # The truth: s1 is the best, then s2, …
    assert [s.name for s in criterion.ranked_systems] == SYSTEMS
    wins = [s.expected_wins for s in criterion.ranked_systems]
    assert wins == sorted(wins, reverse=True)  # type: ignore[type-var]
    # Only real rows of the annotators who passed entered the rankings.
    judgments = synthetic.judgments
    used = (judgments.item_type == ItemType.REAL) & (judgments.annotator != CARELESS)
    assert sum(s.n_judgments for s in criterion.systems) == int(used.sum())
    assert criterion.method.qc_test == "paired_t"
    assert criterion.method.qc_space == "rank"
    assert criterion.method.threshold == 0.05


def test_the_selector_reports_what_the_core_computes(ranked) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = ranked
    settings = AnalysisSettings(
        qc_test="mannwhitney", ranking_qc_space="normalised_rank", trueskill_runs=20, seed=5
    )
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=settings).criteria
    core = analyse_rankings(
        synthetic.judgments,
        qc_test="mannwhitney",
        qc_space="normalised_rank",
        n_bootstrap=20,
        rng=5,
    )
    bad = core.qc.bad_reference
    repeats = core.qc.repeats
    for code, annotator in enumerate(criterion.annotators):
        assert annotator.qc_n == bad.n[code]
        assert annotator.qc_statistic == pytest.approx(bad.statistic[code])
        assert annotator.qc_p == pytest.approx(bad.p_value[code])
        assert annotator.qc_mean_difference == pytest.approx(bad.mean_difference[code])
        assert annotator.included == bool(core.included[code])
        assert annotator.repeats_n == repeats.n_screens[code]
        assert annotator.repeats_share_within == pytest.approx(repeats.share_identical[code])
        assert annotator.repeats_kendall_tau == pytest.approx(repeats.kendall_tau[code])
        assert annotator.time_seconds == pytest.approx(core.qc.time.seconds[code])
    by_name = {s.name: s for s in criterion.systems}
    for code, name in enumerate(SYSTEMS):
        assert by_name[name].expected_wins == pytest.approx(core.expected_wins.score[code])
    assert criterion.method.qc_space == "normalised_rank"


def test_an_organizer_decision_or_the_include_failed_option_keeps_the_careless_ranker(
    ranked, owner
) -> None:  # type: ignore[no-untyped-def]
    _, built = ranked
    careless = built.users[CARELESS]
    kept = campaign_analysis_compute(
        campaign=built.campaign,
        settings=AnalysisSettings(include_failed=True, trueskill_runs=20, seed=5),
    ).criteria[0]
    assert all(a.included for a in kept.annotators)
    annotator_decision_record(
        campaign=built.campaign,
        annotator=careless,
        included=True,
        reason="spot-checked: fine",
        decided_by=owner,
    )
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=SETTINGS).criteria
    row = next(a for a in criterion.annotators if a.annotator_id == careless.pk)
    assert row.qc_status == QC_FAILED
    assert row.included
    assert row.decision is True
    assert sum(s.n_judgments for s in criterion.systems) == sum(s.n_judgments for s in kept.systems)


def test_the_annotator_report_and_the_judgment_report_carry_the_ranking_verdicts(ranked) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = ranked
    analysis = campaign_analysis_compute(campaign=built.campaign, settings=SETTINGS)
    labels = annotator_labels(campaign=built.campaign, real_names=True)
    rows = list(csv.DictReader(io.StringIO(annotator_report_csv(analysis, labels))))
    by_name = {r["annotator"]: r for r in rows}
    careless = by_name[f"judge{CARELESS:02d}"]
    assert careless["qc_status"] == "failed"
    assert careless["included"] == "0"
    assert careless["qc_test"] == "paired_t"
    assert careless["qc_space"] == "rank"
    assert careless["qc_threshold"] == "0.05"
    assert careless["qc_pairs"] == "9"
    assert careless["qc_uninformative"] == "0"
    assert float(careless["qc_p"]) > 0.05
    assert careless["repeat_tolerance"] == ""
    assert -1 <= float(careless["repeats_kendall_tau"]) <= 1
    assert {r["qc_status"] for n, r in by_name.items() if r is not careless} == {"passed"}

    statistics = judgment_row_statistics(campaign=built.campaign, settings=SETTINGS)
    careless_rows = synthetic.judgments.annotator == CARELESS
    status = np.array(STATUS_CODES)[statistics.status]
    assert set(status[careless_rows].tolist()) == {"failed"}
    assert set(status[~careless_rows].tolist()) == {"passed"}
    assert not statistics.included[careless_rows].any()


def test_the_analysis_page_and_the_dashboard_table_show_the_ranking_test(ranked, owner) -> None:  # type: ignore[no-untyped-def]
    _, built = ranked
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    page = client.get(
        reverse("campaign_analysis", args=[built.campaign.pk]),
        {"trueskill_runs": "20", "seed": "5"},
    ).content.decode()
    table = page[page.index('<table class="data annotators">') :]
    table = table[: table.index("</table>")]
    assert table.count("qc-failed") == 1
    assert table.count("qc-passed") == 5
    assert "Ref. rank" in table
    analysis = campaign_analysis_compute(campaign=built.campaign, settings=SETTINGS)
    [panel] = human_panel({"analysis": analysis.to_json()})
    careless = next(a for a in panel.annotators if a.username == f"judge{CARELESS:02d}")
    assert careless.qc_status == "failed"
    assert careless.qc_n == 9
    assert careless.p_text not in ("", "—")
    assert careless.delta_text not in ("", "—")
    assert not careless.included


def test_built_ranking_screens_degrade_one_output_so_the_demo_careless_ranker_fails() -> None:
    # The task builder degrades one output of a ranking bad-reference screen and repeats the
    # others, so each degraded output can be ranked below intact ones: the demo's three diligent
    # rankers pass, its careless one fails and leaves the ranking.
    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get()
    outputs = ItemOutput.objects.filter(
        item__task__config__protocol="ranking", item__kind=ItemKind.BAD_REFERENCE
    )
    per_item = Counter(outputs.filter(kind=ItemKind.BAD_REFERENCE).values_list("item", flat=True))
    assert per_item
    assert set(per_item.values()) == {1}
    assert outputs.filter(kind=ItemKind.REPEAT).exists()
    analysis = campaign_analysis_compute(
        campaign=campaign, settings=AnalysisSettings(trueskill_runs=0)
    )
    [ranking] = [c for c in analysis.criteria if c.kind == "ranking"]
    statuses = sorted(a.qc_status for a in ranking.annotators)
    assert statuses == [QC_FAILED, QC_PASSED, QC_PASSED, QC_PASSED]
    assert all(a.qc_n > 0 and a.qc_uninformative == 0 for a in ranking.annotators)
    assert [a.included for a in ranking.annotators if a.qc_status == QC_FAILED] == [False]


def test_the_rank_space_is_a_setting_of_the_page_and_the_api(ranked, owner) -> None:  # type: ignore[no-untyped-def]
    _, built = ranked
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    query = {"ranking_qc_space": "normalised_rank", "qc_test": "wilcoxon", "trueskill_runs": 0}
    data = client.get(
        reverse("api-campaign-analysis", args=[built.campaign.pk]),
        query,
        HTTP_ACCEPT="application/json",
    ).json()
    [criterion] = data["criteria"]
    assert criterion["method"]["qc_space"] == "normalised_rank"
    assert criterion["method"]["qc_test"] == "wilcoxon"
    page = client.get(reverse("campaign_analysis", args=[built.campaign.pk]), query)
    assert page.status_code == 200
    assert "qc_space=normalised_rank" in page.content.decode()
    refused = client.get(
        reverse("api-campaign-analysis", args=[built.campaign.pk]),
        {"ranking_qc_space": "z"},
        HTTP_ACCEPT="application/json",
    )
    assert refused.status_code == 400
