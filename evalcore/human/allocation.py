"""Adaptive allocation of human judgments: which systems the next judgments should go to.

Uniform allocation gives every system the same number of judgments, also systems whose place is
already certain. Adaptive allocation (:func:`allocate_next`) spends most of the next batch on
the systems whose relative order is least certain:

- the current ranking sorts the systems by their mean score; an adjacent pair is *decided* when
  the one-sided Mann-Whitney test (the WMT DA campaigns' test, as in
  :func:`evalcore.human.systems.pairwise_significance`) finds the higher one better at ``alpha``;
- four fifths of the batch go to the undecided adjacent pairs, each weighted by the inverse of
  the judgments it still needs to be decided if its observed difference were the true one (a
  pair that looks tied needs many, so the batch goes first where a decision is near), split
  between its two systems;
- one fifth stays uniform: the tests are repeated after every batch, so some decisions are made
  by chance; judging every system a little keeps such a decision from standing for ever;
- the stopping rule: once every adjacent pair is decided, nothing more is allocated.

Pearmut's simpler mode ("focus on the top k") gives the batch to the k best systems and the one
below them, again with a fifth uniform. ``benchmarks/allocation.py`` simulates all three on a
known true ranking.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalcore.human.judgments import FloatArray, IntArray
from evalcore.human.normalisation import SegmentScores
from evalcore.human.systems import pairwise_significance, wmt_clusters

Policy = Literal["uniform", "adaptive", "top_k", "fixed"]

DEFAULT_ALPHA = 0.05
UNIFORM_SHARE = 5  # one judgment in this many stays uniform
POWER = 0.8


def adjacent_pairs(samples: Sequence[FloatArray]) -> list[tuple[int, int, float]]:
    """The adjacent pairs of the current ranking, best first: (higher system, lower system,
    one-sided Mann-Whitney p-value of "higher is better"); systems without a judgment are
    left out."""
    judged = [k for k, x in enumerate(samples) if len(x)]
    order = sorted(judged, key=lambda k: -float(np.mean(samples[k])))
    pairs = []
    for high, low in itertools.pairwise(order):
        test = stats.mannwhitneyu(samples[high], samples[low], alternative="greater")
        pairs.append((high, low, float(test.pvalue)))
    return pairs


def allocate_next(
    samples: Sequence[FloatArray],
    batch: int,
    *,
    alpha: float = DEFAULT_ALPHA,
    top_k: int | None = None,
) -> IntArray:
    """How many of the next ``batch`` judgments each system gets: an array summing to
    ``batch``, or to 0 when every adjacent pair is decided (the stopping rule).

    Systems without a judgment yet share the batch first. With ``top_k``, the batch goes
    evenly to the k best systems and the one below them, whatever is decided, but for the
    uniform fifth (without it, a system tied with the one below the k best stays unjudged and
    the k best can never be told apart from it)."""
    n = len(samples)
    counts = np.zeros(n, dtype=np.int64)
    empty = [k for k, x in enumerate(samples) if not len(x)]
    if empty:
        return _spread(counts, empty, batch)
    uniform = batch // UNIFORM_SHARE
    if top_k is not None:
        order = np.argsort([-float(np.mean(x)) for x in samples], kind="stable")
        counts = _spread(counts, list(range(n)), uniform)
        return _spread(counts, [int(k) for k in order[: top_k + 1]], batch - uniform)
    undecided = [(high, low) for high, low, p in adjacent_pairs(samples) if not p < alpha]
    if not undecided:
        return counts
    counts = _spread(counts, list(range(n)), uniform)
    need = np.array([judgments_to_decide(samples[h], samples[lo], alpha) for h, lo in undecided])
    weight = 1.0 / need
    shares = np.floor((batch - uniform) * weight / weight.sum()).astype(np.int64)
    shares[int(np.argmax(weight))] += batch - uniform - int(shares.sum())
    for (high, low), share in zip(undecided, shares, strict=True):
        counts[high] += share - share // 2
        counts[low] += share // 2
    return counts


def judgments_to_decide(high: FloatArray, low: FloatArray, alpha: float = DEFAULT_ALPHA) -> float:
    """More judgments per system (at least 1) that a pair needs to be decided at ``alpha``
    with power 0.8, by the normal approximation, if its observed difference were the true
    one: n = (z₁₋α + z₀.₈)² · (s²_high + s²_low) / d², less the judgments it has."""
    diff = float(np.mean(high) - np.mean(low))
    enough = min(len(high), len(low)) > 1
    var = float(np.var(high, ddof=1) + np.var(low, ddof=1)) if enough else 1.0
    z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(POWER))
    needed = z * z * max(var, 1e-12) / max(diff, 1e-9) ** 2
    return max(needed - min(len(high), len(low)), 1.0)


def _spread(counts: IntArray, targets: list[int], batch: int) -> IntArray:
    """``counts`` plus ``batch`` spread as evenly as possible over ``targets``; the remainder
    goes to the first ones."""
    share, extra = divmod(batch, len(targets))
    for i, k in enumerate(targets):
        counts[k] += share + (1 if i < extra else 0)
    return counts


def current_clusters(samples: Sequence[FloatArray], *, alpha: float = DEFAULT_ALPHA) -> IntArray:
    """WMT clusters (:func:`wmt_clusters`) of the systems' judgments so far, by the one-sided
    Mann-Whitney test on every ordered pair, as the analysis computes them for DA."""
    width = max(len(x) for x in samples)
    mean = np.full((len(samples), width), np.nan)
    for k, x in enumerate(samples):
        mean[k, : len(x)] = x
    count = np.isfinite(mean).astype(np.int64)
    significance = pairwise_significance(SegmentScores(mean=mean, count=count), test="mannwhitney")
    means = np.array([float(np.mean(x)) if len(x) else np.nan for x in samples])
    return wmt_clusters(means, significance, alpha=alpha).cluster


def separates(clusters: Sequence[int] | IntArray, target: Sequence[int] | IntArray) -> bool:
    """Whether ``clusters`` make every decision ``target`` makes: each two systems in different
    target clusters are in different clusters, in the same order. (Splitting a target cluster
    is the test's own false positive, at its level, and is not held against a policy.)"""
    got = np.asarray(clusters)
    want = np.asarray(target)
    better, worse = np.nonzero(want[:, np.newaxis] < want[np.newaxis, :])
    return bool(np.all(got[better] < got[worse]))


def same_clusters(clusters: Sequence[int] | IntArray, target: Sequence[int]) -> bool:
    """Whether ``clusters`` are exactly ``target``'s: the decisions :func:`separates` asks for,
    and no two systems of one target cluster apart (no chance split)."""
    got = np.asarray(clusters)
    want = np.asarray(target)
    together = want[:, np.newaxis] == want[np.newaxis, :]
    return separates(got, want) and bool(
        np.all((got[:, np.newaxis] == got[np.newaxis, :]) == together)
    )


@dataclass(frozen=True)
class Simulation:
    """One simulated campaign: the judgments spent when the clusters first separated the
    target's (None if the budget ran out first), all judgments spent, and the clusters at the
    end (where they may differ from the target by chance splits: see :func:`same_clusters`)."""

    reached_at: int | None
    spent: int
    clusters: IntArray | None = None


def simulate_allocation(
    true_means: Sequence[float],
    target: Sequence[int],
    *,
    policy: Policy,
    noise_sd: float,
    batch: int,
    budget: int,
    alpha: float = DEFAULT_ALPHA,
    top_k: int = 3,
    shares: Sequence[float] | None = None,
    rng: np.random.Generator,
) -> Simulation:
    """Judge in batches under ``policy`` until the clusters separate ``target``'s (see
    :func:`separates`), the budget is spent or, adaptive, the stopping rule ends it. A judgment
    of system k is ``true_means[k]`` plus normal noise of ``noise_sd``; the first batch is
    uniform under every policy. ``policy="fixed"`` gives every batch in the proportions of
    ``shares`` (an oracle that knows where the hard decisions are, for comparison)."""
    n = len(true_means)
    samples: list[FloatArray] = [np.empty(0) for _ in range(n)]
    spent = 0
    clusters = None
    while spent < budget:
        if policy == "uniform" or spent == 0:
            counts = _spread(np.zeros(n, dtype=np.int64), list(range(n)), batch)
        elif policy == "fixed":
            assert shares is not None
            counts = in_proportion(np.asarray(shares, dtype=np.float64), batch)
        else:
            top = top_k if policy == "top_k" else None
            counts = allocate_next(samples, batch, alpha=alpha, top_k=top)
            if not counts.sum():
                break
        for k in range(n):
            new = true_means[k] + noise_sd * rng.standard_normal(int(counts[k]))
            samples[k] = np.concatenate([samples[k], new])
        spent += int(counts.sum())
        clusters = current_clusters(samples, alpha=alpha)
        if separates(clusters, target):
            return Simulation(reached_at=spent, spent=spent, clusters=clusters)
    return Simulation(reached_at=None, spent=spent, clusters=clusters)


def in_proportion(shares: FloatArray, batch: int) -> IntArray:
    """``batch`` split in the proportions of ``shares``, rounded down, the rest to the largest."""
    counts: IntArray = np.floor(batch * shares / shares.sum()).astype(np.int64)
    counts[int(np.argmax(shares))] += batch - int(counts.sum())
    return counts
