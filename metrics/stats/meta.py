"""System-level meta-evaluation on corpus statistics: a metric's correlation with the humans,
with a bootstrap interval in which every resample recomputes both sides from its segments.

The metric side is a corpus score (BLEU from summed n-gram statistics, not a mean of sentence
BLEUs), averaged over a system's optimizer runs; the human side is a ratio of summed per-segment
statistics (a mean of segment scores: ``[score, 1]``; a share of pairwise wins: ``[wins,
decided]``). Both are resampled with the same segment draws, so the interval reflects the test
set's sampling variance of the correlation itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.stats.correlation import average_ranks, kendall_tau, pearson_rows
from metrics.stats.resampling import ScoreFn, bootstrap_counts, percentile_interval, resolve_rng

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
    return np.array([kendall_tau(a, b) for a, b in zip(x, y, strict=True)], dtype=np.float64)


def system_correlation_bootstrap(
    human: ArrayLike,
    metric: ArrayLike,
    score_fn: ScoreFn,
    *,
    methods: tuple[Method, ...] = ("pearson", "spearman", "kendall"),
    human_point: ArrayLike | None = None,
    n_samples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> dict[str, SystemCorrelation]:
    """Correlations between human and metric system scores, each with a bootstrap CI.

    Args:
        human: ``(n_systems, n_segments, 2)`` per-segment ``[sum, weight]``; a system's human
            score is Σ sum / Σ weight over the (resampled) segments.
        metric: ``(n_systems, n_runs, n_segments, n_stats)`` sufficient statistics; a system's
            metric score is the mean over runs of ``score_fn`` of the summed statistics.
        score_fn: the metric's corpus score of summed statistics.
        methods: which correlations to compute (Kendall is τ-b).
        human_point: the human scores of the point estimate, if they come from elsewhere (e.g.
            Expected Wins, which is not a ratio of sums); by default the ratio on all segments.
        n_samples, confidence, rng: the bootstrap; all methods share the same draws.

    Returns: per method, the correlation on the full data and the percentile interval.
    """
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(metric, dtype=np.float64)
    if h.ndim != 3 or h.shape[2] != 2:
        raise ValueError("human must be (systems, segments, 2)")
    if m.ndim != 4 or m.shape[0] != h.shape[0] or m.shape[2] != h.shape[1]:
        raise ValueError("metric must be (systems, runs, segments, stats) matching human")
    n_systems, n_runs, n_segments, n_stats = m.shape
    generator, seed = resolve_rng(rng)

    def metric_scores(weights: FloatArray) -> FloatArray:
        # (samples × segments) @ (segments × systems·runs·stats) → (samples, systems, runs, stats)
        flat = m.transpose(2, 0, 1, 3).reshape(n_segments, -1)
        summed = (weights @ flat).reshape(weights.shape[0], n_systems, n_runs, n_stats)
        scores = np.asarray(score_fn(summed), dtype=np.float64)
        out: FloatArray = scores.mean(axis=-1)
        return out

    def human_scores(weights: FloatArray) -> FloatArray:
        summed = np.stack([weights @ h[..., 0].T, weights @ h[..., 1].T], axis=-1)
        return _ratio(summed)

    ones = np.ones((1, n_segments))
    point_metric = metric_scores(ones)[0]
    point_human = (
        np.asarray(human_point, dtype=np.float64)
        if human_point is not None
        else human_scores(ones)[0]
    )
    samples: dict[str, list[FloatArray]] = {method: [] for method in methods}
    for counts in bootstrap_counts(generator, n_samples, n_segments):
        hs = human_scores(counts)
        ms = metric_scores(counts)
        for method in methods:
            samples[method].append(_rowwise(method, hs, ms))
    out: dict[str, SystemCorrelation] = {}
    for method in methods:
        values = np.concatenate(samples[method])
        values = values[np.isfinite(values)]
        value = float(_rowwise(method, point_human[np.newaxis], point_metric[np.newaxis])[0])
        if values.size:
            low, high = percentile_interval(values, confidence)
            low_f, high_f = float(low), float(high)
        else:
            low_f = high_f = math.nan
        out[method] = SystemCorrelation(
            method=method,
            value=value,
            low=low_f,
            high=high_f,
            n_systems=n_systems,
            n_samples=n_samples,
            confidence=confidence,
            seed=seed,
        )
    return out


def least_squares_line(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Slope and intercept of the least-squares line y = a·x + b (for scatter plots)."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.size < 2 or float(np.ptp(a)) == 0.0:
        return math.nan, math.nan
    slope, intercept = np.polyfit(a, b, 1)
    return float(slope), float(intercept)
