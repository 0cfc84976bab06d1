"""Human system scores, pairwise significance between systems and WMT clusters (DESIGN §6).

System score = mean over its segments of the segment scores (each the mean of that segment's
judgments), in raw, mean-shifted or z space, with 95% confidence intervals from the t-distribution
(Koehn §8.3.1) and from the bootstrap over segments (Koehn §8.3.3; the resampling itself is
:mod:`evalcore.stats.resampling`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalcore.human.judgments import BoolArray, FloatArray, IntArray, ItemType, Judgments
from evalcore.human.normalisation import Normalised, SegmentScores, Space, segment_scores
from evalcore.human.rankings import PairwiseCounts
from evalcore.stats.classical import t_interval
from evalcore.stats.resampling import (
    bootstrap_ci,
    mean_score,
    paired_approximate_randomization,
    paired_bootstrap,
    resolve_rng,
)

SignificanceTest = Literal["sign", "wilcoxon", "mannwhitney", "bootstrap", "ar"]

DEFAULT_CONFIDENCE = 0.95
DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class SystemScores:
    """Per-system human scores, indexed by system code.

    Attributes:
        space: the score space of ``score``, the intervals and ``segments``.
        n_judgments: judgments that entered (rows of included annotators, finite in ``space``).
        n_segments: segments with at least one such judgment.
        mean_raw, mean_shifted, mean_z: system score in each space (mean of segment means).
        score: the system score in ``space``.
        t_low, t_high: x̄ ∓ t·s/√n over segment scores (Koehn 8.13); NaN for n < 2.
        boot_low, boot_high: percentile bootstrap interval over segments.
        confidence, n_bootstrap, seed: the settings that reproduce the intervals.
        included: the annotators whose judgments entered (by annotator code).
        segments: the segment scores in ``space`` (input of :func:`pairwise_significance`).
    """

    space: Space
    n_judgments: IntArray
    n_segments: IntArray
    mean_raw: FloatArray
    mean_shifted: FloatArray
    mean_z: FloatArray
    score: FloatArray
    t_low: FloatArray
    t_high: FloatArray
    boot_low: FloatArray
    boot_high: FloatArray
    confidence: float
    n_bootstrap: int
    seed: int | None
    included: BoolArray
    segments: SegmentScores


def scored_rows(
    judgments: Judgments, *, include: BoolArray | None = None, include_repeats: bool = True
) -> BoolArray:
    """Rows that enter system scores: REAL (and REPEAT) rows of the included annotators.

    QC rows with an expected answer (references, bad references) never enter (DESIGN §5).
    """
    types = (ItemType.REAL, ItemType.REPEAT) if include_repeats else (ItemType.REAL,)
    rows = judgments.rows_of(*types)
    if include is not None:
        mask = np.asarray(include, dtype=bool)
        if mask.shape != (judgments.n_annotators,):
            raise ValueError(
                f"include must have one entry per annotator ({judgments.n_annotators}), "
                f"got shape {mask.shape}"
            )
        rows &= mask[judgments.annotator]
    return rows


def system_scores(
    judgments: Judgments,
    normalised: Normalised,
    *,
    include: BoolArray | None = None,
    include_repeats: bool = True,
    space: Space = "z",
    confidence: float = DEFAULT_CONFIDENCE,
    n_bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> SystemScores:
    """System scores in all three spaces, with t and bootstrap intervals in ``space``.

    Segment score x_{y,s} = mean of the judgments of system y on segment s; system score
    x̄_y = (1/n_y) Σ_s x_{y,s} over its n_y segments. t interval: x̄ ± t_{(1+q)/2, n−1} · s/√n
    with s the sample standard deviation of the segment scores (Koehn eq. 8.12–8.13). Bootstrap
    interval: segments resampled with replacement ``n_bootstrap`` times (all systems share the
    resamples), the central ``confidence`` share of the resampled means (Koehn §8.3.3).

    ``include`` (a boolean per annotator code) selects the annotators; pass ``qc.passed`` to
    leave out those who failed QC (what :func:`evalcore.human.analysis.analyse_scores` does by
    default). ``None`` includes everyone. Standardised judgments: see :func:`space_known`.
    """
    space_known(judgments, space)
    rows = scored_rows(judgments, include=include, include_repeats=include_repeats)
    per_space = {
        name: segment_scores(judgments, normalised.values(name), rows)
        for name in ("raw", "shifted", "z")
    }
    means = {name: _nanmean_rows(table.mean) for name, table in per_space.items()}
    chosen = per_space[space]
    x = chosen.mean
    present = np.isfinite(x)
    n_segments = present.sum(axis=1).astype(np.int64)
    n_judgments = chosen.count.sum(axis=1).astype(np.int64)
    score = means[space]

    t_low = np.full(judgments.n_systems, np.nan)
    t_high = np.full(judgments.n_systems, np.nan)
    # One t interval per system (tens of calls): the formula lives in evalcore.stats.classical.
    for system in np.flatnonzero(n_segments >= 2):
        interval = t_interval(x[system][present[system]], confidence)
        t_low[system], t_high[system] = interval.low, interval.high
    generator_seed = seed_for_calls(rng) if n_bootstrap else None
    if n_bootstrap and judgments.n_systems and judgments.n_segments:
        stats_matrix = np.stack([np.where(present, x, 0.0), present.astype(np.float64)], axis=-1)
        boot = bootstrap_ci(
            stats_matrix,
            mean_score,
            n_samples=n_bootstrap,
            confidence=confidence,
            rng=generator_seed,
        )
        boot_low = np.atleast_1d(boot.low).astype(np.float64)
        boot_high = np.atleast_1d(boot.high).astype(np.float64)
    else:
        boot_low = np.full(judgments.n_systems, np.nan)
        boot_high = np.full(judgments.n_systems, np.nan)
    everyone = np.ones(judgments.n_annotators, dtype=bool)
    included = everyone if include is None else np.asarray(include, dtype=bool)
    return SystemScores(
        space=space,
        n_judgments=n_judgments,
        n_segments=n_segments,
        mean_raw=means["raw"],
        mean_shifted=means["shifted"],
        mean_z=means["z"],
        score=score,
        t_low=t_low,
        t_high=t_high,
        boot_low=boot_low,
        boot_high=boot_high,
        confidence=confidence,
        n_bootstrap=n_bootstrap,
        seed=generator_seed,
        included=included,
        segments=chosen,
    )


def space_known(judgments: Judgments, space: Space) -> None:
    """Refuse (ValueError) system scores in raw or shifted space of standardised judgments
    (``judgments.standardised``): their scores are z-scores only, so ``mean_raw`` and
    ``mean_shifted`` are NaN, and systems are not ranked on figures the release lacks."""
    if judgments.standardised and space != "z":
        raise ValueError(
            f"the judgments are standardised scores (the raw scores are not known): system "
            f"scores in {space!r} space cannot be computed; use space='z'"
        )


def _nanmean_rows(x: FloatArray) -> FloatArray:
    present = np.isfinite(x)
    count = present.sum(axis=1)
    total = np.where(present, x, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def sign_test_greater(wins: IntArray, losses: IntArray) -> FloatArray:
    """One-sided sign test p-value that the first system is better: P(X ≥ wins), X ~ Bin(n, ½)
    with n = wins + losses (ties dropped; Koehn §8.3.2, eq. 8.16 from the other tail).

    Vectorised over a whole matrix of pairs, and one-sided because clusters need the direction;
    when wins > losses it is half the two-sided p of ``evalcore.stats.classical.sign_test_p``.
    NaN when n = 0.
    """
    wins_arr = np.asarray(wins, dtype=np.int64)
    n = wins_arr + np.asarray(losses, dtype=np.int64)
    p = stats.binom.sf(wins_arr - 1, n, 0.5)
    return np.where(n > 0, p, np.nan).astype(np.float64)


@dataclass(frozen=True)
class PairwiseSignificance:
    """One-sided pairwise significance: ``p_value[a, b]`` is the p-value of "a is better than b".

    Attributes:
        test: the test used.
        p_value: (n_systems, n_systems); NaN on the diagonal and for pairs without data.
        n: segments (or comparisons) each pair's test used; for the rank-sum test the smaller of
            the two samples' sizes.
        statistic: per ordered pair: wins (sign), W⁺ (wilcoxon), U (mannwhitney), the share of
            resamples a won (bootstrap), or score(a) − score(b) (ar).
        n_samples, seed: resamples or trials and the seed, for the random tests.
    """

    test: SignificanceTest
    p_value: FloatArray
    n: IntArray
    statistic: FloatArray
    n_samples: int | None
    seed: int | None

    def beats(self, alpha: float = DEFAULT_ALPHA) -> BoolArray:
        """``beats[a, b]``: a is significantly better than b at level ``alpha`` (p < alpha)."""
        return np.asarray(self.p_value < alpha, dtype=bool)


def pairwise_significance(
    segments: SegmentScores,
    *,
    test: SignificanceTest = "wilcoxon",
    n_samples: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> PairwiseSignificance:
    """One-sided significance of "a better than b" for every ordered pair of systems.

    Inputs are segment scores (``SystemScores.segments``); paired tests use the segments both
    systems have:

    - "sign": wins = #{s: x_a > x_b}, losses = #{s: x_a < x_b}, p = P(Bin(wins + losses, ½) ≥
      wins) (Koehn §8.3.2);
    - "wilcoxon" (default): ``scipy.stats.wilcoxon(x_a − x_b, alternative="greater")``;
    - "mannwhitney": ``scipy.stats.mannwhitneyu(x_a, x_b, alternative="greater")`` on all
      segment scores of each system, unpaired (the WMT DA campaigns' Wilcoxon rank-sum test);
    - "bootstrap": paired bootstrap of the system means (:func:`evalcore.stats.resampling.
      paired_bootstrap`, ``n_samples`` resamples shared by all pairs); p = share of resamples in
      which a does not score higher than b (Koehn 2004: a is better at 95% when it wins 95% of
      the resamples);
    - "ar": paired approximate randomisation (``n_samples`` trials); the test is two-sided, so
      p[a, b] is its p-value when a scored higher and 1 otherwise (conservative).

    A segment missing for one system counts as absent in the resampled means (the statistics are
    [x, 1] on present segments and [0, 0] on absent ones).
    """
    x = segments.mean
    y = x.shape[0]
    pairs = _PairTables(
        p_value=np.full((y, y), np.nan),
        statistic=np.full((y, y), np.nan),
        n=np.zeros((y, y), dtype=np.int64),
    )
    present = np.isfinite(x)
    seed: int | None = None
    if test in ("sign", "wilcoxon"):
        _paired_sign_tests(test, x, present, pairs)
    elif test == "mannwhitney":
        _rank_sum_tests(x, present, pairs)
    elif test in ("bootstrap", "ar"):
        seed = seed_for_calls(rng)
        _resampling_tests(test, x, present, n_samples, seed, pairs)
    else:
        raise ValueError(
            f"unknown test {test!r}; use 'sign', 'wilcoxon', 'mannwhitney', 'bootstrap' or 'ar'"
        )
    np.fill_diagonal(pairs.p_value, np.nan)
    np.fill_diagonal(pairs.n, 0)
    random = test in ("bootstrap", "ar")
    return PairwiseSignificance(
        test=test,
        p_value=pairs.p_value,
        n=pairs.n,
        statistic=pairs.statistic,
        n_samples=n_samples if random else None,
        seed=seed,
    )


@dataclass(frozen=True)
class _PairTables:
    """The (n_systems, n_systems) tables of :class:`PairwiseSignificance`, which the test
    helpers below fill in place."""

    p_value: FloatArray
    statistic: FloatArray
    n: IntArray


def _paired_sign_tests(
    test: SignificanceTest, x: FloatArray, present: BoolArray, pairs: _PairTables
) -> None:
    """Sign or Wilcoxon signed-rank test of every ordered pair on the segments both have."""
    y = x.shape[0]
    p_value, statistic, n = pairs.p_value, pairs.statistic, pairs.n
    for a in range(y):
        common = present[a][np.newaxis] & present  # (y, segments)
        diff = np.where(common, x[a][np.newaxis] - np.where(present, x, 0.0), 0.0)
        wins = ((diff > 0) & common).sum(axis=1)
        losses = ((diff < 0) & common).sum(axis=1)
        n[a] = common.sum(axis=1)
        if test == "sign":
            p_value[a] = sign_test_greater(wins, losses)
            statistic[a] = wins
            continue
        for b in range(y):
            if b == a or not (wins[b] + losses[b]):
                continue
            result = stats.wilcoxon(diff[b][common[b]], alternative="greater")
            p_value[a, b] = float(result.pvalue)
            statistic[a, b] = float(result.statistic)


def _rank_sum_tests(x: FloatArray, present: BoolArray, pairs: _PairTables) -> None:
    """Unpaired Mann-Whitney U test of every ordered pair on all segment scores of each."""
    y = x.shape[0]
    p_value, statistic, n = pairs.p_value, pairs.statistic, pairs.n
    for a in range(y):
        for b in range(y):
            if b == a or not (present[a].any() and present[b].any()):
                continue
            result = stats.mannwhitneyu(x[a][present[a]], x[b][present[b]], alternative="greater")
            p_value[a, b] = float(result.pvalue)
            statistic[a, b] = float(result.statistic)
            n[a, b] = min(int(present[a].sum()), int(present[b].sum()))


def _resampling_tests(
    test: SignificanceTest,
    x: FloatArray,
    present: BoolArray,
    n_samples: int,
    seed: int,
    pairs: _PairTables,
) -> None:
    """Paired bootstrap or approximate randomisation of every pair (one call per system against
    all later ones); pairs without common segments get NaN."""
    y = x.shape[0]
    p_value, statistic, n = pairs.p_value, pairs.statistic, pairs.n
    stats_matrix = np.stack([np.where(present, x, 0.0), present.astype(np.float64)], axis=-1)
    for a in range(y - 1):
        others = np.arange(a + 1, y)
        n[a, others] = n[others, a] = (present[a] & present[others]).sum(axis=1)
        if test == "bootstrap":
            # The same seed for every call: every pair sees the same resamples.
            boot = paired_bootstrap(
                stats_matrix[a], stats_matrix[others], mean_score, n_samples=n_samples, rng=seed
            )
            wins = np.atleast_1d(boot.wins)
            losses = np.atleast_1d(boot.losses)
            p_value[a, others] = 1.0 - wins
            p_value[others, a] = 1.0 - losses
            statistic[a, others] = wins
            statistic[others, a] = losses
        else:
            ar = paired_approximate_randomization(
                stats_matrix[a], stats_matrix[others], mean_score, n_trials=n_samples, rng=seed
            )
            p = np.atleast_1d(ar.p_value)
            delta = np.atleast_1d(ar.observed_delta)  # score(b) − score(a)
            p_value[a, others] = np.where(delta < 0, p, 1.0)
            p_value[others, a] = np.where(delta > 0, p, 1.0)
            statistic[a, others] = -delta
            statistic[others, a] = delta
    no_data = n == 0
    p_value[no_data] = np.nan


def seed_for_calls(rng: np.random.Generator | int | None) -> int:
    """The integer seed handed to :mod:`evalcore.stats.resampling` (and reported with the result).

    An int is used as is; ``None`` becomes a fresh seed; a Generator supplies one from its stream,
    so the same Generator state gives the same numbers. Passing one int to several resampling
    calls makes them draw the same resamples (what paired comparisons of many systems need).
    """
    generator, seed = resolve_rng(rng)
    if seed is None:
        seed = int(generator.integers(0, 2**63 - 1))
    return seed


def comparison_significance(counts: PairwiseCounts) -> PairwiseSignificance:
    """Sign test on the pairwise comparisons of rankings: p[a, b] = P(Bin(n, ½) ≥ wins(a, b)),
    n = wins(a, b) + wins(b, a), ties dropped (Koehn §8.3.2)."""
    wins = counts.wins
    p_value = sign_test_greater(wins, wins.T)
    np.fill_diagonal(p_value, np.nan)
    n = (wins + wins.T + counts.ties).astype(np.int64)
    np.fill_diagonal(n, 0)
    return PairwiseSignificance(
        test="sign",
        p_value=p_value,
        n=n,
        statistic=wins.astype(np.float64),
        n_samples=None,
        seed=None,
    )


@dataclass(frozen=True)
class Clusters:
    """WMT clusters and rank ranges, indexed by system code.

    Attributes:
        order: the ranked system codes, best first (systems without a score left out).
        wins: systems each system beats significantly; losses: systems that beat it.
        rank_low, rank_high: the rank range (losses + 1)..(N − wins); 0 for unranked systems.
        cluster: 1-based cluster number; 0 for unranked systems.
        alpha: the significance level.
    """

    order: IntArray
    wins: IntArray
    losses: IntArray
    rank_low: IntArray
    rank_high: IntArray
    cluster: IntArray
    alpha: float


def wmt_clusters(
    score: FloatArray, significance: PairwiseSignificance, *, alpha: float = DEFAULT_ALPHA
) -> Clusters:
    """Rank ranges and clusters as in the WMT findings (Bojar et al. 2016–2019).

    Systems with a finite score are sorted by score, best first. a beats b when the one-sided
    p-value of "a better than b" is below ``alpha``. With N ranked systems, a system's rank range
    is (losses + 1)..(N − wins). Walking down the sorted list, the cluster that started at
    position j closes after position i when the fewest wins of its members is at least the
    number of systems below i (N − i − 1): every member then beats as many systems as lie below.
    """
    score_arr = np.asarray(score, dtype=np.float64)
    y = score_arr.shape[0]
    ranked = np.isfinite(score_arr)
    order = np.flatnonzero(ranked)[np.argsort(-score_arr[ranked], kind="stable")]
    beats = significance.beats(alpha) & ranked[:, np.newaxis] & ranked[np.newaxis, :]
    np.fill_diagonal(beats, False)
    wins = beats.sum(axis=1).astype(np.int64)
    losses = beats.sum(axis=0).astype(np.int64)
    total = int(order.shape[0])
    rank_low = np.where(ranked, losses + 1, 0).astype(np.int64)
    rank_high = np.where(ranked, total - wins, 0).astype(np.int64)
    cluster = np.zeros(y, dtype=np.int64)
    current = 1
    fewest = np.iinfo(np.int64).max
    # A loop over systems (tens), not judgments: each step needs the previous cluster boundary.
    for position, system in enumerate(order):
        cluster[system] = current
        fewest = min(fewest, int(wins[system]))
        if fewest >= total - position - 1:
            current += 1
            fewest = np.iinfo(np.int64).max
    return Clusters(
        order=order.astype(np.int64),
        wins=wins,
        losses=losses,
        rank_low=rank_low,
        rank_high=rank_high,
        cluster=cluster,
        alpha=alpha,
    )
