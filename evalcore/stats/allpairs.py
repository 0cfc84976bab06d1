"""Paired bootstrap and approximate randomisation of every pair of n systems, at the cost of one.

Comparing each system with all the others by :func:`~evalcore.stats.resampling.paired_bootstrap`
and :func:`~evalcore.stats.resampling.paired_approximate_randomization`, every call seeded alike
(as sacreBLEU tests every system with the same seed), draws the same resamples n times and
multiplies them by the same statistics n times: only the compared system changes. Here the
draws and the products are made once for the n systems, and each pair takes its columns from
them. The numbers are those of the n calls, bit for bit (``tests/evalcore/stats/
test_allpairs.py``): the same draws, the same weighted sums (each column of a product is its own
dot products, wherever it sits), the same score function on the same sums, the same comparisons.

Approximate randomisation also scores each trial's pseudo-systems once instead of twice: with
kept and moved sums K and M of a trial, pair (i, j) scores Kᵢ + Mⱼ and Mᵢ + Kⱼ, and the second is
the first of pair (j, i) (floating-point addition is commutative), so one score per ordered pair
serves both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalcore.stats.resampling import (
    FloatArray,
    ScoreFn,
    _as_stats,
    _flatten_systems,
    as_generator,
    bootstrap_counts,
    comparison_tolerance,
    paired_bootstrap_result,
    resampled_scores,
    swap_masks,
    weight_dtype,
)

# Bytes of the (trials × systems × systems × statistics) sums scored at once.
_SCORE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class AllPairs:
    """Row i, column j: system i (a) compared with system j (b), as
    ``paired_bootstrap(stats[i], stats)`` and ``paired_approximate_randomization(stats[i],
    stats)`` with the same seed report it. The diagonal compares a system with itself."""

    bootstrap_p: FloatArray
    """sacreBLEU's paired-bootstrap p-value."""
    wins: FloatArray
    """Share of resamples in which i scored higher than j."""
    losses: FloatArray
    """Share of resamples in which i scored lower than j."""
    observed_delta: FloatArray
    """score(j) − score(i) on the full data."""
    ar_p: FloatArray
    """Approximate randomisation's p = (c + 1) / (trials + 1)."""
    exceed_count: NDArray[np.int64]
    n_samples: int
    n_trials: int
    seed: int


def all_pairs_tests(
    stats: ArrayLike, score_fn: ScoreFn, *, n_samples: int, n_trials: int, seed: int
) -> AllPairs:
    """Paired bootstrap (``n_samples`` resamples) and approximate randomisation (``n_trials``)
    of every ordered pair of the systems of ``stats`` ``(n_systems, n_segments, n_stats)``,
    each test drawn from ``seed`` as the one-system-against-all calls draw it."""
    if n_samples < 1 or n_trials < 1:
        raise ValueError("n_samples and n_trials must be positive")
    array, _ = _as_stats(stats)
    n = array.shape[0]
    full = np.asarray(score_fn(array.sum(axis=1)), dtype=np.float64)

    dtype = weight_dtype(array, array.shape[1])
    counts = bootstrap_counts(as_generator(seed), n_samples, array.shape[1], dtype=dtype)
    samples = resampled_scores(array, score_fn, counts)
    bootstrap_p = np.empty((n, n))
    wins = np.empty((n, n))
    losses = np.empty((n, n))
    delta = np.empty((n, n))
    for i in range(n):
        result = paired_bootstrap_result(
            np.broadcast_to(samples[:, i : i + 1], (n_samples, n)),
            samples,
            np.broadcast_to(full[i : i + 1], (n,)),
            full,
            seed=seed,
        )
        bootstrap_p[i] = result.p_value
        wins[i] = result.wins
        losses[i] = result.losses
        delta[i] = result.observed_delta

    exceed = _exceed_counts(array, score_fn, full, n_trials, as_generator(seed))
    return AllPairs(
        bootstrap_p=bootstrap_p,
        wins=wins,
        losses=losses,
        observed_delta=delta,
        ar_p=np.asarray((exceed + 1.0) / (n_trials + 1.0), dtype=np.float64),
        exceed_count=exceed,
        n_samples=n_samples,
        n_trials=n_trials,
        seed=seed,
    )


def _exceed_counts(
    array: FloatArray,
    score_fn: ScoreFn,
    full: FloatArray,
    n_trials: int,
    generator: np.random.Generator,
) -> NDArray[np.int64]:
    """c of every ordered pair: trials whose |score difference| exceeds the observed one by more
    than :func:`comparison_tolerance` (``_ar_exceed_counts`` of the resampling module, for all
    pairs at once; the same masks, sums and limits)."""
    n, n_segments, n_stats = array.shape
    flat = _flatten_systems(array)
    totals = array.sum(axis=1)
    # observed[i, j] = score(j) − score(i), as one-against-all computes it for row i.
    threshold = np.abs(full[np.newaxis, :] - full[:, np.newaxis])
    limit = threshold + comparison_tolerance(
        threshold,
        np.broadcast_to(full[:, np.newaxis], (n, n)),
        np.broadcast_to(full[np.newaxis, :], (n, n)),
    )
    dtype = weight_dtype(flat, n_segments)
    flat_typed = flat.astype(dtype)
    step = max(1, _SCORE_BYTES // (8 * n * n * n_stats))
    exceed = np.zeros((n, n), dtype=np.int64)
    for mask in swap_masks(generator, n_trials, n_segments):
        kept = (mask.astype(dtype) @ flat_typed).astype(np.float64)
        kept = kept.reshape(mask.shape[0], n, n_stats)
        moved = totals[np.newaxis] - kept
        for start in range(0, mask.shape[0], step):
            k = kept[start : start + step]
            m = moved[start : start + step]
            # scored[t, i, j] = score(Kᵢ + Mⱼ): pair (i, j)'s pseudo-a, pair (j, i)'s pseudo-b.
            scored = np.asarray(
                score_fn(k[:, :, np.newaxis, :] + m[:, np.newaxis, :, :]), dtype=np.float64
            )
            diff = np.abs(scored - scored.transpose(0, 2, 1))
            exceed += (diff > limit).sum(axis=0)
    return exceed
