"""Segment-level correlations with mt-metrics-eval's groupings, against the numbers of its own
test file and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.metaeval.segments import (
    meta_evaluate_segments,
    segment_correlation,
    segment_matrices,
)
from evalcore.stats.correlation import williams_test
from evalcore.stats.ties import tie_calibrated_accuracy

# mt_metrics_eval/stats_test.py CorrelationTest: Correlation(2, [1..6], [2, 1, 4, 3, 3, 7]),
# two systems of three segments each.
HUMAN = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
METRIC = np.array([[2.0, 1.0, 4.0], [3.0, 3.0, 7.0]])


@pytest.mark.parametrize(
    ("method", "average_by", "expected"),
    [
        ("pearson", "none", 0.776),
        ("pearson", "sys", 0.760),
        ("pearson", "item", 1.00),
        ("kendall", "none", 0.552),
        ("kendall", "sys", 0.575),
        ("kendall", "item", 1.00),
    ],
)
def test_groupings_reproduce_mt_metrics_eval_test_numbers(method, average_by, expected):
    value = segment_correlation(HUMAN, METRIC, method=method, average_by=average_by)
    assert value == pytest.approx(expected, abs=5e-4)


def test_by_system_is_the_mean_of_scipys_per_system_correlations():
    rng = np.random.default_rng(1)
    human = rng.normal(size=(4, 30))
    metric = human + rng.normal(size=(4, 30))
    human[2, 5] = np.nan  # a missing human score leaves its cell out
    per_system = [
        sps.spearmanr(h[~np.isnan(h)], m[~np.isnan(h)]).statistic
        for h, m in zip(human, metric, strict=True)
    ]
    value = segment_correlation(human, metric, method="spearman", average_by="sys")
    assert value == pytest.approx(np.mean(per_system), abs=1e-12)


def test_acc_eq_by_item_calibrates_one_threshold_over_all_items():
    result = segment_correlation(HUMAN, METRIC, method="acc_eq", average_by="item")
    assert result == pytest.approx(tie_calibrated_accuracy(HUMAN.T, METRIC.T).accuracy)


def test_matrices_refuse_a_missing_metric_score_where_the_humans_scored():
    human = {"A": [1.0, math.nan], "B": [2.0, 3.0]}
    h, m = segment_matrices(human, {"A": [1.0, math.nan], "B": [1.0, 2.0]}, ["A", "B"])
    assert h.shape == m.shape == (2, 2)
    gap = {"A": [1.0, 0.0], "B": [1.0, math.nan]}
    with pytest.raises(ValueError, match="no score for system 'B', segment 2"):
        segment_matrices(human, gap, ["A", "B"], metric_name="x")
    with pytest.raises(ValueError, match="has no segment scores for system 'B'"):
        segment_matrices(human, {"A": [1.0, 0.0]}, ["A", "B"])


def _z(v):
    return (v - v.mean()) / v.std()


def test_segment_permutation_p_matches_the_exact_enumeration_of_every_swap():
    # Twelve scored cells (one of 2 × 7 left out by the humans): all 2**12 swaps of the two
    # metrics' z-scores give the exact one-sided p that the Monte-Carlo test estimates.
    rng = np.random.default_rng(7)
    human = rng.normal(size=(2, 7))
    human[0, 3] = human[1, 6] = np.nan
    good = np.nan_to_num(human) + rng.normal(0, 0.6, size=(2, 7))
    poor = np.nan_to_num(human) + rng.normal(0, 1.2, size=(2, 7))
    table = meta_evaluate_segments(
        human={"s1": list(human[0]), "s2": list(human[1])},
        metrics={
            "good": {"s1": list(good[0]), "s2": list(good[1])},
            "poor": {"s1": list(poor[0]), "s2": list(poor[1])},
        },
        n_trials=20000,
        rng=3,
    )
    scored = ~np.isnan(human)
    h, a, b = human[scored], _z(good[scored]), _z(poor[scored])
    observed = sps.pearsonr(h, a).statistic - sps.pearsonr(h, b).statistic
    hits = 0
    for mask in range(2**h.size):
        swap = np.array([(mask >> i) & 1 for i in range(h.size)], dtype=bool)
        pa, pb = np.where(swap, b, a), np.where(swap, a, b)
        hits += sps.pearsonr(h, pa).statistic - sps.pearsonr(h, pb).statistic >= observed - 1e-12
    exact = hits / 2**h.size
    (test,) = table.tests
    assert (test.better, test.worse) == ("good", "poor")
    assert test.delta == pytest.approx(observed, abs=1e-12)
    # Monte-Carlo error of 20,000 trials: under 0.0036; four of them allowed.
    assert test.permutation_p == pytest.approx(exact, abs=4 * math.sqrt(0.25 / 20000))
    # Williams on the scored cells, its three correlations from scipy, n = 12 cells.
    r23 = sps.pearsonr(good[scored], poor[scored]).statistic
    williams = williams_test(
        sps.pearsonr(h, good[scored]).statistic, sps.pearsonr(h, poor[scored]).statistic, r23, 12
    )
    assert test.williams_p == pytest.approx(williams.p_value, abs=1e-12)
    assert (table.n_trials, table.seed, table.n_cells) == (20000, 3, 12)


def test_segment_clusters_split_a_clearly_worse_metric_and_keep_near_equals_together():
    rng = np.random.default_rng(11)
    human = rng.normal(size=(4, 200))
    near = human + rng.normal(0, 0.5, size=human.shape)
    twin = human + rng.normal(0, 0.5, size=human.shape)
    noise = rng.normal(size=human.shape)

    def by_system(m):
        return {f"s{i}": list(row) for i, row in enumerate(m)}

    table = meta_evaluate_segments(
        human=by_system(human),
        metrics={"near": by_system(near), "twin": by_system(twin), "noise": by_system(noise)},
        rng=5,
    )
    clusters = {r.metric: r.cluster for r in table.rows if r.average_by == "none"}
    assert clusters["noise"] == 2
    assert clusters["near"] == clusters["twin"] == 1
    assert all(r.cluster is None for r in table.rows if r.average_by != "none")
    assert [t.worse for t in table.tests].count("noise") == 2
    assert all(t.permutation_p < 0.01 for t in table.tests if t.worse == "noise")
