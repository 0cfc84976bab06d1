"""System scores with t and bootstrap intervals, pairwise significance against scipy and the
resampling module, and WMT clusters on hand-made significance matrices."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.normalisation import SegmentScores, normalise
from evalcore.human.rankings import PairwiseCounts
from evalcore.human.systems import (
    PairwiseSignificance,
    comparison_significance,
    pairwise_significance,
    sign_test_greater,
    system_scores,
    wmt_clusters,
)
from evalcore.stats.classical import sign_test_p
from evalcore.stats.resampling import bootstrap_ci, mean_score, paired_bootstrap


def _campaign(seed: int = 0, n_segments: int = 40) -> Judgments:
    """Three annotators score three systems (quality 70, 60, 50) on every segment; some
    judgments missing; a few QC rows that must not count."""
    rng = np.random.default_rng(seed)
    grid = np.meshgrid(np.arange(3), np.arange(n_segments), np.arange(3), indexing="ij")
    keep = rng.random(grid[0].size) < 0.8
    annotator, segment, system = (axis.ravel()[keep] for axis in grid)
    score = 70 - 10 * system + rng.normal(0, 12, system.shape[0]) + 5 * annotator
    n = score.shape[0]
    return Judgments.from_arrays(
        annotator=np.r_[annotator, [0, 1]],
        segment=np.r_[segment, [0, 0]],
        system=np.r_[system, [2, 2]],
        score=np.r_[np.round(score), [100, 100]],
        item_type=np.r_[np.zeros(n, dtype=int), [ItemType.REFERENCE, ItemType.REFERENCE]],
    )


def test_a_system_score_is_the_mean_over_segments_of_the_mean_of_their_judgments() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 1, 0, 1, 0],
        segment=[0, 0, 1, 0, 1],
        system=[0, 0, 0, 1, 1],
        score=[2, 4, 5, 1, 3],
        item_type=[0, 0, 0, 0, ItemType.BAD_REF],
        original=[-1, -1, -1, -1, 2],
    )
    normalised = normalise(judgments)
    result = system_scores(judgments, normalised, n_bootstrap=0)
    assert result.mean_raw.tolist() == [(3 + 5) / 2, 1.0]  # the bad reference does not count
    assert result.n_judgments.tolist() == [3, 1]
    assert result.n_segments.tolist() == [2, 1]
    shifted = normalised.shifted
    assert result.mean_shifted[0] == pytest.approx(((shifted[0] + shifted[1]) / 2 + shifted[2]) / 2)
    z = normalised.z
    assert result.mean_z[1] == pytest.approx(z[3])
    assert result.space == "z"
    assert result.score.tolist() == result.mean_z.tolist()


def test_the_t_interval_equals_scipys_t_interval_of_the_segment_scores() -> None:
    judgments = _campaign()
    result = system_scores(judgments, normalise(judgments), space="raw", n_bootstrap=0)
    for system in range(3):
        segments = result.segments.mean[system]
        segments = segments[np.isfinite(segments)]
        low, high = stats.t.interval(
            0.95, len(segments) - 1, loc=segments.mean(), scale=stats.sem(segments)
        )
        assert (result.t_low[system], result.t_high[system]) == pytest.approx((low, high))


@pytest.mark.parametrize(("confidence", "koehn"), [(0.99, 2.6259), (0.95, 1.9849), (0.90, 1.6602)])
def test_the_t_factor_for_100_segments_agrees_with_koehn_fig_8_12(
    confidence: float, koehn: float
) -> None:
    rng = np.random.default_rng(1)
    judgments = Judgments.from_arrays(
        annotator=np.zeros(100, dtype=int),
        segment=np.arange(100),
        system=np.zeros(100, dtype=int),
        score=rng.normal(3, 1, 100),
    )
    result = system_scores(
        judgments, normalise(judgments), space="raw", confidence=confidence, n_bootstrap=0
    )
    s = judgments.score.std(ddof=1)
    factor = (result.t_high[0] - result.score[0]) / (s / np.sqrt(100))
    assert factor == pytest.approx(stats.t.ppf((1 + confidence) / 2, 99), rel=1e-12)
    assert factor == pytest.approx(koehn, abs=0.001)  # Koehn's table: df ≈ n (DESIGN §10)


def test_the_bootstrap_interval_is_the_resampling_modules_bootstrap_over_segments() -> None:
    judgments = _campaign(seed=2)
    result = system_scores(judgments, normalise(judgments), space="shifted", rng=7)
    x = result.segments.mean
    present = np.isfinite(x)
    direct = bootstrap_ci(
        np.stack([np.where(present, x, 0.0), present.astype(float)], axis=-1),
        mean_score,
        n_samples=1000,
        rng=7,
    )
    np.testing.assert_array_equal(result.boot_low, direct.low)
    np.testing.assert_array_equal(result.boot_high, direct.high)
    assert (result.boot_low < result.score).all()
    assert (result.score < result.boot_high).all()
    assert result.seed == 7


def test_the_same_seed_gives_the_same_intervals_and_a_generator_is_followed() -> None:
    judgments = _campaign(seed=3)
    normalised = normalise(judgments)
    first = system_scores(judgments, normalised, rng=np.random.default_rng(5))
    second = system_scores(judgments, normalised, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(first.boot_low, second.boot_low)
    assert first.seed == second.seed


def test_only_the_included_annotators_count() -> None:
    judgments = _campaign(seed=4)
    normalised = normalise(judgments)
    include = np.array([True, False, True])
    result = system_scores(judgments, normalised, include=include, space="raw", n_bootstrap=0)
    alone = judgments.select((judgments.annotator != 1) & (judgments.item_type == 0))
    assert result.n_judgments.sum() == len(alone)
    assert result.included.tolist() == include.tolist()
    with pytest.raises(ValueError, match="one entry per annotator"):
        system_scores(judgments, normalised, include=np.array([True]))


def test_the_one_sided_sign_test_is_half_of_koehns_two_sided_example() -> None:
    # Koehn §8.3.2: 100 sentences, one system better on 60, worse on 40: p = 0.0569 two-sided.
    p = sign_test_greater(np.array([60, 40]), np.array([40, 60]))
    assert 2 * p[0] == pytest.approx(0.0569, abs=5e-5)
    assert 2 * p[0] == pytest.approx(sign_test_p(60, 100), rel=1e-12)
    assert p[0] == pytest.approx(stats.binomtest(60, 100, alternative="greater").pvalue)
    assert p[1] == pytest.approx(stats.binomtest(40, 100, alternative="greater").pvalue)
    assert np.isnan(sign_test_greater(np.array([0]), np.array([0]))[0])


def _segments(seed: int) -> SegmentScores:
    rng = np.random.default_rng(seed)
    mean = np.array([[0.3], [0.2], [0.0], [-0.25]]) + rng.normal(0, 0.6, (4, 120))
    mean[rng.random(mean.shape) < 0.1] = np.nan
    return SegmentScores(mean=mean, count=np.isfinite(mean).astype(np.int64))


def _paired(x: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    both = np.isfinite(x[a]) & np.isfinite(x[b])
    return x[a][both], x[b][both]


def test_pairwise_sign_test_equals_scipy_binomtest_on_the_common_segments() -> None:
    segments = _segments(0)
    result = pairwise_significance(segments, test="sign")
    for a in range(4):
        for b in range(4):
            if a == b:
                assert np.isnan(result.p_value[a, b])
                continue
            xa, xb = _paired(segments.mean, a, b)
            wins, losses = int((xa > xb).sum()), int((xa < xb).sum())
            expected = stats.binomtest(wins, wins + losses, alternative="greater").pvalue
            assert result.p_value[a, b] == pytest.approx(expected, rel=1e-10)
            assert result.n[a, b] == len(xa)


def test_pairwise_wilcoxon_equals_scipy_signed_rank_on_the_common_segments() -> None:
    segments = _segments(1)
    result = pairwise_significance(segments)
    assert result.test == "wilcoxon"
    for a in range(4):
        for b in range(4):
            if a != b:
                xa, xb = _paired(segments.mean, a, b)
                expected = stats.wilcoxon(xa, xb, alternative="greater")
                assert result.p_value[a, b] == pytest.approx(expected.pvalue, rel=1e-10)
                assert result.statistic[a, b] == pytest.approx(expected.statistic)


def test_pairwise_mann_whitney_equals_scipy_rank_sum_on_all_segments_of_each_system() -> None:
    segments = _segments(2)
    result = pairwise_significance(segments, test="mannwhitney")
    x = segments.mean
    for a in range(4):
        for b in range(4):
            if a != b:
                expected = stats.mannwhitneyu(
                    x[a][np.isfinite(x[a])], x[b][np.isfinite(x[b])], alternative="greater"
                )
                assert result.p_value[a, b] == pytest.approx(expected.pvalue, rel=1e-10)


def test_pairwise_bootstrap_is_the_resampling_modules_paired_bootstrap() -> None:
    segments = _segments(3)
    result = pairwise_significance(segments, test="bootstrap", n_samples=500, rng=9)
    x = segments.mean
    present = np.isfinite(x)
    stats_matrix = np.stack([np.where(present, x, 0.0), present.astype(float)], axis=-1)
    direct = paired_bootstrap(stats_matrix[1], stats_matrix[3], mean_score, n_samples=500, rng=9)
    # Pairs with system 1 as a were computed in one call of (1 vs 2, 3) with seed 9: the same
    # resamples as a call of (1 vs 3) alone, since a resample draws segment indices only.
    assert result.p_value[1, 3] == pytest.approx(1 - float(direct.wins))
    assert result.p_value[3, 1] == pytest.approx(1 - float(direct.losses))
    assert result.p_value[0, 3] < 0.05
    assert result.p_value[3, 0] > 0.95
    assert (result.n_samples, result.seed) == (500, 9)


def test_pairwise_approximate_randomisation_only_credits_the_system_that_scored_higher() -> None:
    segments = _segments(4)
    result = pairwise_significance(segments, test="ar", n_samples=2000, rng=1)
    assert result.p_value[0, 3] < 0.05
    assert result.p_value[3, 0] == 1.0
    assert result.statistic[0, 3] > 0
    assert np.isnan(np.diag(result.p_value)).all()


def test_unknown_pairwise_test_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown test"):
        pairwise_significance(_segments(0), test="t")  # type: ignore[arg-type]


def _matrix(beats: list[tuple[int, int]], n: int) -> PairwiseSignificance:
    p = np.full((n, n), 0.5)
    for a, b in beats:
        p[a, b] = 0.001
    np.fill_diagonal(p, np.nan)
    return PairwiseSignificance(
        test="sign",
        p_value=p,
        n=np.zeros((n, n), dtype=np.int64),
        statistic=p,
        n_samples=None,
        seed=None,
    )


def test_clusters_close_when_the_fewest_wins_inside_equal_the_systems_below() -> None:
    # Scores put the systems in the order 2, 0, 3, 1. System 2 beats 3 and 1; system 0 beats 1;
    # system 3 beats 1. Walking down: {2} has 2 wins < 3 below; {2, 0}: fewest 1 < 2 below;
    # {2, 0, 3}: fewest 1 = 1 below → closes; {1} closes last.
    score = np.array([0.5, -0.9, 0.8, 0.1])
    significance = _matrix([(2, 3), (2, 1), (0, 1), (3, 1)], 4)
    clusters = wmt_clusters(score, significance)
    assert clusters.order.tolist() == [2, 0, 3, 1]
    assert clusters.wins.tolist() == [1, 0, 2, 1]
    assert clusters.losses.tolist() == [0, 3, 0, 1]
    assert clusters.cluster.tolist() == [1, 2, 1, 1]
    # rank range (losses + 1)..(N − wins)
    assert clusters.rank_low.tolist() == [1, 4, 1, 2]
    assert clusters.rank_high.tolist() == [3, 4, 2, 3]


def test_a_system_beating_all_others_forms_its_own_cluster_and_unscored_ones_are_left_out() -> None:
    score = np.array([0.9, 0.1, 0.0, np.nan])
    significance = _matrix([(0, 1), (0, 2), (0, 3)], 4)
    clusters = wmt_clusters(score, significance)
    assert clusters.order.tolist() == [0, 1, 2]
    assert clusters.cluster.tolist() == [1, 2, 2, 0]
    assert clusters.rank_low.tolist() == [1, 2, 2, 0]
    assert clusters.rank_high.tolist() == [1, 3, 3, 0]
    assert clusters.wins[0] == 2  # a win over an unscored system does not count


def test_ranking_comparisons_are_tested_with_the_one_sided_sign_test() -> None:
    wins = np.array([[0, 30, 12], [18, 0, 9], [8, 11, 0]])
    ties = np.array([[0, 5, 1], [5, 0, 2], [1, 2, 0]])
    result = comparison_significance(PairwiseCounts(wins=wins, ties=ties))
    expected = stats.binomtest(30, 48, alternative="greater").pvalue
    assert result.p_value[0, 1] == pytest.approx(expected)
    assert result.n[0, 1] == 53
    assert np.isnan(result.p_value[1, 1])
