"""Adaptive allocation of human judgments: which systems the next judgments should go to.

Uniform allocation gives every system the same number of judgments, also systems whose place is
already certain. Adaptive allocation (:func:`allocate_next`) spends most of the next batch on
the systems whose relative order is least certain:

- the current ranking sorts the systems by their mean score; an adjacent pair is *decided* when
  its stopping rule says so (``rule``, below);
- four fifths of the batch go to the undecided adjacent pairs, each weighted by the inverse of
  the judgments it still needs to be decided if its observed difference were the true one (a
  pair that looks tied needs many, so the batch goes first where a decision is near), split
  between its two systems;
- one fifth stays uniform: the ranking that says which pairs are adjacent is itself an estimate,
  and judging every system a little keeps every mean current;
- the stopping rule: once every adjacent pair is decided, nothing more is allocated.

The rule that decides a pair is tested again after every batch, so it must stay valid under
repeated looks. ``rule="anytime"`` (the default, what pull mode uses) is the anytime-valid test
of :mod:`evalcore.human.sequential`: the chance that a pair of tied systems is *ever* declared
apart is at most ``alpha``, however many batches are looked at (scores bounded, judgments
exchangeable: see there). ``rule="mannwhitney"`` is the one-sided Mann-Whitney test at
``alpha`` (the WMT DA campaigns' test, as in :func:`evalcore.human.systems.pairwise_significance`)
used as if each look were the only one; kept for comparison only: re-tested after every batch it
declares tied systems apart far more often than ``alpha`` (``docs/benchmarks.md``, "Allocation").

Pearmut's simpler mode ("focus on the top k") gives the batch to the k best systems and the one
below them, again with a fifth uniform. ``benchmarks/allocation.py`` compares the policies and
rules on simulated and on replayed real judgments.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from evalcore.human.judgments import BoolArray, FloatArray, IntArray
from evalcore.human.normalisation import SegmentScores
from evalcore.human.sequential import first_decided, many_order_p_values
from evalcore.human.systems import SignificanceTest, pairwise_significance, wmt_clusters

Policy = Literal["uniform", "adaptive", "top_k", "fixed"]
Rule = Literal["anytime", "mannwhitney"]

DEFAULT_ALPHA = 0.05
DEFAULT_RULE: Rule = "anytime"
DA_BOUNDS = (0.0, 100.0)
UNIFORM_SHARE = 5  # one judgment in this many stays uniform
POWER = 0.8


def adjacent_pairs(
    samples: Sequence[FloatArray],
    *,
    rule: Rule = DEFAULT_RULE,
    bounds: tuple[float, float] = DA_BOUNDS,
) -> list[tuple[int, int, float]]:
    """The adjacent pairs of the current ranking, best first: (higher system, lower system,
    p-value of "higher is better"); systems without a judgment are left out. The p-value is the
    anytime-valid one of :func:`evalcore.human.sequential.order_p_value` on scores in
    ``bounds``, or, ``rule="mannwhitney"``, the one-sided Mann-Whitney test's."""
    judged = [k for k, x in enumerate(samples) if len(x)]
    order = sorted(judged, key=lambda k: -float(np.mean(samples[k])))
    adjacent = list(itertools.pairwise(order))
    if rule == "mannwhitney":
        ps = [mannwhitney_matrix([samples[h], samples[lo]])[0, 1] for h, lo in adjacent]
    else:
        ps = list(many_order_p_values([(samples[h], samples[lo]) for h, lo in adjacent], bounds))
        ps = [float(p[0]) for p in ps]
    return [(high, low, float(p)) for (high, low), p in zip(adjacent, ps, strict=True)]


