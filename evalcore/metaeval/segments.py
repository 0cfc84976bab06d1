"""Segment-level meta-evaluation from mt-metrics-eval's segment score files: one correlation of
a metric's segment scores with the humans', ungrouped or averaged over groups.

The scores form a (systems × segments) matrix. ``none`` correlates all cells at once; ``item``
correlates the systems' scores of each segment and averages over segments (WMT23's grouping);
``sys`` correlates each system's scores over its segments and averages over systems. Groups with
fewer than two scored cells, and correlations that are undefined (a constant group), are left
out of the average, as mt-metrics-eval does. A missing human score (None, NaN) leaves its cell
out; a missing metric score where the humans scored is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from evalcore.stats.correlation import grouped_correlation
from evalcore.stats.ties import tie_calibrated_accuracy

SegmentMethod = Literal["pearson", "spearman", "kendall", "acc_eq"]
AverageBy = Literal["none", "item", "sys"]


def segment_matrices(
    human: Mapping[str, Sequence[float]],
    metric: Mapping[str, Sequence[float]],
    systems: Iterable[str],
    *,
    metric_name: str = "the metric",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(systems × segments) human and metric matrices of the chosen systems, checked."""
    chosen = list(dict.fromkeys(systems))
    for system in chosen:
        if system not in human:
            raise ValueError(f"system {system!r} has no human segment scores")
        if system not in metric:
            raise ValueError(f"{metric_name} has no segment scores for system {system!r}")
    h = np.array([human[s] for s in chosen], dtype=np.float64)
    m = np.array([metric[s] for s in chosen], dtype=np.float64)
    if h.ndim != 2 or h.shape != m.shape:
        raise ValueError(
            f"{metric_name} has {m.shape[-1] if m.ndim == 2 else 'uneven'} segments per system, "
            f"the humans {h.shape[-1] if h.ndim == 2 else 'uneven'}"
        )
    gaps = ~np.isnan(h) & ~np.isfinite(m)
    if gaps.any():
        row, column = np.argwhere(gaps)[0]
        raise ValueError(
            f"{metric_name} has no score for system {chosen[row]!r}, segment {column + 1}, "
            f"which the humans scored"
        )
    return h, m


def segment_correlation(
    human: NDArray[np.float64],
    metric: NDArray[np.float64],
    *,
    method: SegmentMethod = "pearson",
    average_by: AverageBy = "none",
) -> float:
    """One segment-level statistic of (systems × segments) matrices (NaN human = left out).

    ``acc_eq`` is the tie-calibrated pairwise accuracy, its threshold chosen once for all groups
    (mt-metrics-eval's ``KendallWithTiesOpt``); ``kendall`` is τ-b.
    """
    h, m = np.asarray(human, dtype=np.float64), np.asarray(metric, dtype=np.float64)
    if method == "acc_eq":
        if average_by == "none":
            return tie_calibrated_accuracy(h.ravel(), m.ravel()).accuracy
        rows = (h.T, m.T) if average_by == "item" else (h, m)
        return tie_calibrated_accuracy(*rows).accuracy
    if average_by == "none":
        return grouped_correlation(h, m, method=method, grouping="none")
    if average_by == "item":
        return grouped_correlation(h, m, method=method, grouping="item")
    if average_by == "sys":  # the systems are the columns of the transposed matrices
        return grouped_correlation(h.T, m.T, method=method, grouping="item")
    raise ValueError(f"unknown average_by {average_by!r}; choose none, item or sys")
