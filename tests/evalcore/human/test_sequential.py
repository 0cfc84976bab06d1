"""The anytime-valid order test: the bets and the wealth are the formulas of Waudby-Smith &
Ramdas (2023) worked by hand; under a true tie the chance of ever declaring the pair apart,
over many looks, stays within alpha (a binomial tolerance), where the repeated one-sided
Mann-Whitney test of scipy exceeds it; a real difference is found; the many-pair forms are the
one-pair ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalcore.human.sequential import (
    bets,
    ever_decided,
    first_decided,
    log_wealth,
    many_order_p_values,
    order_p_value,
    order_p_values,
    scaled_differences,
)


def test_differences_are_paired_in_order_and_scaled_to_the_unit_interval() -> None:
    high = np.array([100.0, 50.0, 0.0, 70.0])
    low = np.array([0.0, 50.0, 100.0])
    # (d / 100 + 1) / 2 for d = 100, 0, -100; the fourth of high waits for its partner.
    assert scaled_differences(high, low, (0.0, 100.0)).tolist() == [1.0, 0.5, 0.0]
    # Values outside the scale are clipped to it; a 1-7 scale is scaled by its range 6.
    assert scaled_differences(np.array([9.0]), np.array([1.0]), (1.0, 7.0)).tolist() == [1.0]
    assert scaled_differences(np.array([4.0]), np.array([1.0]), (1.0, 7.0)).tolist() == [0.75]


def test_the_bets_and_the_wealth_are_the_papers_formulas_by_hand() -> None:
    y = np.array([0.6, 0.55, 0.3])
    # Running estimates: m1 = (0.5 + 0.6) / 2 = 0.55, v1 = (0.25 + (0.6 - 0.55)^2) / 2;
    # m2 = (0.5 + 1.15) / 3 = 0.55, v2 = (0.25 + 0.0025 + (0.55 - 0.55)^2) / 3.
    m1, v1 = 0.55, 0.2525 / 2
    m2, v2 = 0.55, 0.2525 / 3
    # The first bet uses the priors (1/2, 1/4): no edge, no bet.
    expected = [0.0, (m1 - 0.5) / (v1 + (m1 - 0.5) ** 2), (m2 - 0.5) / (v2 + (m2 - 0.5) ** 2)]
    assert bets(y) == pytest.approx(expected, rel=1e-12)
    assert expected[1:] == pytest.approx([0.3883495, 0.5769231], abs=1e-7)
    # A bet above the largest stake 2c = 1 is clipped: after 0.9, 0.2 / 0.185 = 1.08.
    assert bets(np.array([0.9, 0.8])).tolist() == [0.0, 1.0]
    up, down = log_wealth(y)
    l2, l3 = expected[1:]
    assert up[-1] == pytest.approx(
        math.log(1 + l2 * (0.55 - 0.5)) + math.log(1 + l3 * (0.3 - 0.5)), rel=1e-12
    )
    assert down.tolist() == [0.0, 0.0, 0.0]  # never a bet on the lower mean
    # The p-value: 2 / the largest wealth so far (the wealth after the second pair).
    # Differences 20, 10 and -40 points are the scaled 0.6, 0.55 and 0.3.
    p = order_p_value(np.array([70.0, 60.0, 10.0]), np.array([50.0, 50.0, 50.0]))
    assert p == pytest.approx(min(1.0, 2 / max(1.0, math.exp(up.max()))), rel=1e-12)


def test_the_threshold_is_two_over_alpha_by_hand() -> None:
    # Every scaled difference 1: the first bet is 0 (the priors), the second
    # 0.25 / (0.15625 + 0.0625) = 1.14 and every later one more, all clipped to 1: the wealth
    # after k pairs is 1.5^(k-1), first at least 2 / 0.05 = 40 at k = 11 (1.5^10 = 57.7,
    # 1.5^9 = 38.4).
    high = np.full(40, 100.0)
    low = np.zeros(40)
    up, _down = log_wealth(scaled_differences(high, low, (0.0, 100.0)))
    assert up == pytest.approx([k * math.log(1.5) for k in range(40)], rel=1e-12)
    assert first_decided([(high, low)], 0.05)[0].tolist() == [11, math.inf]
    assert order_p_value(high[:10], low[:10]) == pytest.approx(2 / 1.5**9, rel=1e-12)
    assert order_p_value(high[:11], low[:11]) == pytest.approx(2 / 1.5**10, rel=1e-12)


def _tied_campaigns(runs: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two systems with the same DA-like distribution (skewed, piled at 100)."""
    rng = np.random.default_rng(seed)
    draw = np.clip(np.round(100 - rng.gamma(2.0, 12.0, size=(2, runs, n))), 0, 100)
    return draw[0], draw[1]


def test_a_tie_is_declared_apart_at_most_alpha_often_however_many_looks() -> None:
    runs, n, alpha = 300, 1000, 0.05
    looks = list(range(50, n + 1, 50))  # 20 looks
    a, b = _tied_campaigns(runs, n, seed=11)
    anytime = sum(ever_decided(a[r], b[r], looks, alpha=alpha) for r in range(runs))
    # Mann-Whitney at every look, either direction at alpha (as the old rule decided a pair in
    # the order of its means): scipy's one-sided tests, vectorised over the runs.
    repeated = np.zeros(runs, dtype=bool)
    for look in looks:
        forth = stats.mannwhitneyu(a[:, :look], b[:, :look], alternative="greater", axis=1)
        back = stats.mannwhitneyu(b[:, :look], a[:, :look], alternative="greater", axis=1)
        repeated |= (forth.pvalue < alpha) | (back.pvalue < alpha)
    # If the true rate were alpha, more than this many of 300 would happen with chance 0.001.
    tolerance = int(stats.binom.ppf(0.999, runs, alpha))
    assert tolerance == 28
    assert anytime <= tolerance
    assert int(repeated.sum()) > 3 * tolerance


def test_a_reversed_order_is_declared_at_most_half_alpha_often() -> None:
    rng = np.random.default_rng(5)
    runs, n, alpha = 400, 800, 0.05
    better = np.clip(np.round(rng.normal(72.0, 25.0, (runs, n))), 0, 100)
    worse = np.clip(np.round(rng.normal(70.0, 25.0, (runs, n))), 0, 100)
    p = np.array([order_p_value(worse[r], better[r]) for r in range(runs)])
    assert int(np.sum(p <= alpha)) <= int(stats.binom.ppf(0.999, runs, alpha / 2))


def test_a_real_difference_is_decided_and_stays_decided() -> None:
    rng = np.random.default_rng(3)
    high = np.clip(np.round(rng.normal(75.0, 20.0, 600)), 0, 100)
    low = np.clip(np.round(rng.normal(65.0, 20.0, 600)), 0, 100)
    forth, back = order_p_values(high, low)
    assert forth <= 0.05
    assert back == 1.0
    # A decision once made stays made: the p-value is 2 / the largest wealth so far.
    after = [order_p_value(high[:k], low[:k]) for k in range(50, 601, 50)]
    assert after == sorted(after, reverse=True)


def test_many_pairs_at_once_are_the_pairs_one_by_one() -> None:
    rng = np.random.default_rng(9)
    sizes = [(5, 9), (300, 200), (0, 4), (50, 50), (1000, 999)]
    pairs = [
        (rng.integers(0, 101, n1).astype(float), rng.integers(0, 101, n2).astype(float))
        for n1, n2 in sizes
    ]
    together = many_order_p_values(pairs)
    for (a, b), row in zip(pairs, together, strict=True):
        assert row.tolist() == pytest.approx(order_p_values(a, b), rel=1e-12)
