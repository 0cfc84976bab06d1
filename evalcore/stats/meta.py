"""System-level meta-evaluation on corpus statistics: a metric's correlation with the humans,
with a bootstrap interval in which every resample recomputes both sides from its segments.

The metric side is a corpus score (BLEU from summed n-gram statistics, not a mean of sentence
BLEUs), averaged over a system's optimizer runs; the human side is a function of summed
per-segment statistics too: a mean of segment scores (``[score, 1]`` per system and segment), or
Expected Wins of the per-segment pairwise win counts. Both are resampled with the same segment
draws and the point value is the same function of all segments, so the interval reflects the
test set's sampling variance of the very correlation reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalcore.stats.correlation import average_ranks, kendall_tau_rows, pearson_rows
from evalcore.stats.resampling import ScoreFn, bootstrap_counts, percentile_interval, resolve_rng

FloatArray = NDArray[np.float64]
Method = Literal["pearson", "spearman", "kendall"]


@dataclass(frozen=True)
class SystemCorrelation:
    """A system-level correlation with its percentile bootstrap interval."""

    method: str
    value: float
    low: float
    high: float
    n_systems: int
    n_samples: int
    confidence: float
    seed: int | None


def _ratio(summed: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = summed[..., 0] / summed[..., 1]
    return out


def _rowwise(method: Method, x: FloatArray, y: FloatArray) -> FloatArray:
    if method == "pearson":
        return pearson_rows(x, y)
    if method == "spearman":
        return pearson_rows(average_ranks(x, axis=-1), average_ranks(y, axis=-1))
    return kendall_tau_rows(x, y)


def system_correlation_bootstrap(
    human: ArrayLike,
    metric: ArrayLike,
    score_fn: ScoreFn,
    *,
    human_score_fn: ScoreFn | None = None,
    methods: tuple[Method, ...] = ("pearson", "spearman", "kendall"),
    n_samples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> dict[str, SystemCorrelation]:
    """Correlations between human and metric system scores, each with a bootstrap CI.

    The point value and every resample are the same statistic, computed by the same functions:
    the resampled segments' statistics are summed and scored on both sides.

    Args:
        human: by default ``(n_systems, n_segments, 2)`` per-segment ``[sum, weight]``, and a
            system's human score is Σ sum / Σ weight over the (resampled) segments. With
            ``human_score_fn``: ``(n_segments, k)`` per-segment statistics of all systems.
        metric: ``(n_systems, n_runs, n_segments, n_stats)`` sufficient statistics; a system's
            metric score is the mean over runs of ``score_fn`` of the summed statistics.
        score_fn: the metric's corpus score of summed statistics.
        human_score_fn: maps summed human statistics ``(..., k)`` to system scores
            ``(..., n_systems)``, for human scores that are not a ratio of sums per system
            (Expected Wins from per-segment pairwise win counts).
        methods: which correlations to compute (Kendall is τ-b).
        n_samples, confidence, rng: the bootstrap; all methods share the same draws.

    Returns: per method, the correlation on the full data and the percentile interval.
    """
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(metric, dtype=np.float64)
    if m.ndim != 4:
        raise ValueError("metric must be (systems, runs, segments, stats)")
    n_systems, n_runs, n_segments, n_stats = m.shape
    h_flat, human_of_sums = _human_side(h, human_score_fn, n_systems, n_segments)
    generator, seed = resolve_rng(rng)
    m_flat = np.ascontiguousarray(m.transpose(2, 0, 1, 3).reshape(n_segments, -1))

    def metric_scores(summed: FloatArray) -> FloatArray:
        stats = summed.reshape(summed.shape[0], n_systems, n_runs, n_stats)
        out: FloatArray = np.asarray(score_fn(stats), dtype=np.float64).mean(axis=-1)
        return out

    def scores(weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(samples × segments) weights → human and metric scores, (samples, systems) each."""
        return human_of_sums(weights @ h_flat), metric_scores(weights @ m_flat)

    point_human, point_metric = scores(np.ones((1, n_segments)))
    if point_human.shape != (1, n_systems):
        raise ValueError(
            f"human scores have shape {point_human.shape[1:]}, expected ({n_systems},)"
        )
    samples: dict[str, list[FloatArray]] = {method: [] for method in methods}
    for counts in bootstrap_counts(generator, n_samples, n_segments):
        hs, ms = scores(counts)
        for method in methods:
            samples[method].append(_rowwise(method, hs, ms))
    return {
        method: _system_correlation(
            method,
            samples[method],
            point_human,
            point_metric,
            n_systems=n_systems,
            n_samples=n_samples,
            confidence=confidence,
            seed=seed,
        )
        for method in methods
    }


def _system_correlation(
    method: Method,
    samples: list[FloatArray],
    point_human: FloatArray,
    point_metric: FloatArray,
    *,
    n_systems: int,
    n_samples: int,
    confidence: float,
    seed: int | None,
) -> SystemCorrelation:
    """One method's correlation on all segments, with the percentile interval of its finite
    resampled values (NaN bounds when there are none)."""
    values = np.concatenate(samples)
    values = values[np.isfinite(values)]
    value = float(_rowwise(method, point_human, point_metric)[0])
    if values.size:
        low, high = percentile_interval(values, confidence)
        low_f, high_f = float(low), float(high)
    else:
        low_f = high_f = math.nan
    return SystemCorrelation(
        method=method,
        value=value,
        low=low_f,
        high=high_f,
        n_systems=n_systems,
        n_samples=n_samples,
        confidence=confidence,
        seed=seed,
    )


def _human_side(
    h: FloatArray, human_score_fn: ScoreFn | None, n_systems: int, n_segments: int
) -> tuple[FloatArray, Callable[[FloatArray], FloatArray]]:
    """The human statistics as a (segments, k) matrix and the function from their (resampled)
    sums to system scores: a ratio of sums per system, or ``human_score_fn``."""
    if human_score_fn is None:
        if h.ndim != 3 or h.shape[2] != 2 or h.shape[:2] != (n_systems, n_segments):
            raise ValueError("human must be (systems, segments, 2) matching metric")
        h_flat = np.ascontiguousarray(h.transpose(1, 0, 2).reshape(n_segments, n_systems * 2))

        def human_of_sums(summed: FloatArray) -> FloatArray:
            return _ratio(summed.reshape(*summed.shape[:-1], n_systems, 2))

    else:
        if h.ndim != 2 or h.shape[0] != n_segments:
            raise ValueError("with human_score_fn, human must be (segments, k) matching metric")
        h_flat = h
        custom = human_score_fn

        def human_of_sums(summed: FloatArray) -> FloatArray:
            return np.asarray(custom(summed), dtype=np.float64)

    return h_flat, human_of_sums


def least_squares_line(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Slope and intercept of the least-squares line y = a·x + b (for scatter plots).

    In closed form on centred values (numpy's pairwise sums): the same line as ``np.polyfit``,
    but the same bits in every process. ``polyfit`` solves through LAPACK, whose threaded BLAS
    may sum in another order in a Celery worker than in the web process, so a stored document
    and the same one computed again differed in the last digits."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.size < 2 or float(np.ptp(a)) == 0.0:
        return math.nan, math.nan
    dx = a - a.mean()
    slope = float(np.sum(dx * (b - b.mean())) / np.sum(dx * dx))
    return slope, float(b.mean() - slope * a.mean())
