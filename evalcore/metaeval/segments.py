"""Segment-level meta-evaluation from mt-metrics-eval's segment score files: one correlation of
a metric's segment scores with the humans', ungrouped or averaged over groups.

The scores form a (systems × segments) matrix. ``none`` correlates all cells at once; ``item``
correlates the systems' scores of each segment and averages over segments (WMT23's grouping);
``sys`` correlates each system's scores over its segments and averages over systems. Groups with
fewer than two scored cells, and correlations that are undefined (a constant group), are left
out of the average, as mt-metrics-eval does. A missing human score (None, NaN) leaves its cell
out; a missing metric score where the humans scored is refused.

Between every two metrics the ungrouped Pearson correlations are compared as at system level
(:func:`evalcore.metaeval.systems.metric_tests_and_clusters`), over the scored cells: the paired
permutation test (Deutsch et al. 2021's PERM-BOTH, mt-metrics-eval's ``PermutationSigDiff``:
each trial swaps the two metrics' scores at a random half of the cells) and the Williams test
with n = scored cells. The Williams test takes the cells as independent, which cells of one
segment are not, so its p-values are optimistic; the permutation test (the default behind the
clusters here, as in the WMT metrics tasks since 2021) assumes only that the two metrics are
exchangeable under the null hypothesis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from evalcore.metaeval.systems import (
    DEFAULT_ALPHA,
    ClusterTest,
    MetricTest,
    metric_tests_and_clusters,
)
from evalcore.stats.correlation import grouped_correlation
from evalcore.stats.resampling import resolve_rng
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


GROUPINGS: tuple[AverageBy, ...] = ("none", "item", "sys")


@dataclass(frozen=True)
class SegmentRow:
    """One metric's segment-level agreement with the humans under one grouping. ``acc_eq``
    (tie-calibrated pairwise accuracy) is computed grouped by item only, as WMT23–24 report it:
    ungrouped, its pairs grow with the square of all scored cells. ``cluster`` (1 = best) is
    set on the ungrouped row, None there too when fewer than two metrics or four cells."""

    metric: str
    average_by: AverageBy
    pearson: float
    spearman: float
    kendall: float
    acc_eq: float | None
    cluster: int | None = None


@dataclass(frozen=True)
class SegmentMetaEvaluation:
    """Rows per metric (best ungrouped Pearson first) × grouping (none, item, sys), and which
    systems and segments they cover: ``n_cells`` counts the (system, segment) cells the humans
    scored. ``tests`` compare every two metrics' ungrouped Pearson (best first), with the
    clusters' test, level, permutation trials and seed beside them."""

    rows: tuple[SegmentRow, ...]
    systems: tuple[str, ...]
    excluded_human: tuple[str, ...]
    negated: tuple[str, ...]
    n_segments: int
    n_cells: int
    tests: tuple[MetricTest, ...] = ()
    cluster_test: ClusterTest = "permutation"
    alpha: float = DEFAULT_ALPHA
    n_trials: int = 0
    seed: int | None = None


def _row(
    name: str, h: NDArray[np.float64], m: NDArray[np.float64], average_by: AverageBy
) -> SegmentRow:
    def r(method: SegmentMethod) -> float:
        return segment_correlation(h, m, method=method, average_by=average_by)

    return SegmentRow(
        metric=name,
        average_by=average_by,
        pearson=r("pearson"),
        spearman=r("spearman"),
        kendall=r("kendall"),
        acc_eq=segment_correlation(h, m, method="acc_eq", average_by="item")
        if average_by == "item"
        else None,
    )


def meta_evaluate_segments(
    *,
    human: Mapping[str, Sequence[float]],
    metrics: Mapping[str, Mapping[str, Sequence[float]]],
    systems: Iterable[str] | None = None,
    human_systems: Iterable[str] = (),
    include_human: bool = False,
    lower_is_better: Iterable[str] = (),
    alpha: float = DEFAULT_ALPHA,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> SegmentMetaEvaluation:
    """The segment-level table of ``metrics`` (name → system → segment scores) against ``human``
    (system → segment scores, NaN where not scored), over ``systems`` (default: every system the
    humans scored) minus human translations unless ``include_human``. A metric without a score
    where the humans scored is refused (:func:`segment_matrices`). Every two metrics are
    tested on the scored cells (permutation test of ``n_trials`` trials with ``rng``, and
    Williams); the clusters follow the permutation test at ``alpha`` (Williams without trials)."""
    chosen = list(dict.fromkeys(systems)) if systems is not None else list(human)
    humans = set(human_systems)
    excluded = [] if include_human else [s for s in chosen if s in humans]
    kept = [s for s in chosen if s not in excluded]
    if len(kept) < 2:
        raise ValueError(f"{len(kept)} system(s) left to evaluate; segments need at least 2")
    unknown = sorted(set(lower_is_better) - set(metrics))
    if unknown:
        raise ValueError(f"lower is better names no uploaded metric: {', '.join(unknown)}")
    negated = tuple(name for name in metrics if name in set(lower_is_better))
    matrices = {}
    for name, scores in metrics.items():
        h, m = segment_matrices(human, scores, kept, metric_name=f"metric {name!r}")
        matrices[name] = (h, -m if name in negated else m)
    rows = [
        _row(name, h, m, average_by)
        for name, (h, m) in matrices.items()
        for average_by in GROUPINGS
    ]
    best = {r.metric: r.pearson for r in rows if r.average_by == "none"}
    order = sorted(best, key=lambda name: (-np.nan_to_num(best[name], nan=-2.0), name))
    h = next(iter(matrices.values()))[0] if matrices else np.zeros((len(kept), 0))
    scored = ~np.isnan(h)
    generator, seed = resolve_rng(rng)
    tests, clusters = metric_tests_and_clusters(
        h[scored],
        {name: m[scored] for name, (_, m) in matrices.items()},
        best,
        order,
        "permutation" if n_trials > 0 else "williams",
        alpha,
        n_trials,
        generator,
    )
    cluster = dict(zip(order, clusters, strict=False))
    rows = [
        replace(r, cluster=cluster.get(r.metric)) if r.average_by == "none" else r
        for r in sorted(rows, key=lambda r: (order.index(r.metric), GROUPINGS.index(r.average_by)))
    ]
    return SegmentMetaEvaluation(
        rows=tuple(rows),
        systems=tuple(kept),
        excluded_human=tuple(excluded),
        negated=negated,
        n_segments=int(h.shape[1]),
        n_cells=int(scored.sum()),
        tests=tuple(tests),
        cluster_test="permutation" if n_trials > 0 else "williams",
        alpha=alpha,
        n_trials=n_trials,
        seed=seed,
    )
