"""Ties in resampling tests with fractional statistics are decided by the data, not by rounding.

The resampled sums are matrix products (and ``totals - kept`` for AR), the observed ones
``stats.sum``; with fractional values (means of human scores, BERTR, TER over several
references) a difference that equals the observed one in exact arithmetic comes out a few ulps
either side. The references here are exact rational arithmetic (:class:`fractions.Fraction`) on
the resamples sacreBLEU 2.6 documents drawing from a seed —
``default_rng(seed).integers(2, size=(trials, n), dtype=bool)`` for AR and
``default_rng(seed).choice(n, size=(samples, n))`` for the bootstrap — and the enumeration of
all 2ⁿ swaps, not our own code.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from evalcore.stats.multirun import compare_runs, stratified_approximate_randomization
from evalcore.stats.resampling import (
    mean_score,
    mean_statistics,
    paired_approximate_randomization,
    paired_bootstrap,
)


def _da_means(rng: np.random.Generator, n: int) -> list[Fraction]:
    """Means of three DA scores (0–100) per segment: multiples of 1/3, mostly not floats."""
    return [Fraction(int(s), 3) for s in rng.integers(0, 301, size=n)]


def _floats(values: list[Fraction]) -> np.ndarray:
    return np.array([float(v) for v in values])


def _one_segment_apart(seed: int, n: int = 30) -> tuple[list[Fraction], list[Fraction]]:
    rng = np.random.default_rng(seed)
    a = _da_means(rng, n)
    b = list(a)
    k = int(rng.integers(n))
    b[k] = a[k] + Fraction(int(rng.integers(1, 90)), 3)
    return a, b


@pytest.mark.parametrize("seed", range(12))
def test_systems_differing_in_one_segment_get_p_of_one_over_trials_plus_one(seed):
    # Every trial either keeps or swaps the one differing segment, so |difference| always equals
    # the observed one: no trial is strictly greater, p = 1 / (R + 1) exactly (the audit's case:
    # before the fix about half the seeds gave p ≈ 0.5).
    a, b = _one_segment_apart(seed)
    stats_a, stats_b = mean_statistics(_floats(a)), mean_statistics(_floats(b))
    ar = paired_approximate_randomization(stats_a, stats_b, mean_score, n_trials=1000, rng=seed)
    assert int(ar.exceed_count) == 0
    assert ar.p_value == 1 / 1001
    # Either side may be the baseline, and several systems in one call change nothing.
    ar_ba = paired_approximate_randomization(stats_b, stats_a, mean_score, n_trials=1000, rng=seed)
    assert ar_ba.p_value == 1 / 1001
    many = paired_approximate_randomization(
        stats_a, np.stack([stats_b, stats_a, stats_b]), mean_score, n_trials=1000, rng=seed
    )
    assert many.p_value.tolist() == [1 / 1001] * 3


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("statistic", ["pooled", "mean_of_runs"])
def test_stratified_ar_with_one_differing_cell_gets_p_of_one_over_trials_plus_one(seed, statistic):
    # Three runs per system; b differs from a in one (run, segment) cell. Any reassignment of a
    # stratum leaves the pooled and the mean-of-runs |difference| equal to the observed one.
    rng = np.random.default_rng(100 + seed)
    runs_a = np.array([_floats(_da_means(rng, 25)) for _ in range(3)])
    runs_b = runs_a.copy()
    runs_b[int(rng.integers(3)), int(rng.integers(25))] += 41 / 3
    a, b = mean_statistics(runs_a), mean_statistics(runs_b)
    test = stratified_approximate_randomization(
        a, b, mean_score, n_trials=500, statistic=statistic, rng=seed
    )
    assert test.p_value == 1 / 501
    table = compare_runs(
        [("a", a), ("b", b)], mean_score, baseline="a", n_bootstrap=10, n_trials=500, rng=seed
    )
    assert table.systems[1].p_value == 1 / 501


def _exact_abs_delta(a: list[Fraction], b: list[Fraction], keep: np.ndarray) -> Fraction:
    """|mean(pseudo-b) − mean(pseudo-a)| in exact arithmetic; keep[i] leaves segment i in place."""
    pa = sum((x if k else y) for x, y, k in zip(a, b, keep, strict=True))
    pb = sum((y if k else x) for x, y, k in zip(a, b, keep, strict=True))
    return abs(Fraction(pb - pa, len(a)))


def _tie_rich_pair(seed: int, n: int) -> tuple[list[Fraction], list[Fraction]]:
    """Differences b − a of ±1/3 or 0: many swap patterns tie with the observed one."""
    rng = np.random.default_rng(seed)
    a = _da_means(rng, n)
    b = [x + Fraction(int(d), 3) for x, d in zip(a, rng.choice([-1, 0, 1], size=n), strict=True)]
    return a, b


@pytest.mark.parametrize("seed", range(8))
def test_ar_counts_exactly_the_trials_that_exact_arithmetic_counts(seed):
    n, trials = 10, 2000
    a, b = _tie_rich_pair(seed, n)
    observed = _exact_abs_delta(a, b, np.ones(n, dtype=bool))
    masks = np.random.default_rng(seed).integers(2, size=(trials, n), dtype=bool)
    exact_count = sum(_exact_abs_delta(a, b, mask) > observed for mask in masks)
    ties = sum(_exact_abs_delta(a, b, mask) == observed for mask in masks)
    assert ties > trials // 20  # the case is one where rounding could matter
    ar = paired_approximate_randomization(
        mean_statistics(_floats(a)),
        mean_statistics(_floats(b)),
        mean_score,
        n_trials=trials,
        rng=seed,
    )
    assert int(ar.exceed_count) == exact_count
    assert ar.p_value == (exact_count + 1) / (trials + 1)

    # And the sampled p agrees with the exact one over all 2^n swaps (binomial error, 5 sd).
    all_masks = itertools.product([True, False], repeat=n)
    p_exact = Fraction(sum(_exact_abs_delta(a, b, np.array(m)) > observed for m in all_masks), 2**n)
    sd = float(np.sqrt(float(p_exact) * (1 - float(p_exact)) / trials))
    assert exact_count / trials == pytest.approx(float(p_exact), abs=5 * sd + 1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_paired_bootstrap_ties_and_p_value_follow_exact_arithmetic(seed):
    n, samples = 12, 1000
    a, b = _tie_rich_pair(seed, n)
    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)

    def mean(values: list[Fraction], rows: np.ndarray) -> Fraction:
        return Fraction(sum(values[i] for i in rows), n)

    sa = [mean(a, rows) for rows in idx]
    sb = [mean(b, rows) for rows in idx]
    wins = sum(x > y for x, y in zip(sa, sb, strict=True))
    losses = sum(x < y for x, y in zip(sa, sb, strict=True))
    ties = samples - wins - losses
    assert ties > 0
    diffs = [abs(y - x) for x, y in zip(sa, sb, strict=True)]
    centre = Fraction(sum(diffs), samples)
    observed = abs(Fraction(sum(b) - sum(a), n))
    exceed = sum(d - centre > observed for d in diffs)

    boot = paired_bootstrap(
        mean_statistics(_floats(a)),
        mean_statistics(_floats(b)),
        mean_score,
        n_samples=samples,
        rng=seed,
    )
    assert boot.wins == wins / samples
    assert boot.losses == losses / samples
    assert boot.ties == pytest.approx(ties / samples, abs=1e-12)
    assert boot.p_value == (exceed + 1) / (samples + 1)


@pytest.mark.parametrize("seed", range(6))
def test_paired_bootstrap_of_one_segment_apart_ties_whenever_that_segment_is_not_drawn(seed):
    a, b = _one_segment_apart(seed, n=20)
    k = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    idx = np.random.default_rng(seed).choice(20, size=(500, 20), replace=True)
    undrawn = float((idx != k).all(axis=1).mean())
    boot = paired_bootstrap(
        mean_statistics(_floats(a)),
        mean_statistics(_floats(b)),
        mean_score,
        n_samples=500,
        rng=seed,
    )
    assert boot.ties == pytest.approx(undrawn, abs=1e-12)
    assert boot.wins == 0.0  # b is never below a
    assert boot.losses == pytest.approx(1 - undrawn, abs=1e-12)
