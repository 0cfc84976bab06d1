"""Closed-form tests and intervals of Koehn §8.3: sign test, t-interval, proportion interval."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps


@dataclass(frozen=True)
class SignTest:
    """Exact two-sided sign test: k wins of a out of n non-tied comparisons."""

    wins: int
    losses: int
    ties: int
    p_value: float

    @property
    def n(self) -> int:
        """Comparisons that count (ties are left out, as Koehn §8.3.2 says)."""
        return self.wins + self.losses


def sign_test_p(k: int, n: int) -> float:
    """Two-sided exact binomial p-value of k successes in n trials with p = ½ (Koehn eq. 8.16,
    doubled for two sides): 2 · P(X ≤ min(k, n − k)), at most 1."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    tail = float(sps.binom.cdf(min(k, n - k), n, 0.5))
    return min(1.0, 2.0 * tail)


def sign_test(wins: int, losses: int, ties: int = 0) -> SignTest:
    """Sign test from counts of segments where a was better, worse, or tied with b."""
    return SignTest(wins=wins, losses=losses, ties=ties, p_value=sign_test_p(wins, wins + losses))


def sign_test_scores(scores_a: ArrayLike, scores_b: ArrayLike) -> SignTest:
    """Sign test on paired segment scores (e.g. sentence BLEU or human scores); ties dropped."""
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("paired scores need the same shape")
    return sign_test(int((a > b).sum()), int((a < b).sum()), int((a == b).sum()))


def sign_test_min_wins(n: int, alpha: float) -> int | None:
    """Fewest wins out of n that reach two-sided p ≤ alpha (Koehn Fig. 8.13); None if none do."""
    for k in range((n + 1) // 2, n + 1):
        if sign_test_p(k, n) <= alpha:
            return k
    return None


def t_value(n: int | float, confidence: float = 0.95) -> float:
    """Two-sided Student t factor for a sample of n (df = n − 1); n = inf gives the normal one."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    q = 0.5 + confidence / 2.0
    if math.isinf(n):
        return float(sps.norm.ppf(q))
    if n < 2:
        raise ValueError("a t interval needs at least two values")
    return float(sps.t.ppf(q, n - 1))


@dataclass(frozen=True)
class TInterval:
    """Mean ± d with d = t · s / √n (Koehn eq. 8.12–8.13)."""

    mean: float
    half_width: float
    low: float
    high: float
    n: int
    std: float
    confidence: float


def t_interval(values: ArrayLike, confidence: float = 0.95) -> TInterval:
    """Confidence interval of a mean from the t-distribution, s with n − 1 (Koehn eq. 8.12)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    n = x.size
    mean = float(x.mean()) if n else math.nan
    std = float(x.std(ddof=1)) if n > 1 else math.nan
    d = t_value(n, confidence) * std / math.sqrt(n) if n > 1 else math.nan
    return TInterval(
        mean=mean,
        half_width=d,
        low=mean - d,
        high=mean + d,
        n=n,
        std=std,
        confidence=confidence,
    )


ProportionMethod = Literal["wilson", "normal", "exact"]


def proportion_interval(
    successes: int, n: int, confidence: float = 0.95, method: ProportionMethod = "wilson"
) -> tuple[float, float]:
    """Confidence interval of a proportion (e.g. 30 of 100 sentences judged correct).

    ``wilson`` (default; sensible near 0 and 1), ``normal`` (p̂ ± z·√(p̂(1−p̂)/n)), or ``exact``
    (Clopper–Pearson, from the beta distribution).
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes} of {n}")
    p = successes / n
    z = float(sps.norm.ppf(0.5 + confidence / 2.0))
    if method == "normal":
        d = z * math.sqrt(p * (1 - p) / n)
        return max(0.0, p - d), min(1.0, p + d)
    if method == "wilson":
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        d = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return max(0.0, centre - d), min(1.0, centre + d)
    if method == "exact":
        alpha = 1 - confidence
        low = (
            0.0 if successes == 0 else float(sps.beta.ppf(alpha / 2, successes, n - successes + 1))
        )
        high = (
            1.0
            if successes == n
            else float(sps.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
        )
        return low, high
    raise ValueError(f"unknown method {method!r}")
