"""Bootstrap resampling and approximate randomisation on per-segment sufficient statistics.

Every corpus-level score (BLEU, chrF, TER, a mean of human scores, ...) is a function of the *sum*
of per-segment statistics. A resample is therefore a vector of segment weights:

* a bootstrap sample is the vector of how often each segment was drawn, so all samples are a
  (samples × segments) count matrix and the summed statistics of every sample are one matrix
  product ``counts @ stats``;
* an approximate-randomisation trial is a 0/1 mask saying which segments swap systems, so the
  summed statistics of both pseudo-systems are ``mask @ a + (1 - mask) @ b`` and vice versa.

The score function then runs once, vectorised, on the (samples × systems × statistics) array.
Work is done in chunks of samples so that peak memory stays bounded whatever the number of
segments, systems and samples.

Random draws follow sacreBLEU 2.6 (``sacrebleu.significance``) exactly: with the same integer
seed, :func:`paired_bootstrap` draws the same resample indices and
:func:`paired_approximate_randomization` the same swap masks, so the p-values agree with
sacreBLEU's ``PairedTest`` for the same statistics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

ScoreFn = Callable[[np.ndarray], np.ndarray]
"""Maps summed statistics of shape ``(..., n_stats)`` to scores of shape ``(...)``."""

FloatArray = NDArray[np.float64]

# Relative tolerance of every "greater than" / "equal" between resampled and observed scores.
# Observed and resampled sums are added in different orders (``stats.sum`` versus matrix
# products and ``totals - kept``), so with fractional statistics (human-score means, BERTR, TER
# with several references) two differences that are equal in exact arithmetic differ by rounding
# noise, of the order of 1e-15 of the scores' magnitude. Without a tolerance that noise, not the
# data, decides ties — and in approximate randomisation every trial can be a tie (two systems
# that differ in one segment). 1e-9 of the magnitude is a million times that noise and far below
# any difference a score can show (BLEU on 10,000 segments moves by ~1e-5 per n-gram).
RELATIVE_TOLERANCE = 1e-9

# Bytes allowed for one chunk's (samples × segments) weight matrix. The count/mask matrix and the
# index matrix it is built from dominate memory; 64 MB keeps the peak far below 1 GB even for
# 10,000 segments × 20 systems.
_CHUNK_BYTES = 64 * 1024 * 1024


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Return a numpy Generator: ``rng`` itself, one seeded with the int, or a fresh one."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, bool | float) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be a numpy Generator, an int seed or None, not {rng!r}")
    return np.random.default_rng(int(rng))


def resolve_rng(rng: np.random.Generator | int | None) -> tuple[np.random.Generator, int | None]:
    """Return a Generator and the seed to report beside the result.

    An int is its own seed. ``None`` draws a fresh seed from the operating system's entropy and
    reports it, so that even an unseeded run can be repeated. A Generator passed in has no
    recoverable seed; the caller who made it knows it, and ``None`` is reported.
    """
    if rng is None:
        seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
        return np.random.default_rng(seed), seed
    if isinstance(rng, np.random.Generator):
        return rng, None
    generator = as_generator(rng)
    return generator, int(rng)


def mean_statistics(values: ArrayLike) -> np.ndarray:
    """Sufficient statistics of a mean: ``(n,)`` values become ``(n, 2)`` rows ``[x, 1]``.

    With :func:`mean_score` as the score function, every resampling function in this module
    works on means (of human scores, of sentence-level metric scores, ...) exactly as on BLEU.
    Values may also be ``(n_systems, n)``; the result is then ``(n_systems, n, 2)``.
    """
    x = np.asarray(values, dtype=np.float64)
    return np.stack([x, np.ones_like(x)], axis=-1)


def mean_score(summed: np.ndarray) -> np.ndarray:
    """Score function of :func:`mean_statistics`: ``summed[..., 0] / summed[..., 1]``."""
    summed = np.asarray(summed, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: np.ndarray = summed[..., 0] / summed[..., 1]
    return result


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap confidence interval (Koehn §8.3.3, Neubig Algorithm 4).

    Array fields are 0-d for one system and ``(n_systems,)`` for several.
    """

    score: np.ndarray
    """The score on the full data (no resampling)."""
    mean: np.ndarray
    """Mean of the bootstrap scores."""
    std: np.ndarray
    """Standard deviation of the bootstrap scores (n − 1 in the denominator, as MultEval)."""
    low: np.ndarray
    """Lower bound: the ⌊n·α/2⌋-th smallest bootstrap score (0-based), α = 1 − confidence."""
    high: np.ndarray
    """Upper bound: the same order statistic counted from the top."""
    n_samples: int
    confidence: float
    seed: int | None
    """The seed that reproduces this result (None if a Generator was passed in)."""

    @property
    def half_width(self) -> np.ndarray:
        """Half the interval's width: sacreBLEU's ``±`` figure."""
        return np.asarray(0.5 * (self.high - self.low))


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired bootstrap comparison of system a with system b (Neubig Algorithm 5).

    ``wins``, ``losses`` and ``ties`` are the shares of resamples in which a scores higher than,
    lower than or the same as b (for a metric where lower is better, read wins as "b better").
    ``p_value`` is sacreBLEU's two-sided p-value: the share of resamples whose centred absolute
    difference exceeds the observed absolute difference, with MultEval's +1 correction.
    """

    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    p_value: np.ndarray
    observed_delta: np.ndarray
    """score(b) − score(a) on the full data."""
    n_samples: int
    seed: int | None
    score_a: np.ndarray
    score_b: np.ndarray
    mean_a: np.ndarray
    """Mean bootstrap score of a."""
    mean_b: np.ndarray
    """Mean bootstrap score of b."""
    ci_b: np.ndarray
    """sacreBLEU's ``±`` half-width of b's 95% interval from the same resamples."""
    ci_a: np.ndarray
    """The same for a (sacreBLEU reports the baseline's interval too)."""


@dataclass(frozen=True)
class ApproximateRandomization:
    """Paired approximate randomisation test (two-sided), p = (c + 1) / (R + 1).

    c counts the trials whose absolute score difference is *strictly* greater than the observed
    one (by more than :func:`comparison_tolerance`, so that rounding cannot break a tie), so two
    identical systems get p = 1 / (R + 1), as in MultEval.
    """

    p_value: np.ndarray
    observed_delta: np.ndarray
    """score(b) − score(a) on the full data."""
    n_trials: int
    seed: int | None
    exceed_count: np.ndarray
    """c: trials whose |difference| was strictly greater than the observed |difference|."""


# --------------------------------------------------------------------------------------------
# Comparisons robust to rounding


def comparison_tolerance(*magnitudes: ArrayLike) -> FloatArray:
    """Absolute tolerance for comparing scores of the given magnitudes (elementwise).

    ``RELATIVE_TOLERANCE · max(1, |m₁|, |m₂|, ...)``: two scores, or two differences of scores,
    closer than this are equal. Pass the observed scores and difference being compared.
    """
    scale: FloatArray = np.ones(())
    for magnitude in magnitudes:
        scale = np.maximum(scale, np.abs(np.asarray(magnitude, dtype=np.float64)))
    return RELATIVE_TOLERANCE * scale


# --------------------------------------------------------------------------------------------
# Shapes and chunking


def _as_stats(stats: ArrayLike, name: str = "stats") -> tuple[FloatArray, bool]:
    """Return ``(n_systems, n_segments, n_stats)`` float64 and whether the input had one system."""
    array = np.asarray(stats, dtype=np.float64)
    if array.ndim == 2:
        return array[np.newaxis], True
    if array.ndim == 3:
        return array, False
    raise ValueError(
        f"{name} must be (n_segments, n_stats) or (n_systems, n_segments, n_stats), "
        f"got shape {array.shape}"
    )


def _flatten_systems(stats: FloatArray) -> FloatArray:
    """(systems, segments, k) → (segments, systems·k), so one product serves every system."""
    n_systems, n_segments, n_stats = stats.shape
    return np.ascontiguousarray(stats.transpose(1, 0, 2).reshape(n_segments, n_systems * n_stats))


def chunk_rows(n_segments: int, *, multiple: int = 32, budget_bytes: int | None = None) -> int:
    """Rows of a (samples × segments) float64 matrix that fit the memory budget (64 MB).

    Rounded down to a multiple of 32 so that boolean masks drawn chunk by chunk are the same
    bits as one large draw (numpy's bounded-bool sampler consumes a 32-bit word per 32 values).
    """
    budget = _CHUNK_BYTES if budget_bytes is None else budget_bytes
    rows = budget // max(1, 8 * n_segments)
    return max(multiple, (rows // multiple) * multiple)


def _sizes(total: int, chunk: int) -> Iterator[int]:
    done = 0
    while done < total:
        size = min(chunk, total - done)
        yield size
        done += size


def bootstrap_counts(
    generator: np.random.Generator,
    n_samples: int,
    n_segments: int,
    *,
    chunk: int | None = None,
    dtype: type[np.floating[Any]] = np.float64,
) -> Iterator[np.ndarray]:
    """Yield (chunk × segments) matrices of bootstrap draw counts, ``n_samples`` rows in all.

    The indices are ``generator.choice(n_segments, size=(rows, n_segments))`` — the call that
    sacreBLEU makes — and drawing in chunks gives the same numbers as one draw.
    """
    step = chunk or chunk_rows(n_segments)
    for rows in _sizes(n_samples, step):
        idx = generator.choice(n_segments, size=(rows, n_segments), replace=True)
        idx += (np.arange(rows, dtype=idx.dtype) * n_segments)[:, np.newaxis]
        counts = np.bincount(idx.ravel(), minlength=rows * n_segments)
        yield counts.reshape(rows, n_segments).astype(dtype)


def weight_dtype(flat: np.ndarray, n_segments: int) -> type[np.floating[Any]]:
    """float32 when every weighted sum is computed exactly in it, else float64.

    A resample's sum is Σ wᵢ·xᵢ with 0 ≤ wᵢ and Σ wᵢ ≤ n (bootstrap counts, AR masks), so with
    integer-valued statistics every partial sum is an integer of magnitude ≤ n · max|x|. Below
    2²⁴ float32 represents all of them exactly, whatever order BLAS adds in, and its products
    run about twice as fast. BLEU's and chrF's statistics qualify; fractional ones (TER's average
    reference length over several references, human scores) stay in float64.
    """
    if flat.size == 0:
        return np.float64
    bound = float(np.abs(flat).max()) * max(1, n_segments)
    if bound < 2.0**24 and bool(np.all(flat == np.round(flat))):
        return np.float32
    return np.float64


def swap_masks(
    generator: np.random.Generator, n_trials: int, n_segments: int, *, chunk: int | None = None
) -> Iterator[NDArray[np.bool_]]:
    """Yield (chunk × segments) boolean masks of approximate randomisation, as sacreBLEU draws
    them (``integers(2, dtype=bool)``); True keeps a segment with its own system."""
    step = chunk or chunk_rows(n_segments)
    if step % 32:
        raise ValueError("chunk must be a multiple of 32 to keep the random stream reproducible")
    for rows in _sizes(n_trials, step):
        yield generator.integers(2, size=(rows, n_segments), dtype=bool)


def resampled_scores(
    stats: ArrayLike,
    score_fn: ScoreFn,
    weights: Iterator[np.ndarray],
) -> FloatArray:
    """Scores of every weighted resample: ``score_fn(weights @ stats)`` chunk by chunk.

    ``stats`` is ``(n_systems, n_segments, n_stats)``; the result is ``(n_rows, n_systems)``.
    The product runs in the weights' dtype (see :func:`weight_dtype`); sums reach the score
    function as float64.
    """
    array, _ = _as_stats(stats)
    n_systems, _, n_stats = array.shape
    flat = _flatten_systems(array)
    flat_by_dtype: dict[np.dtype[Any], np.ndarray] = {}
    parts = []
    for w in weights:
        if w.dtype not in flat_by_dtype:
            flat_by_dtype[w.dtype] = flat.astype(w.dtype)
        matrix = flat_by_dtype[w.dtype]
        summed = (w @ matrix).astype(np.float64).reshape(w.shape[0], n_systems, n_stats)
        parts.append(np.asarray(score_fn(summed), dtype=np.float64))
    if not parts:
        return np.empty((0, n_systems))
    return np.concatenate(parts, axis=0)


def _bootstrap_samples(
    array: FloatArray, score_fn: ScoreFn, n_samples: int, generator: np.random.Generator
) -> FloatArray:
    """(n_samples, n_systems) bootstrap scores with shared resamples, in the fastest exact dtype."""
    dtype = weight_dtype(array, array.shape[1])
    counts = bootstrap_counts(generator, n_samples, array.shape[1], dtype=dtype)
    return resampled_scores(array, score_fn, counts)


def bootstrap_scores(
    stats: ArrayLike,
    score_fn: ScoreFn,
    *,
    n_samples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> FloatArray:
    """Scores of ``n_samples`` bootstrap resamples: ``(n_samples,)`` or ``(n_samples, n_systems)``.

    The same resampled segments are used for every system, so rows are comparable across systems
    (what a paired comparison, rank ranges or clusters need).
    """
    array, single = _as_stats(stats)
    generator = as_generator(rng)
    scores = _bootstrap_samples(array, score_fn, n_samples, generator)
    return scores[:, 0] if single else scores


def percentile_interval(
    samples: ArrayLike, confidence: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval as order statistics: drop ⌊n·α/2⌋ samples from each end.

    For n = 1000 and 95% this keeps the 26th smallest and the 26th largest score, as Koehn and
    Neubig describe and as sacreBLEU's ``estimate_ci`` computes. Samples that are NaN (a
    statistic undefined on that resample, e.g. the mean of a system none of whose segments was
    drawn) are left out: n counts the defined samples of each column, and a column without any
    gives NaN.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    values = np.moveaxis(np.asarray(samples, dtype=np.float64), axis, 0)
    if values.shape[0] == 0:
        raise ValueError("no samples")
    ordered = np.sort(values, axis=0)  # NaN sorts last
    n = np.sum(~np.isnan(ordered), axis=0)
    # The small epsilon absorbs binary rounding (1000 · 0.025 = 25.000000000000004).
    drop = np.floor(n * (1.0 - confidence) / 2.0 + 1e-9).astype(np.int64)
    low_index = np.minimum(drop, np.maximum(n - 1, 0))
    high_index = np.maximum(n - 1 - drop, 0)
    low = np.take_along_axis(ordered, low_index[np.newaxis, ...], axis=0)[0]
    high = np.take_along_axis(ordered, high_index[np.newaxis, ...], axis=0)[0]
    empty = n == 0
    if np.any(empty):
        low = np.where(empty, np.nan, low)
        high = np.where(empty, np.nan, high)
    return low, high


def bootstrap_ci(
    stats: ArrayLike,
    score_fn: ScoreFn,
    *,
    n_samples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> BootstrapCI:
    """Percentile bootstrap confidence interval of a corpus score (Neubig Algorithm 4).

    ``stats`` is ``(n_segments, n_stats)`` for one system or ``(n_systems, n_segments, n_stats)``
    for several, which then share the same resamples. ``score_fn`` maps summed statistics
    ``(..., n_stats)`` to scores ``(...)``.
    """
    if n_samples < 2:
        raise ValueError("n_samples must be at least 2")
    array, single = _as_stats(stats)
    generator, seed = resolve_rng(rng)
    score = np.asarray(score_fn(array.sum(axis=1)), dtype=np.float64)
    samples = _bootstrap_samples(array, score_fn, n_samples, generator)
    low, high = percentile_interval(samples, confidence, axis=0)
    mean = samples.mean(axis=0)
    std = samples.std(axis=0, ddof=1)
    if single:
        score, mean, std, low, high = (np.asarray(v[0]) for v in (score, mean, std, low, high))
    return BootstrapCI(
        score=score,
        mean=mean,
        std=std,
        low=low,
        high=high,
        n_samples=n_samples,
        confidence=confidence,
        seed=seed,
    )


def _paired_arrays(
    stats_a: ArrayLike, stats_b: ArrayLike
) -> tuple[FloatArray, FloatArray, bool, int]:
    """Validate a pair; broadcast a single system against several. Returns a, b, single, m."""
    a, single_a = _as_stats(stats_a, "stats_a")
    b, single_b = _as_stats(stats_b, "stats_b")
    if a.shape[1:] != b.shape[1:]:
        raise ValueError(
            f"stats_a and stats_b must have the same segments and statistics, "
            f"got {a.shape[1:]} and {b.shape[1:]}"
        )
    m = max(a.shape[0], b.shape[0])
    if a.shape[0] not in (1, m) or b.shape[0] not in (1, m):
        raise ValueError(f"cannot pair {a.shape[0]} systems with {b.shape[0]} systems")
    return a, b, single_a and single_b, m


def paired_bootstrap(
    stats_a: ArrayLike,
    stats_b: ArrayLike,
    score_fn: ScoreFn,
    *,
    n_samples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> PairedBootstrap:
    """Paired bootstrap resampling test of system b against system a.

    Both systems are scored on the same resampled segments. Returns the win/loss/tie shares of a
    over b (Neubig Algorithm 5) and sacreBLEU's p-value: with d_i = |score_b − score_a| on
    resample i and d the observed difference, p = (#{d_i − mean(d_·) > d} + 1) / (n + 1).
    Scores closer than :func:`comparison_tolerance` count as equal (a tie; not "greater").

    Either argument may hold several systems ``(n_systems, n_segments, n_stats)``; a single
    system is compared with each of them (all comparisons share the same resamples, as in
    sacreBLEU, where every system is tested with the same seed).
    """
    if n_samples < 1:
        raise ValueError("n_samples must be positive")
    a, b, single, m = _paired_arrays(stats_a, stats_b)
    generator, seed = resolve_rng(rng)
    n_a = a.shape[0]
    both = np.concatenate([a, b], axis=0)
    samples = _bootstrap_samples(both, score_fn, n_samples, generator)
    sa = np.broadcast_to(samples[:, :n_a], (n_samples, m))
    sb = np.broadcast_to(samples[:, n_a:], (n_samples, m))
    full = np.asarray(score_fn(both.sum(axis=1)), dtype=np.float64)
    score_a = np.broadcast_to(full[:n_a], (m,))
    score_b = np.broadcast_to(full[n_a:], (m,))
    return paired_bootstrap_result(sa, sb, score_a, score_b, seed=seed, single=single)


def paired_bootstrap_result(
    sa: np.ndarray,
    sb: np.ndarray,
    score_a: np.ndarray,
    score_b: np.ndarray,
    *,
    seed: int | None,
    single: bool = False,
) -> PairedBootstrap:
    """A :class:`PairedBootstrap` from the resampled scores ``sa`` and ``sb`` (samples × pairs)
    and the full-data scores of a and b (one per pair): the arithmetic of
    :func:`paired_bootstrap`, shared with :func:`evalcore.stats.allpairs.all_pairs_tests`."""
    n_samples = sa.shape[0]
    observed = score_b - score_a
    # Comparisons with a tolerance (see RELATIVE_TOLERANCE): resamples in which a and b have
    # the same summed statistics must tie even when BLAS rounds the two columns differently.
    tol = comparison_tolerance(score_a, score_b, observed)
    wins = (sa - sb > tol).mean(axis=0)
    losses = (sb - sa > tol).mean(axis=0)
    ties = 1.0 - wins - losses
    sample_diffs = np.abs(sb - sa)
    centred = sample_diffs - sample_diffs.mean(axis=0)
    exceed = (centred > np.abs(observed) + tol).sum(axis=0)
    p_value = (exceed + 1.0) / (n_samples + 1.0)
    low, high = percentile_interval(sb, 0.95, axis=0)
    low_a, high_a = percentile_interval(sa, 0.95, axis=0)

    def out(x: np.ndarray) -> np.ndarray:
        return np.asarray(x[0]) if single else np.asarray(x)

    return PairedBootstrap(
        wins=out(wins),
        losses=out(losses),
        ties=out(ties),
        p_value=out(p_value),
        observed_delta=out(observed),
        n_samples=n_samples,
        seed=seed,
        score_a=out(score_a),
        score_b=out(score_b),
        mean_a=out(sa.mean(axis=0)),
        mean_b=out(sb.mean(axis=0)),
        ci_b=out(0.5 * (high - low)),
        ci_a=out(0.5 * (high_a - low_a)),
    )


def paired_approximate_randomization(
    stats_a: ArrayLike,
    stats_b: ArrayLike,
    score_fn: ScoreFn,
    *,
    n_trials: int = 10000,
    rng: np.random.Generator | int | None = None,
) -> ApproximateRandomization:
    """Paired two-sided approximate randomisation test (MultEval, sacreBLEU).

    Each trial swaps the two systems' statistics on a random half of the segments and scores both
    pseudo-systems; c counts the trials whose |difference| is strictly greater than the observed
    one; p = (c + 1) / (n_trials + 1). "Strictly greater" means by more than
    :func:`comparison_tolerance` of the scores, so a trial whose difference equals the observed
    one in exact arithmetic is never counted because of rounding. Several systems may be passed
    in either argument, as for :func:`paired_bootstrap`; all comparisons share the same masks.
    """
    if n_trials < 1:
        raise ValueError("n_trials must be positive")
    a, b, single, m = _paired_arrays(stats_a, stats_b)
    generator, seed = resolve_rng(rng)
    n_a = a.shape[0]
    both = np.concatenate([a, b], axis=0)
    full = np.asarray(score_fn(both.sum(axis=1)), dtype=np.float64)
    observed = np.broadcast_to(full[n_a:], (m,)) - np.broadcast_to(full[:n_a], (m,))
    threshold = np.abs(observed)
    exceed = _ar_exceed_counts(a, b, score_fn, threshold, n_trials, generator)
    p_value = (exceed + 1.0) / (n_trials + 1.0)

    def out(x: np.ndarray) -> np.ndarray:
        return np.asarray(x[0]) if single else np.asarray(x)

    return ApproximateRandomization(
        p_value=out(p_value),
        observed_delta=out(observed),
        n_trials=n_trials,
        seed=seed,
        exceed_count=out(exceed),
    )


def _ar_exceed_counts(
    a: FloatArray,
    b: FloatArray,
    score_fn: ScoreFn,
    threshold: FloatArray,
    n_trials: int,
    generator: np.random.Generator,
) -> NDArray[np.int64]:
    """Count AR trials whose |score difference| exceeds ``threshold`` (per compared pair).

    ``threshold`` is the observed |difference|. A trial counts only if it exceeds it by more than
    :func:`comparison_tolerance` of the observed scores: the trials' sums are computed by matrix
    products and subtraction, the observed ones by ``sum``, so for fractional statistics (means
    of human scores, BERTR, TER over several references) an exact tie comes out a few ulps
    either side, and a strict ``>`` would count about half of the ties.

    ``a`` and ``b`` are (systems, segments, k) with 1 or m systems each. With mask M (True keeps a
    segment in place), pseudo-a = M·a + (1−M)·b and pseudo-b = (1−M)·a + M·b, as sacreBLEU
    builds them. One product ``M @ [a | b]`` gives M·a and M·b; (1−M)·x = Σx − M·x needs no
    second product (exact for integer-valued statistics such as BLEU's and chrF's; within
    rounding, which the tolerance absorbs, for fractional ones).
    """
    n_a, n_b = a.shape[0], b.shape[0]
    m = max(n_a, n_b)
    n_stats = a.shape[2]
    both = np.concatenate([a, b], axis=0)
    flat = _flatten_systems(both)
    totals = both.sum(axis=1)
    full = np.asarray(score_fn(totals), dtype=np.float64)
    limit = threshold + comparison_tolerance(
        threshold, np.broadcast_to(full[:n_a], (m,)), np.broadcast_to(full[n_a:], (m,))
    )
    dtype = weight_dtype(flat, a.shape[1])
    flat_typed = flat.astype(dtype)
    exceed = np.zeros(m, dtype=np.int64)
    for mask in swap_masks(generator, n_trials, a.shape[1]):
        kept = (mask.astype(dtype) @ flat_typed).astype(np.float64)
        kept = kept.reshape(mask.shape[0], n_a + n_b, n_stats)
        moved = totals[np.newaxis] - kept
        ka, kb = kept[:, :n_a], kept[:, n_a:]
        ma, mb = moved[:, :n_a], moved[:, n_a:]
        pseudo_a = ka + mb  # (rows, m, k) by broadcasting when one side has a single system
        pseudo_b = ma + kb
        diff = np.abs(
            np.asarray(score_fn(pseudo_a), dtype=np.float64)
            - np.asarray(score_fn(pseudo_b), dtype=np.float64)
        )
        exceed += (diff > limit).sum(axis=0)
    return exceed