def mannwhitney_matrix(samples: Sequence[FloatArray]) -> FloatArray:
    """``p[a, b] = scipy.stats.mannwhitneyu(samples[a], samples[b], alternative="greater")
    .pvalue`` for every ordered pair at once (NaN on the diagonal), in a fraction of scipy's
    time (the benchmark needs thousands): the normal approximation with scipy's tie and
    continuity corrections, from each system's counts of every distinct score; scipy itself
    where scipy is exact (a sample of at most 8 values and no ties)."""
    systems = len(samples)
    levels, where = np.unique(np.concatenate(list(samples)), return_inverse=True)
    counts = np.zeros((systems, len(levels)))
    for k, part in enumerate(np.split(where, np.cumsum([len(x) for x in samples])[:-1])):
        counts[k] = np.bincount(part, minlength=len(levels))
    below = np.cumsum(counts, axis=1) - counts
    # U[a, b]: pairs with a's score above b's, ties counted half.
    u = counts @ (below + counts / 2).T
    sizes = counts.sum(axis=1)
    n1, n2 = sizes[:, np.newaxis], sizes[np.newaxis, :]
    n = n1 + n2
    both = counts[:, np.newaxis, :] + counts[np.newaxis, :, :]
    tie_term = np.sum(both**3 - both, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        p = np.where(sd > 0, stats.norm.sf((u - n1 * n2 / 2 - 0.5) / sd), 1.0)
    for a, b in itertools.permutations(range(systems), 2):
        tied = np.any(both[a, b] > 1)
        if min(sizes[a], sizes[b]) <= 8 and not tied and sizes[a] and sizes[b]:
            p[a, b] = stats.mannwhitneyu(samples[a], samples[b], alternative="greater").pvalue
    np.fill_diagonal(p, np.nan)
    return np.asarray(p, dtype=np.float64)


def p_values(
    samples: Sequence[FloatArray],
    *,
    rule: Rule = DEFAULT_RULE,
    bounds: tuple[float, float] = DA_BOUNDS,
) -> FloatArray:
    """``p[a, b]``: the rule's p-value of "a is better than b" for every ordered pair (NaN on
    the diagonal)."""
    if rule == "mannwhitney":
        return mannwhitney_matrix(samples)
    systems = len(samples)
    p = np.full((systems, systems), np.nan)
    pairs = list(itertools.combinations(range(systems), 2))
    both = many_order_p_values([(samples[a], samples[b]) for a, b in pairs], bounds)
    for (a, b), (forth, back) in zip(pairs, both, strict=True):
        p[a, b], p[b, a] = forth, back
    return p


def decisions(
    samples: Sequence[FloatArray],
    *,
    alpha: float = DEFAULT_ALPHA,
    rule: Rule = DEFAULT_RULE,
    bounds: tuple[float, float] = DA_BOUNDS,
) -> BoolArray:
    """``decided[a, b]``: the rule declares a better than b, every pair tested on its own."""
    p = p_values(samples, rule=rule, bounds=bounds)
    with np.errstate(invalid="ignore"):
        out: BoolArray = (p <= alpha) if rule == "anytime" else (p < alpha)
    return out


def allocate_next(
    samples: Sequence[FloatArray],
    batch: int,
    *,
    alpha: float = DEFAULT_ALPHA,
    top_k: int | None = None,
    rule: Rule = DEFAULT_RULE,
    bounds: tuple[float, float] = DA_BOUNDS,
    pairs: list[tuple[int, int, float]] | None = None,
) -> IntArray:
    """How many of the next ``batch`` judgments each system gets: an array summing to
    ``batch``, or to 0 when every adjacent pair is decided by ``rule`` at ``alpha`` (the
    stopping rule). ``pairs``: :func:`adjacent_pairs` of ``samples`` if already at hand.

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
    if pairs is None:
        pairs = adjacent_pairs(samples, rule=rule, bounds=bounds)
    undecided = [(high, low) for high, low, p in pairs if not decided(p, alpha, rule)]
    if not undecided:
        return counts
    counts = _spread(counts, list(range(n)), uniform)
    need = np.array(
        [judgments_to_decide(samples[h], samples[lo], alpha, rule=rule) for h, lo in undecided]
    )
    weight = 1.0 / need
    shares = np.floor((batch - uniform) * weight / weight.sum()).astype(np.int64)
    shares[int(np.argmax(weight))] += batch - uniform - int(shares.sum())
    for (high, low), share in zip(undecided, shares, strict=True):
        counts[high] += share - share // 2
        counts[low] += share // 2
    return counts


def decided(p: float, alpha: float, rule: Rule = DEFAULT_RULE) -> bool:
    """Whether a pair with p-value ``p`` is decided: ``p <= alpha`` for the anytime-valid
    p-value (Ville's inequality holds with equality allowed), ``p < alpha`` for Mann-Whitney's
    (as the analysis decides)."""
    return p <= alpha if rule == "anytime" else p < alpha


def judgments_to_decide(
    high: FloatArray, low: FloatArray, alpha: float = DEFAULT_ALPHA, *, rule: Rule = DEFAULT_RULE
) -> float:
    """More judgments per system (at least 1) that a pair needs to be decided at ``alpha``, if
    its observed difference d were the true one: n = c · (s²_high + s²_low) / d², less the
    judgments it has. For Mann-Whitney c = (z₁₋α + z₀.₈)², the normal approximation of a test
    of power 0.8; for the anytime-valid rule c = 2 ln(2/α), the pairs after which a bet that
    grows by d² / (2 (s²_high + s²_low)) a pair reaches the wealth 2/α."""
    diff = float(np.mean(high) - np.mean(low))
    enough = min(len(high), len(low)) > 1
    var = float(np.var(high, ddof=1) + np.var(low, ddof=1)) if enough else 1.0
    if rule == "mannwhitney":
        z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(POWER))
        c = z * z
    else:
        c = 2.0 * math.log(2.0 / alpha)
    needed = c * max(var, 1e-12) / max(diff, 1e-9) ** 2
    return max(needed - min(len(high), len(low)), 1.0)


def _spread(counts: IntArray, targets: list[int], batch: int) -> IntArray:
    """``counts`` plus ``batch`` spread as evenly as possible over ``targets``; the remainder
    goes to the first ones."""
    share, extra = divmod(batch, len(targets))
    for i, k in enumerate(targets):
        counts[k] += share + (1 if i < extra else 0)
    return counts


def current_clusters(
    samples: Sequence[FloatArray],
    *,
    alpha: float = DEFAULT_ALPHA,
    test: SignificanceTest = "mannwhitney",
    rng: np.random.Generator | int | None = None,
) -> IntArray:
    """WMT clusters (:func:`wmt_clusters`) of the systems' judgments so far, by the one-sided
    Mann-Whitney test on every ordered pair, as the analysis computes them for DA (or by
    another ``test`` of :func:`pairwise_significance`: "bootstrap" resamples each system's
    judgments, a test of the means; ``rng`` seeds it)."""
    width = max(len(x) for x in samples)
    mean = np.full((len(samples), width), np.nan)
    for k, x in enumerate(samples):
        mean[k, : len(x)] = x
    count = np.isfinite(mean).astype(np.int64)
    significance = pairwise_significance(
        SegmentScores(mean=mean, count=count), test=test, n_samples=2000, rng=rng
    )
    means = np.array([float(np.mean(x)) if len(x) else np.nan for x in samples])
    return wmt_clusters(means, significance, alpha=alpha).cluster


def decision_history(
    samples: Sequence[FloatArray],
    looks: Sequence[IntArray],
    *,
    alpha: float = DEFAULT_ALPHA,
    rule: Rule = DEFAULT_RULE,
    bounds: tuple[float, float] = DA_BOUNDS,
) -> list[BoolArray]:
    """:func:`decisions` at every look of a campaign whose judgments were appended: at a look,
    system k had the first ``looks[t][k]`` of ``samples[k]``. The anytime-valid rule's take one
    pass (:func:`evalcore.human.sequential.first_decided`); Mann-Whitney's are tested again at
    every look."""
    systems = len(samples)
    if rule == "mannwhitney":
        return [
            mannwhitney_matrix([x[: int(n)] for x, n in zip(samples, seen, strict=True)]) < alpha
            for seen in looks
        ]
    pairs = list(itertools.combinations(range(systems), 2))
    first = first_decided([(samples[a], samples[b]) for a, b in pairs], alpha, bounds)
    at = np.full((systems, systems), np.inf)
    for (a, b), (forth, back) in zip(pairs, first, strict=True):
        at[a, b], at[b, a] = forth, back
    out = []
    for seen in looks:
        n = np.asarray(seen, dtype=np.float64)
        out.append(at <= np.minimum(n[:, np.newaxis], n[np.newaxis, :]))
    return out


def wanted(target: Sequence[int] | IntArray) -> BoolArray:
    """The decisions of target clusters: ``[a, b]`` when a's cluster is above b's."""
    want = np.asarray(target)
    out: BoolArray = want[:, np.newaxis] < want[np.newaxis, :]
    return out


def right_decisions(decided: BoolArray, target: Sequence[int] | IntArray) -> int:
    """How many of ``target``'s decisions (:func:`wanted`) ``decided`` makes."""
    return int(np.sum(decided & wanted(target)))


def wrong_decisions(decided: BoolArray, true_means: Sequence[float]) -> int:
    """How many pairs ``decided`` puts in an order the true means do not have: a system
    declared better than one whose true mean is as high or higher (a tie split, or a
    reversal)."""
    means = np.asarray(true_means, dtype=np.float64)
    return int(np.sum(decided & (means[:, np.newaxis] <= means[np.newaxis, :])))


Draw = Callable[[int, int], FloatArray]


def da_draws(
    true_means: Sequence[float], noise_sd: float, rng: np.random.Generator | int | None
) -> Draw:
    """Judgments on a 0-100 slider: system k's ``50 + 25 (true_means[k] + noise)``, the noise
    normal with ``noise_sd``, rounded and clipped to the scale (the clipping keeps ties tied
    and the order of distinct true means). ``rng``: a Generator, a seed or None."""

    generator = np.random.default_rng(rng)

    def draw(k: int, n: int) -> FloatArray:
        raw = 50.0 + 25.0 * (true_means[k] + noise_sd * generator.standard_normal(n))
        out: FloatArray = np.clip(np.round(raw), 0.0, 100.0)
        return out

    return draw


@dataclass(frozen=True)
class Simulation:
    """One simulated campaign: after every batch (a look), the judgments spent so far and the
    decisions then (:func:`decisions`: every pair tested by the rule); ``stopped`` when the
    stopping rule ended it before the budget."""

    spent: list[int] = field(default_factory=list)
    decided: list[BoolArray] = field(default_factory=list)
    stopped: bool = False

    def reached_at(self, target: Sequence[int]) -> int | None:
        """The judgments spent at the first look that made every decision of ``target``
        (:func:`wanted`), None if none did."""
        want = wanted(target)
        for spent, decided in zip(self.spent, self.decided, strict=True):
            if np.all(decided[want]):
                return spent
        return None

    def at(self, budget: int) -> BoolArray:
        """The decisions at the last look within ``budget`` judgments (the campaign's answer
        had it been given that budget)."""
        within = [d for s, d in zip(self.spent, self.decided, strict=True) if s <= budget]
        return within[-1] if within else np.zeros_like(self.decided[0])

    def ever_wrong(self, true_means: Sequence[float], until: int | None = None) -> bool:
        """Whether some look (up to ``until`` judgments) declared an order the true means do
        not have (:func:`wrong_decisions`)."""
        return any(
            wrong_decisions(d, true_means) > 0
            for s, d in zip(self.spent, self.decided, strict=True)
            if until is None or s <= until
        )


def simulate_allocation(
    draw: Draw,
    systems: int,
    *,
    policy: Policy,
    batch: int,
    budget: int,
    rule: Rule = DEFAULT_RULE,
    alpha: float = DEFAULT_ALPHA,
    top_k: int = 3,
    shares: Sequence[float] | None = None,
    bounds: tuple[float, float] = DA_BOUNDS,
    enough: Callable[[int, Callable[[], BoolArray]], bool] | None = None,
) -> Simulation:
    """Judge in batches under ``policy`` (judgments of system k from ``draw(k, how_many)``)
    until the budget is spent, the stopping rule holds (every adjacent pair decided by
    ``rule``; top-k: the k best's pairs) or ``enough(spent, decisions)`` says the caller has
    seen what it needs (asked after every batch; ``decisions()`` gives the current ones, a
    test of every pair, so a caller asks for them only once they matter). The first batch is
    uniform under every policy. ``policy="fixed"``
    gives every batch in the proportions of ``shares`` (an oracle that knows where the hard
    decisions are, for comparison)."""
    samples: list[FloatArray] = [np.empty(0) for _ in range(systems)]
    spent: list[int] = []
    looks: list[IntArray] = []
    pairs: list[tuple[int, int, float]] = []
    top = top_k if policy == "top_k" else None
    stopped = False
    while not spent or spent[-1] < budget:
        if policy == "uniform" or not spent:
            counts = _spread(np.zeros(systems, dtype=np.int64), list(range(systems)), batch)
        elif policy == "fixed":
            assert shares is not None
            counts = in_proportion(np.asarray(shares, dtype=np.float64), batch)
        else:
            counts = allocate_next(
                samples, batch, alpha=alpha, top_k=top, rule=rule, bounds=bounds, pairs=pairs
            )
        for k in range(systems):
            samples[k] = np.concatenate([samples[k], draw(k, int(counts[k]))])
        spent.append((spent[-1] if spent else 0) + int(counts.sum()))
        looks.append(np.array([len(x) for x in samples], dtype=np.int64))
        pairs = adjacent_pairs(samples, rule=rule, bounds=bounds)
        watched = pairs[:top] if top is not None else pairs
        if all(decided(p, alpha, rule) for _, _, p in watched):
            stopped = True
            break
        if enough is not None and enough(
            spent[-1], lambda: decisions(samples, alpha=alpha, rule=rule, bounds=bounds)
        ):
            break
    history = decision_history(samples, looks, alpha=alpha, rule=rule, bounds=bounds)
    return Simulation(spent, history, stopped=stopped)


def in_proportion(shares: FloatArray, batch: int) -> IntArray:
    """``batch`` split in the proportions of ``shares``, rounded down, the rest to the largest."""
    counts: IntArray = np.floor(batch * shares / shares.sum()).astype(np.int64)
    counts[int(np.argmax(shares))] += batch - int(counts.sum())
    return counts
