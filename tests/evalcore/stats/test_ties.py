"""Kendall variants with ties and tie calibration, against mt-metrics-eval's own test numbers,
scipy and a pair-by-pair count written out in the test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.stats.ties import kendall_variant, tie_calibrated_accuracy

# mt_metrics_eval/stats_test.py, testKendallVariants and testKendallWithTiesOpt.
GOLD = [1, 2, 2, 3, 4]
METRIC = [2, 1, 1.5, 5, 3]


def acc_eq_by_hand(human, metric, epsilon):
    """acc_eq pair by pair: correct when the metric orders the pair as the humans do, or when
    the humans tie it and the metric difference is at most epsilon."""
    correct = total = 0
    for (h1, m1), (h2, m2) in itertools.combinations(zip(human, metric, strict=True), 2):
        total += 1
        if abs(m1 - m2) <= epsilon:
            correct += h1 == h2
        else:
            correct += (h1 - h2) * (m1 - m2) > 0
    return correct / total


def test_kendall_variants_reproduce_mt_metrics_eval_test_numbers():
    assert kendall_variant(GOLD, METRIC, "b") == pytest.approx(0.316227766)
    assert kendall_variant(GOLD, METRIC, "c") == pytest.approx(0.32, abs=1e-12)
    assert kendall_variant(GOLD, METRIC, "23") == pytest.approx(0.2, abs=1e-12)
    assert kendall_variant(GOLD, METRIC, "acc23") == pytest.approx(0.6, abs=1e-12)
    assert kendall_variant(GOLD, METRIC, "acc23", epsilon=2) == pytest.approx(0.4, abs=1e-12)


def test_tau_23_counts_a_tie_in_both_as_agreement_like_mt_metrics_eval_example():
    # mt_metrics_eval/stats_test.py testKendallVariants_23 and ...WithPositiveEpsilon: its
    # counts, C = 13, D = 2, tied only in x 3, only in y 2, in both 1 of 21 pairs.
    x = [1, 1, 1, 2, 2, 3, 4]
    y = [1, 1, 2, 2, 4, 3, 3]
    assert kendall_variant(x, y, "23") == pytest.approx((13 + 1 - 2 - 3 - 2) / 21, abs=1e-12)
    assert kendall_variant(x, y, "acc23") == pytest.approx((13 + 1) / 21, abs=1e-12)
    assert kendall_variant(x, y, "23", epsilon=0.1) == pytest.approx(7 / 21, abs=1e-12)
    # ε = 1 (the same call as mt-metrics-eval's): C = 7, D = 1, tied only by the metric 10,
    # only by the humans 0, by both 3.
    assert kendall_variant(x, y, "23", epsilon=1.0) == pytest.approx(
        (7 + 3 - 1 - 10 - 0) / 21, abs=1e-12
    )


@pytest.mark.parametrize("variant", ["b", "c"])
def test_variants_b_and_c_equal_scipy(variant):
    rng = np.random.default_rng(5)
    human = rng.integers(0, 5, 40).astype(float)
    metric = human + rng.integers(0, 4, 40)
    assert kendall_variant(human, metric, variant) == pytest.approx(
        sps.kendalltau(human, metric, variant=variant).statistic, abs=1e-12
    )


def test_tau_c_refuses_a_tie_threshold():
    with pytest.raises(ValueError, match="τ-c"):
        kendall_variant(GOLD, METRIC, "c", epsilon=0.5)


def test_acc_eq_with_epsilon_equals_the_pair_by_pair_count():
    rng = np.random.default_rng(11)
    human = rng.integers(0, 4, 30).astype(float)
    metric = rng.normal(size=30).round(1)
    for epsilon in (0.0, 0.1, 0.35, 1.0):
        assert kendall_variant(human, metric, "acc23", epsilon=epsilon) == pytest.approx(
            acc_eq_by_hand(human, metric, epsilon), abs=1e-12
        )


def test_tie_calibration_reproduces_mt_metrics_eval_examples():
    # stats_test.py testKendallWithTiesOpt: 0.7.
    assert tie_calibrated_accuracy(GOLD, METRIC).accuracy == pytest.approx(0.7, abs=1e-12)
    # tau_optimization_test.py test_zero_threshold_is_best and test_nonzero_threshold_is_best.
    best = tie_calibrated_accuracy([1, 2, 3, 4], [0, 2, 6, 8])
    assert best.thresholds.tolist() == [0, 2, 4, 6, 8]
    assert best.accuracies == pytest.approx([6 / 6, 4 / 6, 3 / 6, 1 / 6, 0 / 6], abs=1e-12)
    assert (best.epsilon, best.accuracy) == (0.0, pytest.approx(1.0))
    nonzero = tie_calibrated_accuracy([1, 1, 1, 4], [0, 2, 6, 8])
    assert nonzero.accuracies == pytest.approx([3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6], abs=1e-12)
    assert nonzero.epsilon == 4.0
    assert nonzero.accuracy == pytest.approx(4 / 6, abs=1e-12)


def test_tie_calibration_of_groups_reproduces_mt_metrics_eval_regression_example():
    # tau_optimization_test.py test_regression_example; None there is NaN here.
    nan = math.nan
    metric = [
        [0, 5, 2, 3, 2],
        [nan, 2, 1, 5, 3],
        [9, 1, 5, 3, 8],
        [9, 3, 4, 4, 1],
        [nan, nan, nan, nan, nan],
    ]
    human = [
        [1, 5, 2, 1, 1],
        [4, 2, 2, 1, 4],
        [5, 9, 2, 8, 7],
        [7, 6, nan, 3, 2],
        [nan, nan, nan, nan, nan],
    ]
    result = tie_calibrated_accuracy(human, metric)
    assert result.thresholds.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    expected = [
        0.4666666666666667,
        0.4916666666666668,
        0.38333333333333347,
        0.29166666666666674,
        0.2666666666666667,
        0.2,
        0.15833333333333335,
        0.15833333333333335,
        0.1166666666666667,
    ]
    assert result.accuracies == pytest.approx(expected, abs=1e-12)
    assert result.epsilon == 1.0
    assert result.n_groups == 4


def test_tie_calibration_is_the_best_pair_by_pair_accuracy_over_every_threshold():
    rng = np.random.default_rng(3)
    human = rng.integers(0, 3, 12).astype(float)  # many human ties
    metric = rng.normal(size=12).round(2)
    result = tie_calibrated_accuracy(human, metric)
    gaps = {abs(a - b) for a, b in itertools.combinations(metric, 2)} | {0.0}
    by_hand = {eps: acc_eq_by_hand(human, metric, eps) for eps in gaps}
    best = max(by_hand.values())
    assert result.accuracy == pytest.approx(best, abs=1e-12)
    assert result.epsilon == min(eps for eps, acc in by_hand.items() if acc == best)
    assert result.n_pairs == 66


def test_tie_calibration_of_nothing_is_nan():
    result = tie_calibrated_accuracy([1.0], [2.0])
    assert math.isnan(result.accuracy)
    assert result.n_groups == 0
