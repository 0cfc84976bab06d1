"""Correlations and their tests against scipy, a published Williams-test example and hand counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.stats.correlation import (
    KENDALL_PAIRWISE_MAX,
    correlation,
    correlation_bootstrap_ci,
    correlation_permutation_test,
    darr_kendall,
    grouped_correlation,
    kendall_tau,
    kendall_tau_rows,
    pair_counts,
    pairwise_accuracy,
    pearson,
    spearman,
    williams_test,
    williams_test_scores,
)

RNG = np.random.default_rng(2024)
X = RNG.integers(0, 6, 60).astype(float)  # many ties
Y = X + RNG.integers(0, 5, 60)


def test_pearson_equals_scipy():
    assert pearson(X, Y) == pytest.approx(sps.pearsonr(X, Y).statistic, abs=1e-12)


def test_spearman_is_pearson_on_tie_averaged_ranks_and_equals_scipy():
    assert spearman(X, Y) == pytest.approx(sps.spearmanr(X, Y).statistic, abs=1e-12)
    # Kos & Bojar: tied values share the mean of their ranks
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(
        pearson([1, 2.5, 2.5, 4], [1, 2, 3, 4])
    )


@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_tau_b_and_c_equal_scipy(variant):
    assert kendall_tau(X, Y, variant) == pytest.approx(
        sps.kendalltau(X, Y, variant=variant).statistic, abs=1e-12
    )
    x2, y2 = RNG.normal(size=25), RNG.normal(size=25)
    assert kendall_tau(x2, y2, variant) == pytest.approx(
        sps.kendalltau(x2, y2, variant=variant).statistic, abs=1e-12
    )


def test_kendall_tau_rows_is_kendall_tau_row_for_row_and_equals_scipy():
    rng = np.random.default_rng(7)
    # Short rows with many ties (system scores in bootstrap resamples), a constant row, a NaN.
    x = rng.integers(0, 4, (300, 7)).astype(float)
    y = x + rng.integers(0, 3, (300, 7))
    x[3] = 1.0
    y[5, 2] = np.nan
    rows = kendall_tau_rows(x.reshape(30, 10, 7), y.reshape(30, 10, 7), max_cells=50)
    assert rows.shape == (30, 10)
    expected = [kendall_tau(a, b) for a, b in zip(x, y, strict=True)]
    np.testing.assert_array_equal(rows.ravel(), expected)  # bit for bit, NaN where it is NaN
    assert math.isnan(rows.ravel()[3])
    for a, b, tau in zip(x[6:40], y[6:40], rows.ravel()[6:40], strict=True):
        assert tau == pytest.approx(sps.kendalltau(a, b).statistic, abs=1e-12)


def test_grouping_none_system_and_item():
    human = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0], [0.0, 1.0, np.nan]])
    metric = np.array([[1.5, 2.0, 2.0], [2.5, 3.0, 4.0], [1.0, 0.5, 9.0]])
    present = ~np.isnan(human)
    assert grouped_correlation(human, metric, grouping="none") == pytest.approx(
        sps.pearsonr(human[present], metric[present]).statistic
    )
    sys_h = [2.0, 3.0, 0.5]
    sys_m = [np.mean([1.5, 2.0, 2.0]), np.mean([2.5, 3.0, 4.0]), 0.75]
    assert grouped_correlation(human, metric, grouping="system") == pytest.approx(
        sps.pearsonr(sys_h, sys_m).statistic
    )
    per_item = [
        sps.pearsonr(human[:, 0], metric[:, 0]).statistic,
        sps.pearsonr(human[:, 1], metric[:, 1]).statistic,
        sps.pearsonr(human[:2, 2], metric[:2, 2]).statistic,
    ]
    assert grouped_correlation(human, metric, grouping="item") == pytest.approx(np.mean(per_item))
    assert grouped_correlation(human, metric, method="kendall", grouping="system") == pytest.approx(
        sps.kendalltau(sys_h, sys_m).statistic
    )


def test_darr_kendall_counts_pairs_of_one_source_past_the_threshold():
    # source 1: human 10, 50, 90 -> pairs (10,50) 40, (10,90) 80, (50,90) 40 all pass 25
    # source 2: human 60, 70 -> difference 10, left out
    human = [10, 50, 90, 60, 70]
    metric = [0.1, 0.3, 0.2, 0.0, 1.0]
    groups = [1, 1, 1, 2, 2]
    result = darr_kendall(human, metric, groups, threshold=25)
    # (10,50): metric 0.1<0.3 concordant; (10,90): 0.1<0.2 concordant; (50,90): 0.3>0.2 discordant
    assert (result.concordant, result.discordant, result.pairs) == (2, 1, 3)
    assert result.tau == pytest.approx(1 / 3)


def test_darr_kendall_counts_a_metric_tie_as_discordant():
    result = darr_kendall([0, 100], [0.5, 0.5], [7, 7])
    assert (result.concordant, result.discordant, result.tau) == (0, 1, -1.0)


def test_pairwise_accuracy_is_the_share_of_system_pairs_ordered_alike():
    assert pairwise_accuracy([1, 2, 3, 4], [10, 20, 40, 30]) == pytest.approx(5 / 6)


def test_williams_test_reproduces_the_psych_r_test_example():
    # psych::r.test(n = 103, r12 = .4, r23 = .1, r13 = .5): t = -0.89, two-sided p = 0.37
    result = williams_test(0.4, 0.5, 0.1, 103)
    assert result.t == pytest.approx(-0.89, abs=0.005)
    assert 2 * min(result.p_value, 1 - result.p_value) == pytest.approx(0.37, abs=0.005)
    assert result.df == 100


def test_williams_test_is_antisymmetric_and_significant_for_a_clearly_better_metric():
    forward = williams_test(0.9, 0.6, 0.5, 50)
    backward = williams_test(0.6, 0.9, 0.5, 50)
    assert forward.t == pytest.approx(-backward.t)
    assert forward.p_value < 0.01
    human = RNG.normal(size=200)
    good = human + RNG.normal(scale=0.3, size=200)
    poor = human + RNG.normal(scale=1.5, size=200)
    assert williams_test_scores(human, good, poor).p_value < 0.01


def test_bootstrap_ci_of_a_system_level_correlation_brackets_the_value():
    human = RNG.normal(size=(8, 300)) + np.arange(8)[:, None] * 0.1
    metric = human + RNG.normal(size=(8, 300))
    ci = correlation_bootstrap_ci(human, metric, n_samples=300, rng=3)
    assert ci.low <= ci.value <= ci.high
    assert ci.value == pytest.approx(grouped_correlation(human, metric, grouping="system"))
    again = correlation_bootstrap_ci(human, metric, n_samples=300, rng=3)
    assert (again.low, again.high) == (ci.low, ci.high)
    segment = correlation_bootstrap_ci(
        human[:, :40], metric[:, :40], method="spearman", grouping="none", n_samples=200, rng=3
    )
    assert segment.low <= segment.value <= segment.high


def test_permutation_test_between_metrics():
    human = RNG.normal(size=150)
    good = human + RNG.normal(scale=0.3, size=150)
    poor = human + RNG.normal(scale=2.0, size=150)
    assert correlation_permutation_test(human, good, poor, n_trials=500, rng=1).p_value < 0.01
    same = correlation_permutation_test(human, good, good * 3 + 1, n_trials=500, rng=1)
    assert same.delta == pytest.approx(0.0, abs=1e-12)
    assert same.p_value == 1 / 501  # affine copies: every permutation gives the same correlation
    swapped = correlation_permutation_test(human, poor, good, n_trials=500, rng=1)
    forward = correlation_permutation_test(human, good, poor, n_trials=500, rng=1)
    assert swapped.p_value == forward.p_value


def test_correlation_dispatches_and_rejects_unknown_methods():
    assert correlation(X, Y, "kendall_c") == pytest.approx(
        sps.kendalltau(X, Y, variant="c").statistic
    )
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="unknown method"):
        correlation(X, Y, "cosine")  # type: ignore[arg-type]


def test_darr_kendall_reproduces_mt_metrics_eval_kendall_like_with_inclusive_threshold():
    # mt_metrics_eval/stats_test.py CorrelationFunctionsTest.testKendallLike: 3/5 at 25 (no
    # pair differs by exactly 25), 2/6 at 1 where mt-metrics-eval keeps |Δ| = 1 (>=).
    gold, metric, one_group = [10, 11, 100, 150], [2, 1, 4, 3], [0, 0, 0, 0]
    assert darr_kendall(gold, metric, one_group).tau == pytest.approx(3 / 5)
    inclusive = darr_kendall(gold, metric, one_group, threshold=1, inclusive=True)
    assert (inclusive.tau, inclusive.concordant, inclusive.discordant) == (
        pytest.approx(2 / 6),
        4,
        2,
    )
    # The findings' "more than 25" leaves out the pair that differs by exactly the threshold.
    assert darr_kendall(gold, metric, one_group, threshold=1).pairs == 5


def test_one_sided_permutation_test_points_the_way_of_the_hypothesis():
    rng = np.random.default_rng(12)
    human = rng.normal(size=40)
    good = human + rng.normal(scale=0.3, size=40)
    poor = rng.normal(size=40)
    better = correlation_permutation_test(human, good, poor, alternative="greater", rng=1)
    worse = correlation_permutation_test(human, poor, good, alternative="greater", rng=1)
    assert better.p_value < 0.01
    assert worse.p_value > 0.99
    assert better.delta == pytest.approx(-worse.delta)


def test_kendall_tau_of_many_points_is_scipys_and_the_pair_counts():
    # Above KENDALL_PAIRWISE_MAX points τ-b comes from scipy's count; with many ties in both
    # (scores rounded to one decimal) it equals the τ-b of the exact pair counts.
    rng = np.random.default_rng(12)
    n = KENDALL_PAIRWISE_MAX + 500
    x = np.round(rng.normal(size=n), 1)
    y = np.round(x + rng.normal(size=n), 1)
    counts = pair_counts(x, y)
    n0 = n * (n - 1) / 2
    by_pairs = (counts.concordant - counts.discordant) / math.sqrt(
        (n0 - counts.ties_x - counts.ties_both) * (n0 - counts.ties_y - counts.ties_both)
    )
    assert kendall_tau(x, y) == pytest.approx(by_pairs, abs=1e-12)
    assert kendall_tau(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-15)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_pearson_permutation_counts_the_trials_that_forming_each_swap_counts(alternative):
    # Pearson's trials come from sums changed by a matrix product; forming every swapped pair
    # of vectors from the same draws and correlating them with numpy counts the same trials.
    rng = np.random.default_rng(31)
    human = rng.normal(size=80)
    a, b = human + rng.normal(size=80), human + rng.normal(scale=1.3, size=80)
    shown = correlation_permutation_test(human, a, b, n_trials=300, alternative=alternative, rng=9)
    za, zb = (a - a.mean()) / a.std(), (b - b.mean()) / b.std()
    swaps = np.random.default_rng(9).integers(2, size=(300, 80), dtype=bool)
    observed = np.corrcoef(human, za)[0, 1] - np.corrcoef(human, zb)[0, 1]
    diffs = np.array(
        [
            np.corrcoef(human, np.where(s, zb, za))[0, 1]
            - np.corrcoef(human, np.where(s, za, zb))[0, 1]
            for s in swaps
        ]
    )
    hits = diffs >= observed if alternative == "greater" else np.abs(diffs) > abs(observed)
    assert shown.delta == pytest.approx(observed, abs=1e-12)
    assert shown.p_value == (hits.sum() + 1) / 301
