"""Deciding the order of two systems by judgments that keep coming: a test that stays valid
however often it is looked at (anytime-valid), for scores on a bounded scale.

Testing a pair again after every batch with a fixed-sample test (Mann-Whitney at ``alpha``)
makes the chance that a *tied* pair is ever declared apart grow with the number of looks: over
20 looks of 50 judgments, one-sided Mann-Whitney in either order at 0.05 declared 137 of 300
simulated tied pairs apart (``tests/evalcore/human/test_sequential.py``). This module
replaces the fixed-sample p-value by an **e-process**, a wealth that grows only when the data
speak against a tie, and decides when it reaches ``2/alpha``: Ville's inequality bounds the
chance of *ever* reaching it under the null by ``alpha/2``, whatever the number of looks and
whenever one stops.

The construction: betting on the paired differences (Waudby-Smith & Ramdas 2023, "Estimating
means of bounded random variables by betting", JRSS-B, with their aGRAPA bet). Betting against
every difference of means instead of against 0 alone would give a confidence sequence for the
difference (Howard et al. 2021); the decision needs only the test against 0. An alpha-spending
rule (Lan-DeMets) would need the looks and the final size planned in advance, which pull mode
does not have; the betting test needs neither.

- The i-th judgment of the higher system is paired with the i-th judgment of the lower one, in
  the order they came in; a system's surplus judgments wait for their partner.
- A difference ``D`` of two scores on ``[lo, hi]`` lies in ``[-(hi-lo), hi-lo]``; it is scaled
  to ``y = (D/(hi-lo) + 1)/2`` in ``[0, 1]``, whose mean is ``1/2`` exactly when the means tie.
- The wealth betting that the higher system is better is ``prod_i (1 + l_i (y_i - 1/2))``, the
  bet ``l_i`` worked out from the pairs before the i-th only (predictable):
  ``l_i = clip((m - 1/2) / (v + (m - 1/2)^2), 0, 2c)`` with ``m`` and ``v`` the running mean and
  variance of the earlier ``y`` (shrunk towards 1/2 and 1/4 as the paper does) and ``c = 1/2``,
  so that no factor falls below ``1/2``. The other direction bets the same way on ``1 - y``.
- The anytime-valid p-value of "the higher system is better" is ``min(1, 2 / W*)``, ``W*`` the
  largest wealth so far (the factor 2: either direction may be declared). A pair is *decided*
  when ``p <= alpha``; a decision once made stays made.

**Guarantee** (per pair): if the two systems' mean scores are equal, the probability that the
pair is *ever* declared apart, in either order, is at most ``alpha``; if one is truly better, the
probability that the reverse order is ever declared is at most ``alpha/2``. It holds for any
number of looks, any stopping time and any allocation that chooses the next judgments from the
judgments so far. **Assumptions**: scores lie in ``[lo, hi]`` (values outside are clipped); each
system's judgments are draws with a fixed mean, independent of the other system's and of the
order in which they are asked for (judgments of random segments by random annotators);
annotators whose standards drift, or segments chosen by their scores, break it. The price is
power: compared with a test run once at a planned size, it needs more judgments to decide a
pair that a single look would decide.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore.human.judgments import FloatArray

# The largest stake, as the share of the wealth that a bet may lose on one pair.
STAKE = 0.5


def scaled_differences(
    high: FloatArray, low: FloatArray, bounds: tuple[float, float]
) -> FloatArray:
    """The paired differences (the i-th of ``high`` less the i-th of ``low``, as many as the
    shorter has) scaled from ``[lo - hi, hi - lo]`` to ``[0, 1]``; a tie means 1/2."""
    lo, hi = bounds
    n = min(len(high), len(low))
    a = np.clip(np.asarray(high[:n], dtype=np.float64), lo, hi)
    b = np.clip(np.asarray(low[:n], dtype=np.float64), lo, hi)
    return ((a - b) / (hi - lo) + 1.0) / 2.0


def bets(y: FloatArray) -> FloatArray:
    """The predictable aGRAPA bets on ``y`` in ``[0, 1]`` against the mean 1/2 (positive: on a
    mean above it), along the last axis: the i-th from ``y[:i]`` only, by the running estimates
    ``m_i = (1/2 + sum y_j) / (i + 1)`` and ``v_i = (1/4 + sum (y_j - m_j)^2) / (i + 1)``
    (Waudby-Smith & Ramdas 2023, §5), clipped to ``[-2c, 2c]``."""
    n = y.shape[-1]
    steps = np.arange(1, n + 1, dtype=np.float64)
    mean = (0.5 + np.cumsum(y, axis=-1)) / (steps + 1)
    var = (0.25 + np.cumsum((y - mean) ** 2, axis=-1)) / (steps + 1)
    # The bet on the i-th uses the estimates after the (i-1)-th: the priors for the first.
    prev_mean = np.concatenate([np.full((*y.shape[:-1], 1), 0.5), mean[..., :-1]], axis=-1)
    prev_var = np.concatenate([np.full((*y.shape[:-1], 1), 0.25), var[..., :-1]], axis=-1)
    edge = prev_mean - 0.5
    bet: FloatArray = np.clip(edge / (prev_var + edge * edge), -2 * STAKE, 2 * STAKE)
    return bet


def log_wealth(y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The log wealth after each pair (along the last axis), betting that the mean of ``y`` is
    above 1/2 (the first array) and below it (the second): running sums of
    ``log(1 + l (y - 1/2))`` with the bet's positive part, and of ``log(1 - l (y - 1/2))``
    with its negative part."""
    bet = bets(y)
    up = np.cumsum(np.log1p(np.maximum(bet, 0.0) * (y - 0.5)), axis=-1)
    down = np.cumsum(np.log1p(np.maximum(-bet, 0.0) * (0.5 - y)), axis=-1)
    return up, down


