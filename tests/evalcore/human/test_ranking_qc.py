"""Annotator QC for ranking protocols: the bad-reference test on ranks against scipy's
``ttest_rel``, ``wilcoxon`` and ``mannwhitneyu`` on the same vectors, repeat consistency against
``scipy.stats.kendalltau``, and a synthetic campaign where a careless ranker fails QC and the
order of the systems by Expected Wins is recovered without them."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from evalcore.human import (
    ItemType,
    Judgments,
    analyse_rankings,
    pairwise_comparisons,
    ranking_bad_reference_test,
    ranking_qc,
    ranking_repeat_consistency,
    synthetic_rankings,
)
from evalcore.human.qc import QCTest, RankSpace

CARELESS = 3


@pytest.fixture(scope="module")
def campaign():  # type: ignore[no-untyped-def]
    # A careless ranker passes a 5% test 5% of the time: not with this seed.
    return synthetic_rankings(
        n_annotators=6,
        n_systems=5,
        n_segments=60,
        screens_per_annotator=100,
        careless=[CARELESS],
        degradation=2.5,
        seed=0,
    )


def _rank_vectors(
    judgments: Judgments, space: RankSpace
) -> dict[int, tuple[list[float], list[float]]]:
    """Per annotator, (ranks of the bad references, ranks of their originals), computed row by
    row in plain Python: only bad references on a screen that shows an undegraded output."""
    size = Counter(judgments.screen.tolist())
    degraded_only = {
        screen
        for screen in size
        if all(
            judgments.item_type[r] == ItemType.BAD_REF
            for r in np.flatnonzero(judgments.screen == screen)
        )
    }

    def value(row: int) -> float:
        rank = float(judgments.score[row])
        k = size[int(judgments.screen[row])]
        return rank if space == "rank" else (rank - 1) / (k - 1)

    vectors: dict[int, tuple[list[float], list[float]]] = {}
    for row in range(len(judgments)):
        original = int(judgments.original[row])
        if judgments.item_type[row] != ItemType.BAD_REF or original < 0:
            continue
        if int(judgments.screen[row]) in degraded_only:
            continue
        bad, orig = vectors.setdefault(int(judgments.annotator[row]), ([], []))
        bad.append(value(row))
        orig.append(value(original))
    return vectors


@pytest.mark.parametrize("space", ["rank", "normalised_rank"])
@pytest.mark.parametrize(
    ("test", "reference"),
    [
        ("paired_t", lambda b, o: stats.ttest_rel(b, o, alternative="greater")),
        ("wilcoxon", lambda b, o: stats.wilcoxon(b, o, alternative="greater")),
        ("mannwhitney", lambda b, o: stats.mannwhitneyu(b, o, alternative="greater")),
    ],
)
def test_the_rank_test_equals_scipy_on_bad_and_original_ranks(
    campaign, test: QCTest, reference, space: RankSpace
) -> None:  # type: ignore[no-untyped-def]
    judgments = campaign.judgments
    result = ranking_bad_reference_test(judgments, test=test, space=space)
    vectors = _rank_vectors(judgments, space)
    assert sorted(vectors) == list(range(judgments.n_annotators))
    for annotator, (bad, orig) in vectors.items():
        expected = reference(np.array(bad), np.array(orig))
        assert result.n[annotator] == len(bad) == 9
        assert result.statistic[annotator] == pytest.approx(expected.statistic, rel=1e-12)
        assert result.p_value[annotator] == pytest.approx(expected.pvalue, rel=1e-9)
        assert result.mean_difference[annotator] == pytest.approx(np.mean(bad) - np.mean(orig))
        assert result.passed[annotator] == (expected.pvalue <= 0.05)
    assert result.test == test
    assert result.space == space
    assert result.n_uninformative.tolist() == [0] * judgments.n_annotators


def _table(rows: list[tuple[int, int, int, float, int, int]]) -> Judgments:
    """A table from (annotator, screen, system, rank, item type, original row) per row."""
    columns = [list(c) for c in zip(*rows, strict=True)]
    annotator, screen, system, score, item_type, original = columns
    return Judgments.from_arrays(
        annotator=annotator,
        segment=np.zeros(len(rows), dtype=int),
        system=system,
        score=score,
        item_type=item_type,
        original=original,
        screen=screen,
    )


REAL, REPEAT, BAD = int(ItemType.REAL), int(ItemType.REPEAT), int(ItemType.BAD_REF)


def test_bad_references_on_a_screen_where_everything_was_degraded_are_left_out() -> None:
    # Screen 0: three outputs ranked 1, 2, 3. Screen 1 degrades all three (what the task
    # builder makes today): ranked 1, 2, 3 again, which says nothing about the degradation.
    # Screens 2 and 3 are real; screens 4 and 5 degrade one output each, next to repeats.
    judgments = _table(
        [
            (0, 0, 0, 1, REAL, -1),
            (0, 0, 1, 2, REAL, -1),
            (0, 0, 2, 3, REAL, -1),
            (0, 1, 0, 1, BAD, 0),
            (0, 1, 1, 2, BAD, 1),
            (0, 1, 2, 3, BAD, 2),
            (1, 2, 0, 1, REAL, -1),
            (1, 2, 1, 2, REAL, -1),
            (1, 3, 0, 2, REAL, -1),
            (1, 3, 1, 1, REAL, -1),
            (1, 4, 0, 2, BAD, 6),
            (1, 4, 1, 1, REPEAT, 7),
            (1, 5, 0, 2, REPEAT, 8),
            (1, 5, 1, 1, BAD, 9),
        ]
    )
    result = ranking_bad_reference_test(judgments)
    assert result.n.tolist() == [0, 2]
    assert result.n_uninformative.tolist() == [3, 0]
    assert np.isnan(result.p_value[0])  # no informative pair: untested, not failed
    assert not result.passed[0]
    # Annotator 1: the degraded output went from rank 1 to 2 once and stayed at 1 once.
    expected = stats.ttest_rel([2, 1], [1, 1], alternative="greater")
    assert result.statistic[1] == pytest.approx(expected.statistic)
    assert result.p_value[1] == pytest.approx(expected.pvalue)
    assert result.mean_difference[1] == pytest.approx(0.5)


def test_an_unknown_rank_space_or_test_is_refused(campaign) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="unknown rank space"):
        ranking_bad_reference_test(campaign.judgments, space="z")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown QC test"):
        ranking_bad_reference_test(campaign.judgments, test="sign")  # type: ignore[arg-type]


def test_repeat_consistency_per_screen_equals_scipy_kendall_tau_b(campaign) -> None:  # type: ignore[no-untyped-def]
    judgments = campaign.judgments
    result = ranking_repeat_consistency(
        pairwise_comparisons(judgments), n_annotators=judgments.n_annotators
    )
    taus: dict[int, list[float]] = {}
    screens: Counter[int] = Counter()
    identical: Counter[int] = Counter()
    for screen in np.unique(judgments.screen).tolist():
        rows = [
            r
            for r in np.flatnonzero(judgments.screen == screen).tolist()
            if judgments.item_type[r] == ItemType.REPEAT and judgments.original[r] >= 0
        ]
        if len(rows) < 2:
            continue
        annotator = int(judgments.annotator[rows[0]])
        repeat = judgments.score[rows]
        original = judgments.score[judgments.original[rows]]
        screens[annotator] += 1
        same = all(
            np.sign(repeat[i] - repeat[j]) == np.sign(original[i] - original[j])
            for i, j in itertools.combinations(range(len(rows)), 2)
        )
        identical[annotator] += same
        tau = stats.kendalltau(original, repeat).statistic
        if np.isfinite(tau):
            taus.setdefault(annotator, []).append(tau)
    assert sum(screens.values()) > 0
    assert sum(identical.values()) > 0
    for annotator in range(judgments.n_annotators):
        assert result.n_screens[annotator] == screens[annotator]
        assert result.n_identical[annotator] == identical[annotator]
        assert result.share_identical[annotator] == pytest.approx(
            identical[annotator] / screens[annotator]
        )
        assert result.n_tau[annotator] == len(taus[annotator])
        assert result.kendall_tau[annotator] == pytest.approx(np.mean(taus[annotator]), rel=1e-12)


def test_a_screen_ranked_twice_in_the_same_order_has_tau_one_and_counts_as_identical() -> None:
    judgments = _table(
        [
            (0, 0, 0, 1, REAL, -1),
            (0, 0, 1, 2, REAL, -1),
            (0, 0, 2, 2, REAL, -1),
            (0, 1, 0, 1, REPEAT, 0),
            (0, 1, 1, 2, REPEAT, 1),
            (0, 1, 2, 2, REPEAT, 2),
            (1, 2, 0, 1, REAL, -1),
            (1, 2, 1, 2, REAL, -1),
            (1, 2, 2, 3, REAL, -1),
            (1, 3, 0, 3, REPEAT, 6),
            (1, 3, 1, 2, REPEAT, 7),
            (1, 3, 2, 1, REPEAT, 8),
        ]
    )
    result = ranking_repeat_consistency(pairwise_comparisons(judgments), n_annotators=2)
    assert result.n_screens.tolist() == [1, 1]
    assert result.n_identical.tolist() == [1, 0]
    assert result.kendall_tau.tolist() == pytest.approx([1.0, -1.0])


def test_the_careless_ranker_fails_qc_and_expected_wins_recover_the_order(campaign) -> None:  # type: ignore[no-untyped-def]
    analysis = analyse_rankings(campaign.judgments, n_bootstrap=20, rng=1)
    assert analysis.qc.passed.tolist() == (~campaign.careless).tolist()
    assert analysis.included.tolist() == (~campaign.careless).tolist()
    # The truth: system code 0 is the best, qualities evenly spaced.
    assert (np.diff(analysis.expected_wins.score) < 0).all()
    assert analysis.clusters.order.tolist() == [0, 1, 2, 3, 4]
    # The careless ranker's comparisons did not enter Expected Wins.
    comparisons = analysis.comparisons
    used = (comparisons.item_type == ItemType.REAL) & (comparisons.annotator != CARELESS)
    counts = analysis.expected_wins.counts
    assert int(counts.wins.sum() + counts.ties.sum() // 2) == int(used.sum())
    # Diligent rankers repeat their screens' order more often than the careless one.
    tau = analysis.qc.repeats.kendall_tau
    assert tau[CARELESS] < np.min(np.delete(tau, CARELESS))
    kept = analyse_rankings(campaign.judgments, include_failed=True, n_bootstrap=0, rng=1)
    assert kept.included.all()


def test_without_informative_bad_references_everyone_is_untested_and_stays_in() -> None:
    campaign = synthetic_rankings(
        n_annotators=4, n_systems=4, n_segments=30, screens_per_annotator=40, screen_size=4, seed=2
    )
    analysis = analyse_rankings(campaign.judgments, n_bootstrap=0, rng=1)
    assert analysis.qc.bad_reference.n.tolist() == [0, 0, 0, 0]
    assert np.isnan(analysis.qc.bad_reference.p_value).all()
    assert analysis.included.all()
    strict = analyse_rankings(campaign.judgments, include_untested=False, n_bootstrap=0, rng=1)
    assert not strict.included.any()
    assert np.isnan(strict.expected_wins.score).all()


def test_ranking_qc_bundles_the_checks_with_the_settings(campaign) -> None:  # type: ignore[no-untyped-def]
    judgments = campaign.judgments
    comparisons = pairwise_comparisons(judgments)
    qc = ranking_qc(
        judgments, comparisons=comparisons, test="wilcoxon", space="normalised_rank", idle_cap=60
    )
    assert qc.bad_reference.test == "wilcoxon"
    assert qc.bad_reference.space == "normalised_rank"
    assert qc.passed is qc.bad_reference.passed
    assert qc.time.idle_cap == 60
    assert qc.references.n.tolist() == [0] * judgments.n_annotators
