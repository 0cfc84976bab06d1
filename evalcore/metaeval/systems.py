"""System-level meta-evaluation of any number of metrics against one set of human scores, as in
the WMT metrics task: per metric Pearson, Spearman, Kendall τ-b, pairwise accuracy (Kocmi et al.
2021) and tie-calibrated pairwise accuracy (Deutsch et al. 2023); between every two metrics the
Williams test and a paired permutation test; clusters of metrics that no better metric of their
cluster beats significantly (mt-metrics-eval's ``AssignRanks``).

Which systems count is explicit and reported: the chosen systems (all with a human score by
default), minus human translations (unless asked for) and, on request, WMT20's outliers of the
human scores. A metric that lacks a score for one of them is refused, not quietly narrowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from evalcore.stats.correlation import (
    correlation_permutation_test,
    kendall_tau,
    pairwise_accuracy,
    pearson,
    spearman,
    williams_test,
)
from evalcore.stats.outliers import MAD_SCALE, OUTLIER_CUTOFF, mad_outliers
from evalcore.stats.resampling import resolve_rng
from evalcore.stats.ties import tie_calibrated_accuracy

DEFAULT_ALPHA = 0.05
MIN_SYSTEMS = 3
ClusterTest = Literal["williams", "permutation"]


@dataclass(frozen=True)
class MetricRow:
    """One metric's agreement with the humans over the evaluated systems; ``cluster`` is 1 for
    the best cluster, None when there are too few systems (or metrics) to test."""

    metric: str
    pearson: float
    spearman: float
    kendall: float
    accuracy: float
    tie_accuracy: float
    tie_epsilon: float
    n_systems: int
    cluster: int | None


@dataclass(frozen=True)
class MetricTest:
    """Is ``better`` (the higher Pearson) significantly better than ``worse``? One-sided
    p-values of the Williams test and of the paired permutation test (None when not run)."""

    better: str
    worse: str
    delta: float
    williams_p: float
    permutation_p: float | None


@dataclass(frozen=True)
class SystemMetaEvaluation:
    """The table, best Pearson first, with everything needed to say how it was made.

    ``metric_only``: per metric, the systems it scores that have no human score (not evaluated).
    ``negated``: metrics whose scores were negated (lower is better). The outlier rule's
    ``outlier_cutoff`` and ``outlier_scale`` are None when outliers were kept.
    """

    rows: tuple[MetricRow, ...]
    tests: tuple[MetricTest, ...]
    systems: tuple[str, ...]
    excluded_human: tuple[str, ...]
    excluded_outliers: tuple[str, ...]
    metric_only: dict[str, tuple[str, ...]]
    negated: tuple[str, ...]
    cluster_test: ClusterTest
    alpha: float
    n_trials: int
    seed: int | None
    outlier_cutoff: float | None
    outlier_scale: float | None


def metric_clusters(p_values: NDArray[np.float64], alpha: float = DEFAULT_ALPHA) -> list[int]:
    """Clusters of metrics sorted best first, from ``p_values[i, j]`` (i < j): the one-sided
    p-value that metric i correlates better than metric j. Walking down the list, a metric
    opens a new cluster when some metric of the current cluster beats it (p ≤ alpha): no metric
    is beaten by a member of its own cluster, and each cluster's first metric is beaten by one
    of the cluster before (mt-metrics-eval's ``AssignRanks``; clusters numbered from 1)."""
    n = p_values.shape[0]
    clusters: list[int] = []
    current, start = 1, 0
    for i in range(n):
        if any(p_values[j, i] <= alpha for j in range(start, i)):
            current += 1
            start = i
        clusters.append(current)
    return clusters


def _evaluated_systems(
    human: Mapping[str, float],
    systems: Iterable[str] | None,
    human_systems: Iterable[str],
    include_human: bool,
) -> tuple[list[str], list[str]]:
    chosen = list(dict.fromkeys(systems)) if systems is not None else list(human)
    for system in chosen:
        if system not in human or not np.isfinite(human[system]):
            raise ValueError(f"system {system!r} has no human score")
    humans = set(human_systems)
    excluded = [] if include_human else [s for s in chosen if s in humans]
    return [s for s in chosen if s not in excluded], excluded


def _metric_vector(
    name: str, scores: Mapping[str, float], systems: list[str]
) -> NDArray[np.float64]:
    missing = [s for s in systems if s not in scores or not np.isfinite(scores[s])]
    if missing:
        raise ValueError(
            f"metric {name!r} has no score for the evaluated system(s) {', '.join(missing)}; "
            f"score them or leave them out of the chosen systems"
        )
    return np.array([scores[s] for s in systems], dtype=np.float64)


def meta_evaluate_systems(
    *,
    human: Mapping[str, float],
    metrics: Mapping[str, Mapping[str, float]],
    systems: Iterable[str] | None = None,
    human_systems: Iterable[str] = (),
    include_human: bool = False,
    exclude_outliers: bool = False,
    lower_is_better: Iterable[str] = (),
    cluster_test: ClusterTest = "williams",
    alpha: float = DEFAULT_ALPHA,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> SystemMetaEvaluation:
    """The system-level meta-evaluation table of ``metrics`` (name → system → score) against
    ``human`` (system → score); names must already match (see
    :func:`evalcore.metaeval.scorefiles.match_system_names`).

    Args:
        systems: the systems to evaluate (default: every system with a human score).
        human_systems: which of them are human translations; left out unless ``include_human``.
        exclude_outliers: leave out WMT20's outliers of the remaining human scores
            (:func:`evalcore.stats.outliers.mad_outliers`).
        lower_is_better: metrics to negate first (error rates), so agreement is positive.
        cluster_test: the test behind the clusters; both tests are reported.
        alpha: significance level of the clusters; n_trials, rng: the permutation test
            (``n_trials=0`` runs none; the clusters then need ``cluster_test="williams"``).
    """
    negated = _negated(metrics, lower_is_better, cluster_test, n_trials)
    kept, excluded_human = _evaluated_systems(human, systems, human_systems, include_human)
    excluded_outliers: list[str] = []
    if exclude_outliers and kept:
        rule = mad_outliers([human[s] for s in kept])
        excluded_outliers = [s for s, out in zip(kept, rule.outlier, strict=True) if out]
        kept = [s for s in kept if s not in excluded_outliers]
    if len(kept) < MIN_SYSTEMS:
        raise ValueError(
            f"{len(kept)} system(s) left to evaluate; correlations need at least {MIN_SYSTEMS}"
        )
    h = np.array([human[s] for s in kept], dtype=np.float64)
    vectors = {}
    for name, scores in metrics.items():
        vector = _metric_vector(name, scores, kept)
        vectors[name] = -vector if name in negated else vector
    r = {name: pearson(h, v) for name, v in vectors.items()}
    order = sorted(vectors, key=lambda name: (-np.nan_to_num(r[name], nan=-2.0), name))
    generator, seed = resolve_rng(rng)
    tests, clusters = metric_tests_and_clusters(
        h, vectors, r, order, cluster_test, alpha, n_trials, generator
    )
    rows = [
        _row(name, h, vectors[name], clusters[position] if clusters else None)
        for position, name in enumerate(order)
    ]
    human_names = set(human)
    return SystemMetaEvaluation(
        rows=tuple(rows),
        tests=tuple(tests),
        systems=tuple(kept),
        excluded_human=tuple(excluded_human),
        excluded_outliers=tuple(excluded_outliers),
        metric_only={
            name: tuple(sorted(set(scores) - human_names)) for name, scores in metrics.items()
        },
        negated=negated,
        cluster_test=cluster_test,
        alpha=alpha,
        n_trials=n_trials,
        seed=seed,
        outlier_cutoff=OUTLIER_CUTOFF if exclude_outliers else None,
        outlier_scale=MAD_SCALE if exclude_outliers else None,
    )


def _negated(
    metrics: Mapping[str, Mapping[str, float]],
    lower_is_better: Iterable[str],
    cluster_test: ClusterTest,
    n_trials: int,
) -> tuple[str, ...]:
    """The metrics to negate, after checking the arguments that need no scores."""
    if not metrics:
        raise ValueError("no metric to evaluate")
    negated = tuple(dict.fromkeys(lower_is_better))
    unknown = [name for name in negated if name not in metrics]
    if unknown:
        raise ValueError(f"lower_is_better names unknown metric(s): {', '.join(unknown)}")
    if cluster_test == "permutation" and n_trials <= 0:
        raise ValueError("clusters by the permutation test need n_trials > 0")
    return negated


def _row(
    name: str, h: NDArray[np.float64], v: NDArray[np.float64], cluster: int | None
) -> MetricRow:
    tie = tie_calibrated_accuracy(h, v)
    return MetricRow(
        metric=name,
        pearson=pearson(h, v),
        spearman=spearman(h, v),
        kendall=kendall_tau(h, v, "b"),
        accuracy=pairwise_accuracy(h, v),
        tie_accuracy=tie.accuracy,
        tie_epsilon=tie.epsilon,
        n_systems=int(h.size),
        cluster=cluster,
    )


def metric_tests_and_clusters(
    h: NDArray[np.float64],
    vectors: Mapping[str, NDArray[np.float64]],
    r: Mapping[str, float],
    order: list[str],
    cluster_test: ClusterTest,
    alpha: float,
    n_trials: int,
    generator: np.random.Generator,
) -> tuple[list[MetricTest], list[int]]:
    """Both tests for every pair of metrics (``order``: best Pearson ``r`` first) on the human
    scores ``h`` and the metrics' ``vectors``, and the clusters; none below 4 points (the
    Williams test's minimum) or with one metric."""
    if h.size < 4 or len(order) < 2:
        return [], []
    n = len(order)
    chosen = np.ones((n, n), dtype=np.float64)
    tests = []
    for i in range(n):
        for j in range(i + 1, n):
            a, b = vectors[order[i]], vectors[order[j]]
            williams = williams_test(r[order[i]], r[order[j]], pearson(a, b), h.size).p_value
            permutation = (
                correlation_permutation_test(
                    h, a, b, n_trials=n_trials, alternative="greater", rng=generator
                ).p_value
                if n_trials > 0
                else None
            )
            if cluster_test == "williams" or permutation is None:
                chosen[i, j] = williams
            else:
                chosen[i, j] = permutation
            tests.append(
                MetricTest(
                    better=order[i],
                    worse=order[j],
                    delta=r[order[i]] - r[order[j]],
                    williams_p=williams,
                    permutation_p=permutation,
                )
            )
    return tests, metric_clusters(chosen, alpha)