def _padded_wealth(
    pairs: Sequence[tuple[FloatArray, FloatArray]], bounds: tuple[float, float]
) -> tuple[FloatArray, FloatArray]:
    """:func:`log_wealth` of many pairs at once, each row one pair; the scaled differences are
    padded with 1/2 (a bet on 1/2 neither wins nor loses) to one length (at least 1)."""
    ys = [scaled_differences(a, b, bounds) for a, b in pairs]
    padded = np.full((len(ys), max([1, *(len(y) for y in ys)])), 0.5)
    for i, y in enumerate(ys):
        padded[i, : len(y)] = y
    return log_wealth(padded)


def many_order_p_values(
    pairs: Sequence[tuple[FloatArray, FloatArray]], bounds: tuple[float, float] = (0.0, 100.0)
) -> FloatArray:
    """:func:`order_p_values` of many pairs at once: an array (pairs, 2)."""
    up, down = _padded_wealth(pairs, bounds)
    best = np.maximum(np.stack([up.max(axis=-1), down.max(axis=-1)], axis=-1), 0.0)
    out: FloatArray = np.minimum(1.0, 2.0 * np.exp(-best))
    return out


def first_decided(
    pairs: Sequence[tuple[FloatArray, FloatArray]],
    alpha: float,
    bounds: tuple[float, float] = (0.0, 100.0),
) -> FloatArray:
    """For many pairs (a, b): after how many paired judgments "a above b" (column 0) and "b
    above a" (column 1) were first decided at ``alpha``, ``inf`` if not yet. A pair is decided
    at a later look exactly when it has at least that many pairs then (the p-value only falls),
    so one pass over the judgments gives every look's decisions."""
    up, down = _padded_wealth(pairs, bounds)
    out = np.full((len(pairs), 2), np.inf)
    threshold = np.log(2.0 / alpha)
    for column, wealth in enumerate((up, down)):
        hit = wealth >= threshold
        some = hit.any(axis=-1)
        out[some, column] = np.argmax(hit[some], axis=-1) + 1
    return out


def order_p_values(
    a: FloatArray, b: FloatArray, bounds: tuple[float, float] = (0.0, 100.0)
) -> tuple[float, float]:
    """The anytime-valid p-values of "``a``'s mean is above ``b``'s" and of the reverse:
    ``min(1, 2/W*)``, ``W*`` the largest wealth so far of the bet on that order (1 before any
    pair)."""
    y = scaled_differences(a, b, bounds)
    if not len(y):
        return 1.0, 1.0
    up, down = log_wealth(y)
    return _p(float(np.max(up))), _p(float(np.max(down)))


def _p(log_best: float) -> float:
    return float(min(1.0, 2.0 * np.exp(-max(0.0, log_best))))


def order_p_value(
    high: FloatArray, low: FloatArray, bounds: tuple[float, float] = (0.0, 100.0)
) -> float:
    """The anytime-valid p-value of "``high``'s mean is above ``low``'s" (the first of
    :func:`order_p_values`)."""
    return order_p_values(high, low, bounds)[0]


def ever_decided(
    high: FloatArray,
    low: FloatArray,
    looks: FloatArray | list[int],
    *,
    alpha: float,
    bounds: tuple[float, float] = (0.0, 100.0),
) -> bool:
    """Whether the pair is declared apart, in either order, at one of ``looks`` (numbers of
    pairs seen): the event whose chance the guarantee bounds by ``alpha`` under a tie."""
    y = scaled_differences(high, low, bounds)
    up, down = log_wealth(y)
    at = np.asarray(looks, dtype=np.int64)
    at = at[(at >= 1) & (at <= len(y))] - 1
    if not len(at):
        return False
    return bool(np.max(np.maximum(up[at], down[at])) >= np.log(2.0 / alpha))
