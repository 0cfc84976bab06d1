"""Human rankings: pairwise comparisons, "no worse than all others", Expected Wins and TrueSkill.

For ranking protocols the ``score`` column of a :class:`~evalcore.human.judgments.Judgments`
table holds the rank an output got on its screen (1 = best, ties share a rank); the outputs ranked
together share a ``screen`` code. A screen of k outputs yields k(k−1)/2 pairwise comparisons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import trueskill
from scipy import special

from evalcore.human.judgments import BoolArray, FloatArray, IntArray, ItemType, Judgments
from evalcore.stats.resampling import resolve_rng

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Comparisons:
    """Pairwise comparisons, one per pair of outputs ranked on the same screen.

    Systems are ordered so that ``system_a < system_b`` (codes); ``outcome`` is +1 when a was
    ranked better (a lower rank), −1 when b was, 0 for a tie. ``item_type`` is the larger of the
    two rows' item types, so a comparison with a QC output is a QC comparison. ``row_a`` and
    ``row_b`` are the judgment rows compared. For a comparison on a REPEAT screen whose two rows
    both have an ``original``, ``has_original`` is True and ``original_outcome`` is the outcome
    the annotator gave the same pair on the original screen (0 elsewhere).
    """

    annotator: IntArray
    segment: IntArray
    screen: IntArray
    system_a: IntArray
    system_b: IntArray
    outcome: npt.NDArray[np.int8]
    item_type: IntArray
    row_a: IntArray
    row_b: IntArray
    has_original: BoolArray
    original_outcome: npt.NDArray[np.int8]
    n_systems: int

    def __len__(self) -> int:
        return int(self.outcome.shape[0])

    def select(self, mask: BoolArray) -> Comparisons:
        """The comparisons selected by a boolean mask."""
        return Comparisons(
            annotator=self.annotator[mask],
            segment=self.segment[mask],
            screen=self.screen[mask],
            system_a=self.system_a[mask],
            system_b=self.system_b[mask],
            outcome=self.outcome[mask],
            item_type=self.item_type[mask],
            row_a=self.row_a[mask],
            row_b=self.row_b[mask],
            has_original=self.has_original[mask],
            original_outcome=self.original_outcome[mask],
            n_systems=self.n_systems,
        )


def pairwise_comparisons(judgments: Judgments) -> Comparisons:
    """Every pair of outputs ranked on the same screen, as a comparison (lower rank wins).

    Vectorised: the rows are sorted by screen and row i is paired with row i + d for every offset
    d below the largest screen size, so the loop runs over offsets, not over judgments. Two rows
    of the same system on one screen are not compared, nor two rows of one merged answer (two
    systems credited with one shown output: the annotator compared nothing between them, and
    counting the identical texts as a tie would add ties nobody gave).
    """
    order = np.argsort(judgments.screen, kind="stable")
    screen_sorted = judgments.screen[order]
    n = order.shape[0]
    if n == 0:
        largest = 0
    else:
        _, sizes = np.unique(screen_sorted, return_counts=True)
        largest = int(sizes.max())
    first_parts: list[IntArray] = []
    second_parts: list[IntArray] = []
    for offset in range(1, largest):
        same = screen_sorted[:-offset] == screen_sorted[offset:]
        first_parts.append(order[:-offset][same])
        second_parts.append(order[offset:][same])
    first = np.concatenate(first_parts) if first_parts else np.zeros(0, np.int64)
    second = np.concatenate(second_parts) if second_parts else np.zeros(0, np.int64)
    answer = judgments.answer
    keep = (judgments.system[first] != judgments.system[second]) & (answer[first] != answer[second])
    first, second = first[keep], second[keep]
    swap = judgments.system[first] > judgments.system[second]
    row_a = np.where(swap, second, first)
    row_b = np.where(swap, first, second)
    rank_a = judgments.score[row_a]
    rank_b = judgments.score[row_b]
    outcome = np.sign(rank_b - rank_a).astype(np.int8)  # lower rank is better
    original_a = judgments.original[row_a]
    original_b = judgments.original[row_b]
    has_original = (original_a >= 0) & (original_b >= 0)
    original_outcome = np.where(
        has_original,
        np.sign(
            judgments.score[np.maximum(original_b, 0)] - judgments.score[np.maximum(original_a, 0)]
        ),
        0,
    ).astype(np.int8)
    return Comparisons(
        annotator=judgments.annotator[row_a],
        segment=judgments.segment[row_a],
        screen=judgments.screen[row_a],
        system_a=judgments.system[row_a],
        system_b=judgments.system[row_b],
        outcome=outcome,
        item_type=np.maximum(judgments.item_type[row_a], judgments.item_type[row_b]),
        row_a=row_a,
        row_b=row_b,
        has_original=has_original,
        original_outcome=original_outcome,
        n_systems=judgments.n_systems,
    )


@dataclass(frozen=True)
class NoWorseShares:
    """Per system: on how many screens it was ranked no worse than every other output shown.

    ``n`` counts the screens (with at least one other output) that showed the system, ``n_best``
    those where its rank was the screen's best rank (ties included), ``share = n_best / n``.
    """

    n: IntArray
    n_best: IntArray
    share: FloatArray


def no_worse_than_others(judgments: Judgments) -> NoWorseShares:
    """Share of screens where a system was ranked no worse than all competitors (REAL rows).

    share(s) = #{screens showing s where rank(s) = min rank on the screen} / #{screens showing s}
    (Callison-Burch et al. 2009; the human ranking of Kos & Bojar 2009, seed 003).
    """
    real = judgments.select(judgments.rows_of(ItemType.REAL))
    _, screen_code, screen_size = np.unique(real.screen, return_inverse=True, return_counts=True)
    best = np.full(screen_size.shape[0], np.inf)
    np.minimum.at(best, screen_code, real.score)
    contested = screen_size[screen_code] >= 2
    is_best = contested & (real.score <= best[screen_code])
    n_systems = judgments.n_systems
    n = np.bincount(real.system[contested], minlength=n_systems).astype(np.int64)
    n_best = np.bincount(real.system[is_best], minlength=n_systems).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, n_best / np.maximum(n, 1), np.nan)
    return NoWorseShares(n=n, n_best=n_best, share=share)


@dataclass(frozen=True)
class PairwiseCounts:
    """``wins[a, b]``: comparisons where a was ranked better than b; ``ties[a, b]`` = ties."""

    wins: IntArray
    ties: IntArray

    @property
    def losses(self) -> IntArray:
        """``losses[a, b] = wins[b, a]``."""
        return self.wins.T


def pairwise_counts(comparisons: Comparisons) -> PairwiseCounts:
    """Win and tie counts of every ordered pair of systems (vectorised with ``bincount``)."""
    y = comparisons.n_systems
    a = comparisons.system_a
    b = comparisons.system_b
    outcome = comparisons.outcome
    winner = np.where(outcome > 0, a, b)
    loser = np.where(outcome > 0, b, a)
    decided = outcome != 0
    wins = np.bincount(winner[decided] * y + loser[decided], minlength=y * y).reshape(y, y)
    tie_counts = np.bincount(a[~decided] * y + b[~decided], minlength=y * y).reshape(y, y)
    return PairwiseCounts(
        wins=wins.astype(np.int64), ties=(tie_counts + tie_counts.T).astype(np.int64)
    )


@dataclass(frozen=True)
class ExpectedWins:
    """Expected Wins per system and the pairwise counts behind it.

    ``n_opponents`` counts the opponents with at least one decided (non-tie) comparison; the
    score is NaN for a system without any.
    """

    score: FloatArray
    n_opponents: IntArray
    counts: PairwiseCounts


def expected_wins(comparisons: Comparisons) -> ExpectedWins:
    """Expected Wins (Koehn 2012; WMT 2013): the mean over opponents of the share of wins.

    EW(a) = (1 / |O_a|) Σ_{b ∈ O_a} wins(a, b) / (wins(a, b) + losses(a, b)), where O_a are the
    opponents with at least one decided comparison; ties are ignored. Pass REAL comparisons only
    (``comparisons.select(comparisons.item_type == ItemType.REAL)``) for system rankings.
    """
    counts = pairwise_counts(comparisons)
    score, n_opponents = expected_wins_from_counts(counts.wins)
    return ExpectedWins(score=score, n_opponents=n_opponents, counts=counts)


def expected_wins_from_counts(wins: npt.ArrayLike) -> tuple[FloatArray, IntArray]:
    """Expected Wins and opponent counts from win counts ``wins[..., a, b]`` (a beat b).

    Vectorised over leading axes, so that a bootstrap over segments can sum per-segment win
    counts of every resample and score them all at once with the formula of
    :func:`expected_wins` (which calls this).
    """
    w = np.asarray(wins, dtype=np.float64)
    decided = w + np.swapaxes(w, -1, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(decided > 0, w / np.maximum(decided, 1), 0.0)
    n_opponents = (decided > 0).sum(axis=-1).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(n_opponents > 0, share.sum(axis=-1) / np.maximum(n_opponents, 1), np.nan)
    return score, n_opponents


@dataclass(frozen=True)
class TrueSkillRanking:
    """TrueSkill ratings of the systems with bootstrap rank ranges.

    Attributes:
        mu, sigma: ratings after one pass over all comparisons in a seeded random order.
        rank: 1 = highest μ.
        rank_low, rank_high: the rank range over the bootstrap runs (central ``confidence``
            share of each system's ranks).
        environment: (mu, sigma, beta, tau, draw_probability) of the TrueSkill environment.
        n_comparisons, n_bootstrap, confidence, seed: what produced the numbers.
    """

    mu: FloatArray
    sigma: FloatArray
    rank: IntArray
    rank_low: IntArray
    rank_high: IntArray
    environment: tuple[float, float, float, float, float]
    n_comparisons: int
    n_bootstrap: int
    confidence: float
    seed: int | None


def trueskill_ranking(
    comparisons: Comparisons,
    *,
    n_bootstrap: int = 1000,
    confidence: float = DEFAULT_CONFIDENCE,
    rng: np.random.Generator | int | None = None,
    environment: trueskill.TrueSkill | None = None,
) -> TrueSkillRanking:
    """TrueSkill (Herbrich et al. 2007) on pairwise comparisons, as WMT 2014 (Sakaguchi et al.).

    Every system starts at the environment's (μ₀, σ₀): the ``trueskill`` package defaults
    (μ₀ = 25, σ₀ = 25/3, β = σ₀/2, τ = σ₀/100, draw probability 0.10) unless an environment is
    passed. Each comparison is a two-player match, a tie a draw. The point ratings come from one
    pass in a seeded random order (the first draw of the seed: ``permutation(n)``); rank ranges
    from ``n_bootstrap`` runs on comparisons resampled with replacement, dropping
    (1 − confidence)/2 of each system's bootstrap ranks at either end.

    Each update is ``trueskill.TrueSkill.rate_1vs1``'s closed form (see :func:`rate_1vs1`), run
    for all bootstrap replicates at once: the package takes about 0.5 ms per call, which would
    make 1,000 runs over a campaign take hours. TrueSkill is sequential by nature, so the loop
    runs over comparison positions (each step vectorised over the replicates).
    """
    # Default parameters of the package; its scipy backend gives the exact normal functions that
    # the vectorised update uses too (the built-in backend approximates erfc to ~1e-7).
    env = environment if environment is not None else trueskill.TrueSkill(backend="scipy")
    generator, seed = resolve_rng(rng)
    n = len(comparisons)
    y = comparisons.n_systems
    mu, sigma = _rate_replicas(comparisons, env, generator, n_bootstrap)
    # Codes without a single comparison (e.g. references shown as outputs, which only meet QC
    # screens) have no rating: they are left out of the ranks (rank 0) instead of sitting at the
    # prior mean between the real systems.
    present = np.zeros(y, dtype=bool)
    present[comparisons.system_a] = True
    present[comparisons.system_b] = True
    rank = _ranks(mu[0:1], present)[0]
    boot_ranks = _ranks(mu[1:], present) if n_bootstrap else rank[np.newaxis]
    low = np.quantile(boot_ranks, (1 - confidence) / 2, axis=0, method="lower")
    high = np.quantile(boot_ranks, (1 + confidence) / 2, axis=0, method="higher")
    return TrueSkillRanking(
        mu=np.where(present, mu[0], np.nan),
        sigma=np.where(present, sigma[0], np.nan),
        rank=rank,
        rank_low=np.asarray(low, dtype=np.int64),
        rank_high=np.asarray(high, dtype=np.int64),
        environment=(
            float(env.mu),
            float(env.sigma),
            float(env.beta),
            float(env.tau),
            float(env.draw_probability),
        ),
        n_comparisons=n,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        seed=seed,
    )


def _rate_replicas(
    comparisons: Comparisons,
    env: trueskill.TrueSkill,
    generator: np.random.Generator,
    n_bootstrap: int,
) -> tuple[FloatArray, FloatArray]:
    """(μ, σ) of every system after one pass per replica, each ``(n_bootstrap + 1, n_systems)``.

    Replica 0 plays the comparisons in a random order (the generator's first draw,
    ``permutation(n)``); replicas 1.. play comparisons drawn with replacement, drawn block by
    block as the pass goes.
    """
    n = len(comparisons)
    y = comparisons.n_systems
    decided_b = comparisons.outcome < 0
    winner = np.where(decided_b, comparisons.system_b, comparisons.system_a)
    loser = np.where(decided_b, comparisons.system_a, comparisons.system_b)
    drawn = comparisons.outcome == 0
    replicas = n_bootstrap + 1
    mu = np.full((replicas, y), float(env.mu))
    sigma = np.full((replicas, y), float(env.sigma))
    # Flat positions: replica r's rating of system s is element r·y + s.
    base = np.arange(replicas, dtype=np.int64) * y
    permutation = generator.permutation(n)
    flat_mu = mu.reshape(-1)
    flat_sigma = sigma.reshape(-1)
    parameters = _parameters(env)
    block = max(1, min(n, 4_000_000 // replicas))
    for start in range(0, n, block):
        steps = min(block, n - start)
        # Row 0 replays the permutation (the point estimate); rows 1.. are bootstrap draws.
        index = np.empty((steps, replicas), dtype=np.int64)
        index[:, 0] = permutation[start : start + steps]
        index[:, 1:] = generator.integers(0, n, size=(steps, n_bootstrap))
        for step in range(steps):
            chosen = index[step]
            w = base + winner[chosen]
            lo = base + loser[chosen]
            new = _rate(
                parameters, flat_mu[w], flat_sigma[w], flat_mu[lo], flat_sigma[lo], drawn[chosen]
            )
            flat_mu[w], flat_sigma[w], flat_mu[lo], flat_sigma[lo] = new
    return mu, sigma


def _ranks(mu: FloatArray, present: BoolArray) -> IntArray:
    """Rank of every present system per row (1 = highest μ; equal μ broken by system code);
    0 for systems that are not present."""
    keyed = np.where(present[np.newaxis], -mu, np.inf)
    order = np.argsort(keyed, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, mu.shape[1] + 1)[np.newaxis], axis=1)
    out: IntArray = np.where(present[np.newaxis], ranks, 0).astype(np.int64)
    return out


def rate_1vs1(
    env: trueskill.TrueSkill,
    mu_winner: FloatArray,
    sigma_winner: FloatArray,
    mu_loser: FloatArray,
    sigma_loser: FloatArray,
    drawn: BoolArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Vectorised ``env.rate_1vs1(winner, loser, drawn)``: new (μ_w, σ_w, μ_l, σ_l).

    With σ² ← σ² + τ² (dynamics), c² = 2β² + σ_w² + σ_l², t = (μ_w − μ_l)/c and ε = the draw
    margin (``trueskill.calc_draw_margin`` for two players) over c, the winner moves by
    +σ_w²/c · v, the loser by −σ_l²/c · v and each σ² ← σ²(1 − σ²/c² · w), where for a win
    v = φ(t − ε)/Φ(t − ε), w = v(v + t − ε), and for a draw (the first player in place of the
    winner) v = (φ(−ε − t) − φ(ε − t))/(Φ(ε − t) − Φ(−ε − t)), w = v² + ((ε − t)φ(ε − t) +
    (ε + t)φ(ε + t))/(Φ(ε − t) − Φ(−ε − t)) (Herbrich et al. 2007, two-player case).
    """
    return _rate(_parameters(env), mu_winner, sigma_winner, mu_loser, sigma_loser, drawn)


def _parameters(env: trueskill.TrueSkill) -> tuple[float, float, float]:
    """(β, τ, draw margin for two players) of a TrueSkill environment."""
    margin = trueskill.calc_draw_margin(float(env.draw_probability), 2, env=env)
    return float(env.beta), float(env.tau), float(margin)


def _rate(
    parameters: tuple[float, float, float],
    mu_winner: FloatArray,
    sigma_winner: FloatArray,
    mu_loser: FloatArray,
    sigma_loser: FloatArray,
    drawn: BoolArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    beta, tau, margin = parameters
    var_w = sigma_winner**2 + tau**2
    var_l = sigma_loser**2 + tau**2
    c = np.sqrt(2 * beta**2 + var_w + var_l)
    t = (mu_winner - mu_loser) / c
    v, w = _v_w(t, margin / c, drawn)
    return (
        mu_winner + var_w / c * v,
        np.sqrt(var_w * (1 - var_w / c**2 * w)),
        mu_loser - var_l / c * v,
        np.sqrt(var_l * (1 - var_l / c**2 * w)),
    )


def _v_w(t: FloatArray, eps: FloatArray, draw: BoolArray) -> tuple[FloatArray, FloatArray]:
    """The additive (v) and multiplicative (w) correction functions of TrueSkill.

    φ/Φ is computed directly where Φ is far from underflow and as √(2/π)/erfcx(−x/√2) in the
    far tail (an upset between very distant ratings), where φ and Φ would both underflow.
    """
    x = t - eps
    with np.errstate(divide="ignore", invalid="ignore"):
        v = _pdf(x) / special.ndtr(x)
    tail = x < _TAIL
    if tail.any():
        v[tail] = np.sqrt(2 / np.pi) / special.erfcx(-x[tail] / np.sqrt(2))
    w = v * (v + x)
    if draw.any():
        td, ed = t[draw], eps[draw]
        upper = ed - td
        lower = -ed - td
        # Φ(upper) − Φ(lower), on the side of the distribution that keeps precision.
        denom = np.where(
            lower > 0,
            special.ndtr(-lower) - special.ndtr(-upper),
            special.ndtr(upper) - special.ndtr(lower),
        )
        denom = np.maximum(denom, np.finfo(np.float64).tiny)
        pdf_upper = _pdf(upper)
        pdf_lower = _pdf(lower)
        v_draw = (pdf_lower - pdf_upper) / denom
        v[draw] = v_draw
        w[draw] = v_draw**2 + (upper * pdf_upper - lower * pdf_lower) / denom
    return v, w


# Below this, Φ(x) < 1e-88 and the direct ratio φ/Φ starts to lose digits.
_TAIL = -20.0
_INV_SQRT_2PI = 1.0 / np.sqrt(2 * np.pi)


def _pdf(x: FloatArray) -> FloatArray:
    return np.asarray(np.exp(-0.5 * x * x) * _INV_SQRT_2PI, dtype=np.float64)
