"""Annotator quality control from the QC items mixed into every task (DESIGN §4).

- bad references: a one-sided test that degraded copies score lower than their originals
  (Graham et al. 2013/2017 and the WMT direct-assessment campaigns; Mathur et al. 2019 §4 filter
  annotators this way);
- repeats: the same output judged twice should get (almost) the same score, the same ranking
  screen the same order (Kendall τ_b between the two rankings, the share of identical orders);
- for ranking protocols the bad-reference test compares ranks: a degraded output should be
  ranked worse than the same annotator ranked its original;
- references shown as outputs: their mean should be high;
- time on task: the sum of the screens' durations with idle time capped.

Every result is per annotator code; a :class:`~evalcore.human.judgments.Judgments` table holds
one criterion, so each result is per annotator and criterion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalcore.human.judgments import (
    BoolArray,
    FloatArray,
    IntArray,
    ItemType,
    Judgments,
    group_count,
    group_mean_sd,
    group_sum,
)
from evalcore.human.normalisation import Basis, normalise
from evalcore.human.rankings import Comparisons

QCTest = Literal["paired_t", "wilcoxon", "mannwhitney"]
QCSpace = Literal["raw", "z"]
#: What the ranking bad-reference test compares: the rank r (1 = best) or the rank normalised
#: by the screen's size, (r − 1)/(k − 1) ∈ [0, 1].
RankSpace = Literal["rank", "normalised_rank"]

DEFAULT_THRESHOLD = 0.05
DEFAULT_IDLE_CAP = 300.0
#: Repeat tolerance on a 1–5 scale (adequacy, fluency): the same score ±1 (DESIGN §4).
TOLERANCE_1_TO_5 = 1.0
#: Repeat tolerance on a 0–100 scale (direct assessment): the same score ±10 (DESIGN §4).
TOLERANCE_0_TO_100 = 10.0


@dataclass(frozen=True)
class QCPairs:
    """Matched (original, copy) score pairs of one QC item type, grouped by annotator.

    ``annotator[i]`` judged the original with score ``original[i]`` and its copy with ``copy[i]``.
    Pairs are sorted by annotator.
    """

    annotator: IntArray
    original: FloatArray
    copy: FloatArray


def qc_pairs(
    judgments: Judgments,
    item_type: ItemType,
    values: FloatArray,
    *,
    where: BoolArray | None = None,
) -> QCPairs:
    """The (original, copy) pairs of ``item_type`` rows that have an original, in ``values`` space.

    Pairs where either value is not finite (z of a degenerate annotator) are dropped; ``where``
    (a mask over rows) restricts the copies further.
    """
    wanted = (judgments.item_type == item_type) & (judgments.original >= 0)
    if where is not None:
        wanted &= where
    rows = np.flatnonzero(wanted)
    original = values[judgments.original[rows]]
    copy = values[rows]
    keep = np.isfinite(original) & np.isfinite(copy)
    rows, original, copy = rows[keep], original[keep], copy[keep]
    order = np.argsort(judgments.annotator[rows], kind="stable")
    return QCPairs(
        annotator=judgments.annotator[rows][order], original=original[order], copy=copy[order]
    )


@dataclass(frozen=True)
class BadReferenceTest:
    """Per-annotator outcome of the one-sided test "bad references score lower than originals".

    Attributes:
        test: "paired_t", "wilcoxon" (signed-rank) or "mannwhitney" (unpaired U).
        space: "raw" or "z": the scores the test was run on ("rank" or "normalised_rank" for
            :func:`ranking_bad_reference_test`).
        threshold: the p-value at or below which an annotator passes.
        n: matched (original, bad reference) pairs per annotator.
        statistic: t (paired t), the signed-rank statistic W⁺ (Wilcoxon) or U of the originals
            (Mann–Whitney), as scipy reports them; NaN when not computable.
        p_value: one-sided p-value; NaN when the test cannot be computed (fewer than two pairs, or
            no non-zero difference).
        mean_difference: mean of (original − bad reference); for ranks, mean of
            (rank of the bad reference − rank of the original): positive is as expected.
        passed: ``p_value <= threshold``; an annotator without a p-value does not pass.
    """

    test: QCTest
    space: QCSpace | RankSpace
    threshold: float
    n: IntArray
    statistic: FloatArray
    p_value: FloatArray
    mean_difference: FloatArray
    passed: BoolArray


def bad_reference_test(
    judgments: Judgments,
    *,
    test: QCTest = "paired_t",
    space: QCSpace = "raw",
    threshold: float = DEFAULT_THRESHOLD,
    basis: Basis = "real_and_repeat",
) -> BadReferenceTest:
    """Per annotator, test H₁: originals score higher than their bad references (one-sided).

    With d_i = x_original − x_bad over an annotator's n matched pairs:

    - "paired_t" (default; the original DA scripts): t = d̄ / (s_d / √n), p = P(T_{n−1} ≥ t),
      identical to ``scipy.stats.ttest_rel(original, bad, alternative="greater")``;
    - "wilcoxon": ``scipy.stats.wilcoxon(original, bad, alternative="greater")`` (signed-rank,
      zero differences dropped, scipy's default);
    - "mannwhitney": ``scipy.stats.mannwhitneyu(original, bad, alternative="greater")``, the
      unpaired rank-sum test that Appraise and the WMT campaigns used.

    ``space="z"`` runs the test on z-scores from :func:`~evalcore.human.normalisation.normalise`
    with ``basis``. Only BAD_REF rows with an ``original`` pointer take part.

    Standardised judgments (``judgments.standardised``) have no raw scores: the test runs on
    the given z-scores whichever ``space`` is asked, and says ``space="z"``. Its p-value is the
    one of the raw scores all the same where each annotator's scores were standardised by one
    mean and SD (as WMT's are): the three tests are unchanged by an increasing linear map of
    an annotator's scores (t is scale-free; the rank tests see the same order).
    """
    if test not in ("paired_t", "wilcoxon", "mannwhitney"):
        raise ValueError(f"unknown QC test {test!r}; use 'paired_t', 'wilcoxon' or 'mannwhitney'")
    if space in ("raw", "z") and judgments.standardised:
        space = "z"
    if space == "raw":
        values = judgments.score
    elif space == "z":
        values = normalise(judgments, basis=basis).z
    else:
        raise ValueError(f"unknown QC score space {space!r}; use 'raw' or 'z'")
    pairs = qc_pairs(judgments, ItemType.BAD_REF, values)
    n, statistic, p_value, mean_difference = _one_sided(pairs, judgments.n_annotators, test)
    return BadReferenceTest(
        test=test,
        space=space,
        threshold=threshold,
        n=n,
        statistic=statistic,
        p_value=p_value,
        mean_difference=mean_difference,
        passed=p_value <= threshold,  # NaN compares False: no evidence, no pass
    )


def _one_sided(
    pairs: QCPairs, n_annotators: int, test: QCTest
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """n, statistic, p and mean difference per annotator of H₁: ``original`` > ``copy``."""
    difference = pairs.original - pairs.copy
    mean_difference, sd_difference, n = group_mean_sd(pairs.annotator, difference, n_annotators)
    if test == "paired_t":
        statistic, p_value = _paired_t(mean_difference, sd_difference, n)
    else:
        scipy_test = _wilcoxon if test == "wilcoxon" else _mannwhitney
        statistic, p_value = _per_annotator(pairs, n_annotators, scipy_test)
    return n, statistic, p_value, mean_difference


@dataclass(frozen=True)
class RankingBadReferenceTest(BadReferenceTest):
    """:class:`BadReferenceTest` on ranks, plus the pairs that could not take part.

    ``n_uninformative`` counts, per annotator, bad references whose screen held nothing but bad
    references: every output was degraded, so their ranks say nothing about the degradation
    (the screen is ranked relative to itself) and they are left out of the test.
    """

    n_uninformative: IntArray


def ranking_bad_reference_test(
    judgments: Judgments,
    *,
    test: QCTest = "paired_t",
    space: RankSpace = "rank",
    threshold: float = DEFAULT_THRESHOLD,
) -> RankingBadReferenceTest:
    """Per annotator, test H₁: a degraded output is ranked worse than its original (one-sided).

    For ranking protocols ``score`` is the rank on the screen (1 = best). Each BAD_REF row is
    paired with the rank the same annotator gave the original output on the original screen;
    with r the rank (``space="rank"``) or (r − 1)/(k − 1) on a screen of k outputs
    (``space="normalised_rank"``, so screens of different sizes weigh alike; a screen of one
    output has no normalised rank), d_i = r_bad − r_original and

    - "paired_t" (default): ``scipy.stats.ttest_rel(r_bad, r_original, alternative="greater")``;
    - "wilcoxon": ``scipy.stats.wilcoxon(r_bad, r_original, alternative="greater")``;
    - "mannwhitney": ``scipy.stats.mannwhitneyu(r_bad, r_original, alternative="greater")``.

    (The core runs the score protocols' test on −r, "originals score higher", which gives
    exactly these statistics and p-values.) Only bad references on a screen that also shows
    an output that is not degraded (a repeat or a real output) are informative; the others
    are counted in ``n_uninformative``.
    """
    if test not in ("paired_t", "wilcoxon", "mannwhitney"):
        raise ValueError(f"unknown QC test {test!r}; use 'paired_t', 'wilcoxon' or 'mannwhitney'")
    if space not in ("rank", "normalised_rank"):
        raise ValueError(f"unknown rank space {space!r}; use 'rank' or 'normalised_rank'")
    _, screen = np.unique(judgments.screen, return_inverse=True)
    # The outputs ranked on a screen: a merged answer's rows crediting other systems are no
    # more outputs (counted, they would make every rank on the screen look better).
    size = np.bincount(screen[judgments.answers], minlength=int(screen.max(initial=-1)) + 1)
    rank = judgments.score
    if space == "normalised_rank":
        k = size[screen].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            rank = np.where(k > 1, (rank - 1.0) / (k - 1.0), np.nan)
    bad = judgments.item_type == ItemType.BAD_REF
    intact = np.bincount(screen[~bad & judgments.answers], minlength=size.shape[0])
    informative = intact[screen] > 0
    pairs = qc_pairs(judgments, ItemType.BAD_REF, -rank, where=informative)
    n, statistic, p_value, mean_difference = _one_sided(pairs, judgments.n_annotators, test)
    linked = bad & (judgments.original >= 0) & ~informative
    return RankingBadReferenceTest(
        test=test,
        space=space,
        threshold=threshold,
        n=n,
        statistic=statistic,
        p_value=p_value,
        mean_difference=mean_difference,
        passed=p_value <= threshold,
        n_uninformative=group_count(judgments.annotator[linked], judgments.n_annotators),
    )


def _paired_t(mean: FloatArray, sd: FloatArray, n: IntArray) -> tuple[FloatArray, FloatArray]:
    """Vectorised one-sided paired t over all annotators at once, with scipy's edge cases:
    s_d = 0 gives t = ±inf (p = 0 or 1) when d̄ ≠ 0 and NaN when d̄ = 0; n < 2 gives NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    t = np.where(n >= 2, t, np.nan)
    p = np.where(np.isnan(t), np.nan, stats.t.sf(t, np.maximum(n - 1, 1)))
    return t.astype(np.float64), p.astype(np.float64)


ScipyTest = Callable[[FloatArray, FloatArray], tuple[float, float]]


def _wilcoxon(original: FloatArray, copy: FloatArray) -> tuple[float, float]:
    if not (original != copy).any():
        return float("nan"), float("nan")  # every difference is zero: nothing to rank
    result = stats.wilcoxon(original, copy, alternative="greater")
    return float(result.statistic), float(result.pvalue)


def _mannwhitney(original: FloatArray, copy: FloatArray) -> tuple[float, float]:
    result = stats.mannwhitneyu(original, copy, alternative="greater")
    return float(result.statistic), float(result.pvalue)


def _per_annotator(
    pairs: QCPairs, n_annotators: int, test: ScipyTest
) -> tuple[FloatArray, FloatArray]:
    # The rank tests have no closed form that vectorises across groups of different sizes, so
    # they run once per annotator (hundreds of calls), never once per judgment.
    statistic = np.full(n_annotators, np.nan)
    p_value = np.full(n_annotators, np.nan)
    size = pairs.annotator.size
    boundaries = np.flatnonzero(np.diff(pairs.annotator) != 0) + 1
    starts = np.r_[0, boundaries] if size else boundaries
    ends = np.r_[boundaries, size] if size else boundaries
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if end - start < 2:
            continue
        annotator = int(pairs.annotator[start])
        statistic[annotator], p_value[annotator] = test(
            pairs.original[start:end], pairs.copy[start:end]
        )
    return statistic, p_value


@dataclass(frozen=True)
class RepeatConsistency:
    """Per-annotator agreement of repeats with their originals (raw scores).

    Attributes:
        tolerance: the largest |repeat − original| that counts as the same score.
        n: repeat pairs per annotator.
        share_within: share of pairs with |repeat − original| ≤ tolerance (NaN when n = 0).
        pearson: Pearson r between originals and repeats (NaN when n < 2 or a side is constant).
    """

    tolerance: float
    n: IntArray
    share_within: FloatArray
    pearson: FloatArray


def repeat_consistency(judgments: Judgments, *, tolerance: float) -> RepeatConsistency:
    """Share of repeats within ``tolerance`` of the original, and Pearson r, per annotator.

    Use ``TOLERANCE_1_TO_5`` (±1) for 1–5 scales and ``TOLERANCE_0_TO_100`` (±10) for 0–100.
    r = Σ (x − x̄)(y − ȳ) / sqrt(Σ (x − x̄)² Σ (y − ȳ)²) over the annotator's (original, repeat)
    pairs, as ``scipy.stats.pearsonr``. Standardised judgments have no share (NaN): the
    tolerance is in points of the raw scale; r is the raw scores' all the same (it is unchanged
    by each annotator's standardisation).
    """
    pairs = qc_pairs(judgments, ItemType.REPEAT, judgments.score)
    n_annotators = judgments.n_annotators
    n = group_count(pairs.annotator, n_annotators)
    within = group_sum(
        pairs.annotator,
        (np.abs(pairs.copy - pairs.original) <= tolerance).astype(float),
        n_annotators,
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, within / np.maximum(n, 1), np.nan)
    if judgments.standardised:
        share = np.full(n_annotators, np.nan)
    return RepeatConsistency(
        tolerance=tolerance,
        n=n,
        share_within=share,
        pearson=grouped_pearson(pairs.annotator, pairs.original, pairs.copy, n_annotators),
    )


def grouped_pearson(keys: IntArray, x: FloatArray, y: FloatArray, n_groups: int) -> FloatArray:
    """Pearson r of (x, y) within every group, vectorised (centred sums, so no cancellation)."""
    mean_x, _, n = group_mean_sd(keys, x, n_groups)
    mean_y, _, _ = group_mean_sd(keys, y, n_groups)
    dx = x - mean_x[keys]
    dy = y - mean_y[keys]
    sxy = group_sum(keys, dx * dy, n_groups)
    sxx = group_sum(keys, dx * dx, n_groups)
    syy = group_sum(keys, dy * dy, n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    r = np.where((n >= 2) & (sxx > 0) & (syy > 0), r, np.nan)
    return np.clip(r, -1.0, 1.0)


@dataclass(frozen=True)
class RankingRepeatConsistency:
    """Per-annotator agreement of repeated ranking screens with their originals.

    Pairwise: ``n`` counts the pairwise comparisons on REPEAT screens that have an original,
    ``n_same`` those with the same outcome (better, worse or tie) as on the original screen;
    ``share_same = n_same / n`` (NaN when n = 0).

    Per screen (the outputs of a repeated screen that have an original, ranked twice):
    ``n_screens`` repeated screens with at least one such pair, ``n_identical`` of them ranked
    in exactly the same order (every pair's outcome, ties included, as on the original screen),
    ``share_identical = n_identical / n_screens``; ``kendall_tau`` = mean over screens of
    Kendall's τ_b between the original and the repeated ranks (``scipy.stats.kendalltau``),
    ``n_tau`` the screens where τ_b is defined (neither ranking all ties).
    """

    n: IntArray
    n_same: IntArray
    share_same: FloatArray
    n_screens: IntArray
    n_identical: IntArray
    share_identical: FloatArray
    n_tau: IntArray
    kendall_tau: FloatArray


def ranking_repeat_consistency(
    comparisons: Comparisons, *, n_annotators: int
) -> RankingRepeatConsistency:
    """For ranking protocols: how often each annotator repeated the order of a screen.

    Pairwise shares are the per-annotator counterpart of the intra-annotator κ
    (:func:`evalcore.human.agreement.ranking_kappa` with ``kind="intra"``). Per repeated
    screen, with C (D) the pairs ordered the same (opposite) way on both screens, n₀ the pairs,
    n₁ (n₂) the pairs tied on the repeat (original): τ_b = (C − D) / √((n₀ − n₁)(n₀ − n₂)).
    Vectorised over comparisons with ``bincount``.
    """
    repeats = (comparisons.item_type == ItemType.REPEAT) & comparisons.has_original
    annotator = comparisons.annotator[repeats]
    outcome = comparisons.outcome[repeats].astype(np.int64)
    original = comparisons.original_outcome[repeats].astype(np.int64)
    same = outcome == original
    n = group_count(annotator, n_annotators)
    n_same = group_count(annotator[same], n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, n_same / np.maximum(n, 1), np.nan)

    screens, screen = np.unique(comparisons.screen[repeats], return_inverse=True)
    n_groups = screens.shape[0]
    pairs = np.bincount(screen, minlength=n_groups)
    agreeing = np.bincount(screen[same], minlength=n_groups)
    product = outcome * original
    concordant = np.bincount(screen[product > 0], minlength=n_groups)
    discordant = np.bincount(screen[product < 0], minlength=n_groups)
    tied_repeat = np.bincount(screen[outcome == 0], minlength=n_groups)
    tied_original = np.bincount(screen[original == 0], minlength=n_groups)
    denominator = (pairs - tied_repeat) * (pairs - tied_original)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(denominator > 0, (concordant - discordant) / np.sqrt(denominator), np.nan)
    screen_annotator = np.zeros(n_groups, dtype=np.int64)
    screen_annotator[screen] = annotator
    n_screens = group_count(screen_annotator, n_annotators)
    n_identical = group_count(screen_annotator[agreeing == pairs], n_annotators)
    defined = np.isfinite(tau)
    mean_tau, _, n_tau = group_mean_sd(screen_annotator[defined], tau[defined], n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        share_identical = np.where(n_screens > 0, n_identical / np.maximum(n_screens, 1), np.nan)
    return RankingRepeatConsistency(
        n=n,
        n_same=n_same,
        share_same=share,
        n_screens=n_screens,
        n_identical=n_identical,
        share_identical=share_identical,
        n_tau=n_tau,
        kendall_tau=mean_tau,
    )


@dataclass(frozen=True)
class ReferenceScores:
    """Per-annotator mean raw score on references shown as outputs (expected high)."""

    n: IntArray
    mean: FloatArray


def reference_scores(judgments: Judgments) -> ReferenceScores:
    """Mean raw score and count of each annotator's REFERENCE rows (the mean of the given
    z-scores for standardised judgments)."""
    rows = judgments.rows_of(ItemType.REFERENCE)
    mean, _, n = group_mean_sd(
        judgments.annotator[rows], judgments.score[rows], judgments.n_annotators
    )
    return ReferenceScores(n=n, mean=mean)


@dataclass(frozen=True)
class TimeOnTask:
    """Per-annotator working time.

    Attributes:
        idle_cap: the most seconds one screen may count for.
        seconds: Σ min(seconds_screen, idle_cap) over the annotator's screens with a known time.
        n_screens: screens the annotator answered.
        n_unknown: screens without a time (not counted in ``seconds``).
        n_capped: screens whose time was longer than the cap.
    """

    idle_cap: float
    seconds: FloatArray
    n_screens: IntArray
    n_unknown: IntArray
    n_capped: IntArray


def time_on_task(judgments: Judgments, *, idle_cap: float = DEFAULT_IDLE_CAP) -> TimeOnTask:
    """Time on task: the sum over an annotator's screens of min(seconds, idle_cap).

    Capping stops a break (a screen left open over lunch) from counting as work. Each screen
    counts once, however many rows it holds.
    """
    _, first = np.unique(judgments.screen, return_index=True)
    annotator = judgments.annotator[first]
    seconds = judgments.seconds[first]
    known = np.isfinite(seconds)
    n_annotators = judgments.n_annotators
    capped_seconds = np.minimum(np.where(known, seconds, 0.0), idle_cap)
    return TimeOnTask(
        idle_cap=idle_cap,
        seconds=group_sum(annotator, capped_seconds, n_annotators),
        n_screens=group_count(annotator, n_annotators),
        n_unknown=group_count(annotator[~known], n_annotators),
        n_capped=group_count(annotator[known & (seconds > idle_cap)], n_annotators),
    )


@dataclass(frozen=True)
class AnnotatorQC:
    """Everything QC says about each annotator; ``passed`` is the bad-reference verdict."""

    bad_reference: BadReferenceTest
    repeats: RepeatConsistency
    references: ReferenceScores
    time: TimeOnTask

    @property
    def passed(self) -> BoolArray:
        """Annotators whose bad-reference test passed (indexed by annotator code)."""
        return self.bad_reference.passed


def annotator_qc(
    judgments: Judgments,
    *,
    tolerance: float,
    test: QCTest = "paired_t",
    space: QCSpace = "raw",
    threshold: float = DEFAULT_THRESHOLD,
    basis: Basis = "real_and_repeat",
    idle_cap: float = DEFAULT_IDLE_CAP,
) -> AnnotatorQC:
    """All annotator QC at once: :func:`bad_reference_test`, :func:`repeat_consistency`,
    :func:`reference_scores` and :func:`time_on_task` with the given settings."""
    return AnnotatorQC(
        bad_reference=bad_reference_test(
            judgments, test=test, space=space, threshold=threshold, basis=basis
        ),
        repeats=repeat_consistency(judgments, tolerance=tolerance),
        references=reference_scores(judgments),
        time=time_on_task(judgments, idle_cap=idle_cap),
    )


@dataclass(frozen=True)
class RankingQC:
    """Everything QC says about each annotator of a ranking protocol; ``passed`` is the
    bad-reference verdict on ranks. ``references`` holds the mean rank (1 = best) that the
    annotator gave references shown as outputs (expected near 1)."""

    bad_reference: RankingBadReferenceTest
    repeats: RankingRepeatConsistency
    references: ReferenceScores
    time: TimeOnTask

    @property
    def passed(self) -> BoolArray:
        """Annotators whose bad-reference test passed (indexed by annotator code)."""
        return self.bad_reference.passed


def ranking_qc(
    judgments: Judgments,
    *,
    comparisons: Comparisons,
    test: QCTest = "paired_t",
    space: RankSpace = "rank",
    threshold: float = DEFAULT_THRESHOLD,
    idle_cap: float = DEFAULT_IDLE_CAP,
) -> RankingQC:
    """All annotator QC of a ranking protocol: :func:`ranking_bad_reference_test`,
    :func:`ranking_repeat_consistency` (on ``comparisons``, those of
    :func:`~evalcore.human.rankings.pairwise_comparisons` of the same table),
    :func:`reference_scores` (mean ranks) and :func:`time_on_task`."""
    return RankingQC(
        bad_reference=ranking_bad_reference_test(
            judgments, test=test, space=space, threshold=threshold
        ),
        repeats=ranking_repeat_consistency(comparisons, n_annotators=judgments.n_annotators),
        references=reference_scores(judgments),
        time=time_on_task(judgments, idle_cap=idle_cap),
    )
