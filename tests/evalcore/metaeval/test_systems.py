"""The system-level meta-evaluation table against scipy, the building blocks it promises to use
and clusters worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.metaeval.systems import meta_evaluate_systems, metric_clusters
from evalcore.stats.correlation import (
    correlation_permutation_test,
    williams_test,
    williams_test_scores,
)
from evalcore.stats.outliers import mad_outliers
from evalcore.stats.ties import kendall_variant

SYSTEMS = [f"sys{i}" for i in range(8)]
HUMAN = dict(zip(SYSTEMS, [0.31, 0.29, 0.25, 0.18, 0.16, 0.05, 0.02, -1.25], strict=True))
RNG = np.random.default_rng(42)
GOOD = {s: 10 * v + RNG.normal(scale=0.5) for s, v in HUMAN.items()}
POOR = {s: RNG.normal() for s in HUMAN}
TER = {s: 50 - 5 * v + RNG.normal(scale=1.0) for s, v in HUMAN.items()}


def test_each_row_is_scipys_correlations_of_the_evaluated_vectors():
    table = meta_evaluate_systems(human=HUMAN, metrics={"good": GOOD, "poor": POOR}, rng=1)
    h = np.array([HUMAN[s] for s in SYSTEMS])
    for row in table.rows:
        m = np.array([{"good": GOOD, "poor": POOR}[row.metric][s] for s in SYSTEMS])
        assert row.pearson == pytest.approx(sps.pearsonr(h, m).statistic, abs=1e-12)
        assert row.spearman == pytest.approx(sps.spearmanr(h, m).statistic, abs=1e-12)
        assert row.kendall == pytest.approx(sps.kendalltau(h, m).statistic, abs=1e-12)
        agree = [
            np.sign(h[i] - h[j]) == np.sign(m[i] - m[j]) for i in range(8) for j in range(i + 1, 8)
        ]
        assert row.accuracy == pytest.approx(np.mean(agree), abs=1e-12)
        assert row.tie_accuracy == pytest.approx(
            kendall_variant(h, m, "acc23", epsilon=row.tie_epsilon), abs=1e-12
        )
        assert row.tie_accuracy >= row.accuracy - 1e-12  # ε = 0 is a candidate
        assert row.n_systems == 8
    assert [row.metric for row in table.rows] == ["good", "poor"]  # best Pearson first


def test_human_translations_are_left_out_unless_asked_for_and_reported():
    metrics = {"good": GOOD}
    table = meta_evaluate_systems(human=HUMAN, metrics=metrics, human_systems=["sys0"], rng=1)
    assert table.excluded_human == ("sys0",)
    assert "sys0" not in table.systems
    assert table.rows[0].n_systems == 7
    with_human = meta_evaluate_systems(
        human=HUMAN, metrics=metrics, human_systems=["sys0"], include_human=True, rng=1
    )
    assert with_human.excluded_human == ()
    assert with_human.rows[0].n_systems == 8


def test_outliers_of_the_human_scores_are_left_out_by_wmt20s_rule():
    table = meta_evaluate_systems(human=HUMAN, metrics={"good": GOOD}, exclude_outliers=True)
    rule = mad_outliers(list(HUMAN.values()))
    expected = [s for s, out in zip(SYSTEMS, rule.outlier, strict=True) if out]
    assert table.excluded_outliers == tuple(expected) == ("sys7",)
    h = [HUMAN[s] for s in SYSTEMS[:7]]
    assert table.rows[0].pearson == pytest.approx(
        sps.pearsonr(h, [GOOD[s] for s in SYSTEMS[:7]]).statistic, abs=1e-12
    )
    assert (table.outlier_cutoff, table.outlier_scale) == (2.5, 1.483)


def test_a_metric_without_a_score_for_an_evaluated_system_is_refused():
    partial = {s: v for s, v in GOOD.items() if s != "sys3"}
    with pytest.raises(ValueError, match=r"metric 'partial' has no score for .* sys3"):
        meta_evaluate_systems(human=HUMAN, metrics={"partial": partial})
    # ...unless that system is not chosen; the extra system of the metric is reported.
    extra = {**partial, "unjudged": 1.0}
    table = meta_evaluate_systems(
        human=HUMAN, metrics={"partial": extra}, systems=[s for s in SYSTEMS if s != "sys3"]
    )
    assert table.metric_only == {"partial": ("unjudged",)}


def test_an_error_rate_is_negated_when_declared():
    table = meta_evaluate_systems(human=HUMAN, metrics={"ter": TER}, lower_is_better=["ter"])
    h = [HUMAN[s] for s in SYSTEMS]
    assert table.rows[0].pearson == pytest.approx(
        -sps.pearsonr(h, [TER[s] for s in SYSTEMS]).statistic, abs=1e-12
    )
    assert table.negated == ("ter",)


def test_every_pair_of_metrics_is_tested_best_first_with_both_tests():
    metrics = {"good": GOOD, "poor": POOR, "ter": TER}
    table = meta_evaluate_systems(
        human=HUMAN, metrics=metrics, lower_is_better=["ter"], n_trials=500, rng=7
    )
    order = [row.metric for row in table.rows]
    assert [(t.better, t.worse) for t in table.tests] == [
        (order[0], order[1]),
        (order[0], order[2]),
        (order[1], order[2]),
    ]
    h = [HUMAN[s] for s in SYSTEMS]
    vectors = {"good": GOOD, "poor": POOR, "ter": {s: -v for s, v in TER.items()}}
    generator = np.random.default_rng(7)
    for test in table.tests:
        a = [vectors[test.better][s] for s in SYSTEMS]
        b = [vectors[test.worse][s] for s in SYSTEMS]
        assert test.williams_p == pytest.approx(williams_test_scores(h, a, b).p_value)
        # The same generator, drawn in the same order, gives the same trials.
        again = correlation_permutation_test(
            h, a, b, n_trials=500, alternative="greater", rng=generator
        )
        assert test.permutation_p == pytest.approx(again.p_value)
        assert test.delta == pytest.approx(again.delta)
    assert table.seed == 7


def test_clusters_follow_mt_metrics_eval_assign_ranks():
    p = np.ones((4, 4))
    p[0, 1], p[0, 2], p[0, 3] = 0.3, 0.01, 0.001
    p[1, 2], p[1, 3] = 0.2, 0.04
    p[2, 3] = 0.5
    # metric 2 is beaten by metric 0 of the first cluster; metric 3 only by metric 1, which is
    # not in the second cluster, so it stays with metric 2.
    assert metric_clusters(p, 0.05) == [1, 1, 2, 2]
    assert metric_clusters(p, 0.001) == [1, 1, 1, 2]


def test_a_good_metric_beats_noise_into_a_cluster_of_its_own():
    table = meta_evaluate_systems(human=HUMAN, metrics={"good": GOOD, "poor": POOR}, rng=3)
    clusters = {row.metric: row.cluster for row in table.rows}
    assert table.tests[0].williams_p <= 0.05
    assert clusters == {"good": 1, "poor": 2}


def test_too_few_systems_are_refused_and_three_get_no_clusters():
    with pytest.raises(ValueError, match="2 system"):
        meta_evaluate_systems(human=HUMAN, metrics={"good": GOOD}, systems=["sys0", "sys1"])
    table = meta_evaluate_systems(
        human=HUMAN, metrics={"good": GOOD, "poor": POOR}, systems=SYSTEMS[:3]
    )
    assert table.tests == ()
    assert {row.cluster for row in table.rows} == {None}


def test_two_identical_metrics_are_not_significantly_different_and_share_a_cluster():
    table = meta_evaluate_systems(
        human=HUMAN, metrics={"good": GOOD, "copy": dict(GOOD), "poor": POOR}, rng=2
    )
    same = next(t for t in table.tests if {t.better, t.worse} == {"good", "copy"})
    assert not same.williams_p <= 0.05  # NaN (undefined) or 0.5 (t = 0), never significant
    assert same.delta == 0
    clusters = {row.metric: row.cluster for row in table.rows}
    assert clusters["good"] == clusters["copy"] == 1


def test_the_williams_test_of_a_zero_variance_is_nan_not_an_error():
    result = williams_test(0.8, 0.8, 1.0, 10)
    assert np.isnan(result.p_value)
