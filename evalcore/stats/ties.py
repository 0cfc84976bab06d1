"""Kendall's τ variants that count ties, and tie calibration (Deutsch, Foster & Freitag 2023,
"Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration").

Humans often tie two translations; metrics almost never do, so τ-b and τ-c cannot reward a metric
for predicting a tie. τ_eq (``"23"``) and acc_eq (``"acc23"``) count a pair tied by both sides as
correct, and tie calibration picks the metric threshold ε — differences of at most ε are ties —
that maximises the statistic on the data at hand. WMT23 ranks metrics by acc_eq. The definitions
are mt-metrics-eval's (``stats.KendallVariants``, ``tau_optimization.tau_optimization``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .correlation import kendall_tau, pair_counts

FloatArray = NDArray[np.float64]
Variant = Literal["b", "c", "23", "acc23"]
VARIANTS: tuple[str, ...] = ("b", "c", "23", "acc23")


def kendall_variant(
    human: ArrayLike, metric: ArrayLike, variant: Variant = "b", *, epsilon: float = 0.0
) -> float:
    """Kendall's τ in mt-metrics-eval's variants, metric differences of at most ``epsilon`` tied.

    With C concordant and D discordant pairs, T_h pairs tied only by the humans, T_m only by the
    metric, T_hm by both and N all pairs:

    * ``b``: (C − D) / √((N − T_h − T_hm)(N − T_m − T_hm)) (scipy's τ-b at ε = 0);
    * ``c``: Stuart's τ-c (ε must be 0, as in mt-metrics-eval);
    * ``23``: τ_eq = (C + T_hm − D − T_h − T_m) / N;
    * ``acc23``: acc_eq = (C + T_hm) / N, the pairwise accuracy that credits agreeing ties.
    """
    if variant == "c":
        if epsilon != 0:
            raise ValueError("τ-c is not defined with a tie threshold (mt-metrics-eval refuses it)")
        return kendall_tau(human, metric, "c")
    counts = pair_counts(human, metric, tie_y=epsilon)
    n = counts.n * (counts.n - 1) // 2
    if n == 0:
        return math.nan
    c, d, both = counts.concordant, counts.discordant, counts.ties_both
    if variant == "b":
        tied_h = counts.ties_x + both
        tied_m = counts.ties_y + both
        denom = math.sqrt((n - tied_h) * (n - tied_m))
        return (c - d) / denom if denom > 0 else math.nan
    if variant == "23":
        return (c + both - d - counts.ties_x - counts.ties_y) / n
    if variant == "acc23":
        return (c + both) / n
    raise ValueError(f"unknown variant {variant!r}; choose from {VARIANTS}")


@dataclass(frozen=True)
class TieCalibration:
    """acc_eq at the best tie threshold, and the curve it was chosen from.

    ``thresholds`` are 0 and every distinct absolute metric difference of a pair, ascending;
    ``accuracies`` the mean over groups of acc_eq at each. ``epsilon`` is the smallest threshold
    with the highest accuracy; ``n_groups`` counts the groups with at least one pair.
    """

    accuracy: float
    epsilon: float
    thresholds: FloatArray
    accuracies: FloatArray
    n_pairs: int
    n_groups: int


def tie_calibrated_accuracy(human: ArrayLike, metric: ArrayLike) -> TieCalibration:
    """Pairwise accuracy with tie calibration (acc_eq*, Deutsch et al. 2023).

    ``human`` and ``metric`` are vectors (one group: the systems at system level, or all segments
    ungrouped) or (groups × points) matrices whose rows are the groups (the systems of one item,
    or the items of one system); NaN on either side leaves the point out. At threshold ε a pair
    with |Δ metric| ≤ ε is a metric tie: correct when the humans tie it too; every other pair is
    correct when both sides order it the same way. Each group's accuracy is its share of correct
    pairs; the statistic is their mean, maximised over ε. Exhaustive (mt-metrics-eval's
    ``sample_rate=1``): memory grows with the number of pairs.
    """
    h = np.atleast_2d(np.asarray(human, dtype=np.float64))
    m = np.atleast_2d(np.asarray(metric, dtype=np.float64))
    if h.shape != m.shape or h.ndim != 2:
        raise ValueError(f"human and metric need the same shape, got {h.shape} and {m.shape}")
    gaps: list[FloatArray] = []
    gains: list[FloatArray] = []
    base = 0.0
    groups = 0
    for hr, mr in zip(h, m, strict=True):
        keep = ~(np.isnan(hr) | np.isnan(mr))
        hv, mv = hr[keep], mr[keep]
        if hv.size < 2:
            continue
        i, j = np.triu_indices(hv.size, k=1)
        dh, dm = hv[i] - hv[j], mv[i] - mv[j]
        correct = (dh * dm > 0) | ((dh == 0) & (dm == 0))
        # What turning this pair into a metric tie changes in its group's accuracy.
        gain = (dh == 0).astype(np.float64) - correct
        base += float(correct.mean())
        gaps.append(np.abs(dm))
        gains.append(gain / dh.size)
        groups += 1
    if groups == 0:
        empty = np.zeros(0, dtype=np.float64)
        return TieCalibration(math.nan, math.nan, empty, empty, 0, 0)
    gap = np.concatenate(gaps)
    order = np.argsort(gap, kind="stable")
    gap = gap[order]
    running = np.cumsum(np.concatenate(gains)[order])
    thresholds = np.unique(gap)
    last = np.searchsorted(gap, thresholds, side="right") - 1
    accuracies = (base + running[last]) / groups
    if thresholds[0] > 0:  # ε = 0 introduces no ties and is always a candidate
        thresholds = np.concatenate([[0.0], thresholds])
        accuracies = np.concatenate([[base / groups], accuracies])
    # Equal accuracies reached by different sums may differ in the last bits: the smallest ε
    # among those equal to 12 decimals wins, as mt-metrics-eval's first maximum does.
    best = int(np.argmax(np.round(accuracies, 12)))
    return TieCalibration(
        accuracy=float(accuracies[best]),
        epsilon=float(thresholds[best]),
        thresholds=thresholds,
        accuracies=accuracies,
        n_pairs=int(gap.size),
        n_groups=groups,
    )
