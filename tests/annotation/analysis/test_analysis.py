"""The analysis selectors end to end: judgments in the database → Judgments tables → the core →
results. A synthetic campaign with one careless annotator: QC fails them and the ranking of the
systems is recovered; the tables read from the database equal the synthetic tables row for row."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.analysis.results import QC_FAILED, QC_PASSED
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.services import annotator_decision_record, annotator_pseudonyms_ensure
from annotation.analysis.settings import DEFAULT_SEED, AnalysisSettings
from annotation.analysis.tables import campaign_criteria, criterion_table_load
from annotation.models import JudgmentValue
from annotation.reports.systems import system_report_csv, system_report_json, system_report_latex
from evalcore.human import (
    TOLERANCE_0_TO_100,
    analyse_rankings,
    analyse_scores,
    synthetic_rankings,
    synthetic_scores,
)
from tests.analysis_factories import build_judged_campaign

pytestmark = pytest.mark.django_db

CARELESS = 3
SYSTEMS = ["alpha", "bravo", "charlie", "delta"]


@pytest.fixture
def scored(owner):  # type: ignore[no-untyped-def]
    synthetic = synthetic_scores(
        n_annotators=8,
        n_systems=4,
        n_segments=60,
        tasks_per_annotator=2,
        careless=[CARELESS],
        seed=7,  # a careless annotator passes a 5% test 5% of the time: not with this seed
    )
    built = build_judged_campaign(owner=owner, judgments=synthetic.judgments, system_names=SYSTEMS)
    return synthetic, built


def test_the_careless_annotator_fails_qc_and_the_ranking_of_the_systems_is_recovered(
    scored,
) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = scored
    analysis = campaign_analysis_compute(campaign=built.campaign)
    [criterion] = analysis.criteria
    assert criterion.kind == "scores"
    assert criterion.n_rows == len(synthetic.judgments)
    by_name = {a.username: a for a in criterion.annotators}
    careless = by_name[f"judge{CARELESS:02d}"]
    assert careless.qc_status == QC_FAILED
    assert not careless.included
    diligent = [a for name, a in by_name.items() if name != f"judge{CARELESS:02d}"]
    assert all(a.qc_status == QC_PASSED and a.included for a in diligent)
    # Truth: system code 0 is the best (synthetic qualities are evenly spaced, best first).
    ranked = [s.name for s in criterion.ranked_systems]
    assert ranked == SYSTEMS
    assert [s.position for s in criterion.ranked_systems] == [1, 2, 3, 4]
    assert all(s.t_low < s.score < s.t_high for s in criterion.ranked_systems)  # type: ignore[operator]
    assert all(s.boot_low < s.score < s.boot_high for s in criterion.ranked_systems)  # type: ignore[operator]
    # The careless annotator's rows did not enter the system scores.
    careless_rows = int((synthetic.judgments.annotator == CARELESS).sum())
    assert careless_rows > 0
    real_or_repeat = np.isin(synthetic.judgments.item_type, [0, 1])
    included_rows = int((real_or_repeat & (synthetic.judgments.annotator != CARELESS)).sum())
    assert sum(s.n_judgments for s in criterion.systems) == included_rows


def test_the_table_read_from_the_database_equals_the_synthetic_table_row_for_row(
    scored,
) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = scored
    [(config, key)] = campaign_criteria(campaign=built.campaign)
    table = criterion_table_load(config=config, criterion=key)
    expected = synthetic.judgments
    got = table.judgments
    for column in ("annotator", "segment", "system", "score", "item_type", "original", "screen"):
        np.testing.assert_array_equal(getattr(got, column), getattr(expected, column), column)
    np.testing.assert_allclose(got.seconds, expected.seconds)
    assert table.value_ids.tolist() == built.value_ids
    assert table.has_reference
    assert table.system_ids[-1] == -1
    assert [int(s) for s in table.system_ids[:-1]] == [s.pk for s in built.systems]


def test_the_selector_reports_exactly_what_the_core_computes_on_the_same_table(
    scored,
) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = scored
    settings = AnalysisSettings(qc_test="wilcoxon", test="sign", resamples=200, seed=11)
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=settings).criteria
    core_qc = analyse_scores(
        synthetic.judgments, tolerance=TOLERANCE_0_TO_100, qc_test="wilcoxon", n_bootstrap=0
    )
    passed = core_qc.qc.passed
    core = analyse_scores(
        synthetic.judgments,
        tolerance=TOLERANCE_0_TO_100,
        qc_test="wilcoxon",
        include=passed,
        test="sign",
        n_bootstrap=200,
        rng=11,
    )
    for code, annotator in enumerate(criterion.annotators):
        assert annotator.qc_p == pytest.approx(core.qc.bad_reference.p_value[code])
        assert annotator.qc_n == core.qc.bad_reference.n[code]
        assert annotator.mean == pytest.approx(core.normalised.annotator_mean[code])
    by_name = {s.name: s for s in criterion.systems}
    for code, name in enumerate(SYSTEMS):
        system = by_name[name]
        assert system.score == pytest.approx(core.systems.score[code])
        assert system.boot_low == pytest.approx(core.systems.boot_low[code])
        assert system.cluster == core.clusters.cluster[code]
    assert criterion.method.seed == 11
    assert criterion.method.significance_test == "sign"
    assert criterion.method.version.startswith("evalsite ")
    alpha = {a.name: a for a in criterion.agreement}["inter-annotator α (interval)"]
    assert alpha.value == pytest.approx(core.inter_alpha_interval.alpha)
    assert alpha.counts == {
        "units": core.inter_alpha_interval.n_units,
        "values": core.inter_alpha_interval.n_values,
    }


def test_an_organizer_decision_overrides_the_qc_verdict(scored, owner) -> None:  # type: ignore[no-untyped-def]
    _, built = scored
    careless, diligent = built.users[CARELESS], built.users[0]
    annotator_decision_record(
        campaign=built.campaign,
        annotator=careless,
        included=True,
        reason="spot-checked: fine",
        decided_by=owner,
    )
    annotator_decision_record(
        campaign=built.campaign,
        annotator=diligent,
        included=False,
        reason="native speaker of another variant",
        decided_by=owner,
    )
    [criterion] = campaign_analysis_compute(campaign=built.campaign).criteria
    by_id = {a.annotator_id: a for a in criterion.annotators}
    assert by_id[careless.pk].qc_status == QC_FAILED
    assert by_id[careless.pk].included
    assert by_id[careless.pk].decision is True
    assert by_id[diligent.pk].qc_status == QC_PASSED
    assert not by_id[diligent.pk].included
    assert by_id[diligent.pk].decision_reason == "native speaker of another variant"


def test_failed_annotators_can_be_kept_and_untested_ones_left_out(scored) -> None:  # type: ignore[no-untyped-def]
    _, built = scored
    [kept] = campaign_analysis_compute(
        campaign=built.campaign, settings=AnalysisSettings(include_failed=True)
    ).criteria
    assert all(a.included for a in kept.annotators)
    # Without bad references nobody can be tested: everyone stays in unless asked otherwise.
    JudgmentValue.objects.filter(output__kind="bad_ref").delete()
    [untested] = campaign_analysis_compute(campaign=built.campaign).criteria
    assert {a.qc_status for a in untested.annotators} == {"untested"}
    assert all(a.included for a in untested.annotators)
    [strict] = campaign_analysis_compute(
        campaign=built.campaign, settings=AnalysisSettings(exclude_untested=True)
    ).criteria
    assert not any(a.included for a in strict.annotators)
    assert all(s.position == 0 for s in strict.systems)


def test_the_default_seed_is_the_campaigns_and_results_repeat(scored) -> None:  # type: ignore[no-untyped-def]
    _, built = scored
    # The campaign's one seed, not the protocol's (which only draws its tasks).
    assert built.config.seed != DEFAULT_SEED
    first = campaign_analysis_compute(campaign=built.campaign).to_json()
    second = campaign_analysis_compute(campaign=built.campaign).to_json()
    assert first == second
    assert first["criteria"][0]["method"]["seed"] == DEFAULT_SEED


def test_the_analysis_needs_the_same_few_queries_however_many_judgments(scored) -> None:  # type: ignore[no-untyped-def]
    _, built = scored
    annotator_pseudonyms_ensure(campaign=built.campaign)
    with CaptureQueriesContext(connection) as queries:
        campaign_analysis_compute(campaign=built.campaign)
    # criteria, configs, one values query, users, pseudonyms, systems, decisions
    assert len(queries) <= 8


def ranked_campaign(owner, *, n_annotators: int, n_segments: int, screens: int):  # type: ignore[no-untyped-def]
    """A ranking campaign of five systems s1…s5 from ``synthetic_rankings`` (seed 3), and the
    synthetic data it was built from."""
    synthetic = synthetic_rankings(
        n_annotators=n_annotators,
        n_systems=5,
        n_segments=n_segments,
        screens_per_annotator=screens,
        seed=3,
    )
    built = build_judged_campaign(
        owner=owner,
        judgments=synthetic.judgments,
        system_names=["s1", "s2", "s3", "s4", "s5"],
        protocol="ranking",
        criterion="rank",
    )
    return synthetic, built


def test_a_ranking_campaign_is_ranked_by_expected_wins_with_trueskill_rank_ranges(owner) -> None:  # type: ignore[no-untyped-def]
    synthetic, built = ranked_campaign(owner, n_annotators=6, n_segments=40, screens=40)
    [(config, key)] = campaign_criteria(campaign=built.campaign)
    table = criterion_table_load(config=config, criterion=key)
    for column in ("annotator", "segment", "system", "score", "item_type", "original", "screen"):
        np.testing.assert_array_equal(
            getattr(table.judgments, column), getattr(synthetic.judgments, column), column
        )
    settings = AnalysisSettings(trueskill_runs=50, seed=5)
    [criterion] = campaign_analysis_compute(campaign=built.campaign, settings=settings).criteria
    assert criterion.kind == "ranking"
    core = analyse_rankings(synthetic.judgments, n_bootstrap=50, rng=5)
    by_name = {s.name: s for s in criterion.systems}
    for code, name in enumerate(["s1", "s2", "s3", "s4", "s5"]):
        system = by_name[name]
        assert system.expected_wins == pytest.approx(core.expected_wins.score[code])
        assert system.no_worse_share == pytest.approx(core.no_worse.share[code])
        assert system.trueskill_mu == pytest.approx(core.trueskill.mu[code])
        assert system.trueskill_rank_low <= system.trueskill_rank <= system.trueskill_rank_high  # type: ignore[operator]
    assert [s.name for s in criterion.ranked_systems][:2] == ["s1", "s2"]
    kappa = {a.name: a for a in criterion.agreement}["inter-annotator κ"]
    assert kappa.value == pytest.approx(core.inter_kappa.kappa, nan_ok=True)
    assert kappa.counts["comparisons"] == core.inter_kappa.n_comparisons
    assert {a.qc_status for a in criterion.annotators} == {"untested"}


def test_without_bootstrap_runs_trueskill_gives_no_rank_range(owner) -> None:  # type: ignore[no-untyped-def]
    """trueskill_runs = 0: the point rank alone, not a range of one rank that would read as
    certain, in the analysis and in every system report format."""
    _, built = ranked_campaign(owner, n_annotators=4, n_segments=20, screens=20)
    analysis = campaign_analysis_compute(
        campaign=built.campaign, settings=AnalysisSettings(trueskill_runs=0, seed=5)
    )
    [criterion] = analysis.criteria
    assert sorted(s.trueskill_rank for s in criterion.systems) == [1, 2, 3, 4, 5]
    assert {(s.trueskill_rank_low, s.trueskill_rank_high) for s in criterion.systems} == {
        (None, None)
    }
    rows = list(csv.DictReader(io.StringIO(system_report_csv(analysis))))
    assert {(r["trueskill_rank_low"], r["trueskill_rank_high"]) for r in rows} == {("", "")}
    assert {r["trueskill_rank"] for r in rows} == {"1", "2", "3", "4", "5"}
    [systems] = [c["systems"] for c in system_report_json(analysis)["criteria"]]
    assert {s["trueskill_rank_low"] for s in systems} == {None}
    latex = system_report_latex(analysis)
    for system in criterion.systems:
        line = next(x for x in latex.splitlines() if f"& {system.name} &" in x)
        assert "---" in line
    with_ranges = campaign_analysis_compute(
        campaign=built.campaign, settings=AnalysisSettings(trueskill_runs=20, seed=5)
    )
    assert "---" not in system_report_latex(with_ranges)


def test_each_criterion_of_a_protocol_is_its_own_table(owner) -> None:  # type: ignore[no-untyped-def]
    synthetic = synthetic_scores(
        n_annotators=3, n_systems=2, n_segments=20, tasks_per_annotator=1, scale="1-5", seed=1
    )
    built = build_judged_campaign(
        owner=owner,
        judgments=synthetic.judgments,
        system_names=["x", "y"],
        protocol="adequacy_fluency",
        criterion="adequacy",
    )
    JudgmentValue.objects.bulk_create(
        [
            JudgmentValue(
                judgment_id=v.judgment_id,
                output_id=v.output_id,
                criterion="fluency",
                value=6 - v.value,
            )
            for v in JudgmentValue.objects.filter(criterion="adequacy")
        ]
    )
    # Fluency here is 6 − adequacy: bad references score higher than their originals, so
    # everyone fails QC on fluency (and passes on adequacy); keep them all to compare orders.
    verdicts = campaign_analysis_compute(campaign=built.campaign).criteria
    assert {a.qc_status for a in verdicts[1].annotators} == {"failed"}
    assert {a.qc_status for a in verdicts[0].annotators} == {"passed"}
    analysis = campaign_analysis_compute(
        campaign=built.campaign, settings=AnalysisSettings(include_failed=True)
    )
    assert [c.criterion for c in analysis.criteria] == ["adequacy", "fluency"]
    adequacy, fluency = analysis.criteria
    assert adequacy.method.tolerance == 1.0  # ±1 on a 1–5 scale
    assert adequacy.scale == (1, 5)
    assert fluency.n_rows == adequacy.n_rows
    assert [s.name for s in fluency.ranked_systems] == [
        s.name for s in reversed(adequacy.ranked_systems)
    ]
