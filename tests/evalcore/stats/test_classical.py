"""Sign test, t-interval and proportion interval against Koehn (Figs. 8.12, 8.13) and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.stats.classical import (
    proportion_interval,
    sign_test,
    sign_test_min_wins,
    sign_test_p,
    sign_test_scores,
    t_interval,
    t_value,
)


def test_sign_test_of_40_wins_in_100_gives_koehns_p_of_0_0569():
    assert sign_test(40, 60).p_value == pytest.approx(0.0569, abs=5e-5)


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (3, 10), (5, 10), (40, 100), (61, 100), (17, 20), (250, 480)]
)
def test_sign_test_equals_scipy_binomtest(k, n):
    assert sign_test_p(k, n) == pytest.approx(sps.binomtest(k, n, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize(
    ("n", "at_01", "at_05", "at_10"),
    [(5, None, None, 5), (10, 10, 9, 9), (20, 17, 15, 15), (50, 35, 33, 32), (100, 64, 61, 59)],
)
def test_fewest_wins_for_significance_follow_koehn_figure_8_13(n, at_01, at_05, at_10):
    assert sign_test_min_wins(n, 0.01) == at_01
    assert sign_test_min_wins(n, 0.05) == at_05
    assert sign_test_min_wins(n, 0.10) == at_10


def test_sign_test_on_scores_leaves_ties_out():
    result = sign_test_scores([1, 2, 3, 3], [0, 3, 3, 3])
    assert (result.wins, result.losses, result.ties, result.n) == (1, 1, 2, 2)
    assert result.p_value == 1.0


@pytest.mark.parametrize(
    ("confidence", "at_100", "at_inf"),
    [(0.99, 2.6259, 2.5759), (0.95, 1.9849, 1.9600), (0.90, 1.6602, 1.6449)],
)
def test_t_values_agree_with_koehn_figure_8_12(confidence, at_100, at_inf):
    # Koehn's table agrees with the t quantiles to about 0.001 (DESIGN §10).
    assert t_value(100, confidence) == pytest.approx(at_100, abs=1e-3)
    assert t_value(math.inf, confidence) == pytest.approx(at_inf, abs=1e-4)
    assert t_value(300, confidence) == pytest.approx(sps.t.ppf(0.5 + confidence / 2, 299))


def test_t_interval_is_mean_plus_minus_t_s_over_root_n_as_scipy_computes_it():
    x = np.random.default_rng(0).normal(3, 2, size=37)
    ours = t_interval(x, 0.95)
    low, high = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert (ours.low, ours.high) == pytest.approx((low, high), rel=1e-12)
    assert ours.half_width == pytest.approx(sps.t.ppf(0.975, 36) * x.std(ddof=1) / math.sqrt(37))


@pytest.mark.parametrize("method", ["wilson", "exact"])
@pytest.mark.parametrize(("k", "n"), [(30, 100), (0, 20), (20, 20), (7, 9)])
def test_proportion_interval_equals_scipy(method, k, n):
    expected = sps.binomtest(k, n).proportion_ci(0.95, method=method)
    assert proportion_interval(k, n, 0.95, method) == pytest.approx(
        (expected.low, expected.high), abs=1e-9
    )


def test_normal_proportion_interval_is_p_plus_minus_z_standard_error():
    low, high = proportion_interval(30, 100, 0.95, "normal")
    d = 1.959963984540054 * math.sqrt(0.3 * 0.7 / 100)
    assert (low, high) == pytest.approx((0.3 - d, 0.3 + d))


def test_invalid_counts_are_refused():
    with pytest.raises(ValueError, match="k <= n"):
        sign_test_p(5, 3)
    with pytest.raises(ValueError, match="n > 0"):
        proportion_interval(1, 0)
