"""Annotator QC: bad-reference tests against scipy, repeats, references and time on task."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.normalisation import normalise
from evalcore.human.qc import (
    TOLERANCE_0_TO_100,
    QCTest,
    annotator_qc,
    bad_reference_test,
    ranking_repeat_consistency,
    reference_scores,
    repeat_consistency,
    time_on_task,
)
from evalcore.human.rankings import pairwise_comparisons


def _campaign(
    pairs_per_annotator: list[int], shifts: list[float], seed: int = 0, *, integer: bool = False
) -> tuple[Judgments, list[tuple[np.ndarray, np.ndarray]]]:
    """Each annotator scores n real outputs and a bad reference of each (original − shift)."""
    rng = np.random.default_rng(seed)
    annotator: list[int] = []
    score: list[float] = []
    item_type: list[int] = []
    original: list[int] = []
    expected = []
    for code, (n, shift) in enumerate(zip(pairs_per_annotator, shifts, strict=True)):
        real = rng.uniform(20, 90, n)
        bad = real - shift + rng.normal(0, 15, n)
        if integer:
            real, bad = np.round(real / 20), np.round(bad / 20)
        start = len(score)
        annotator += [code] * 2 * n
        score += [*real, *bad]
        item_type += [ItemType.REAL] * n + [ItemType.BAD_REF] * n
        original += [-1] * n + list(range(start, start + n))
        expected.append((real, bad))
    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=np.arange(len(score)) % 50,
        system=np.zeros(len(score), dtype=int),
        score=score,
        item_type=item_type,
        original=original,
    )
    return judgments, expected


SIZES = [12, 30, 7, 60]
SHIFTS = [25.0, 3.0, 0.0, 10.0]


def test_paired_t_equals_scipy_ttest_rel_one_sided_for_every_annotator() -> None:
    judgments, pairs = _campaign(SIZES, SHIFTS)
    result = bad_reference_test(judgments)
    for code, (real, bad) in enumerate(pairs):
        expected = stats.ttest_rel(real, bad, alternative="greater")
        assert result.statistic[code] == pytest.approx(expected.statistic, rel=1e-10)
        assert result.p_value[code] == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300)
        assert result.n[code] == len(real)
        assert result.mean_difference[code] == pytest.approx((real - bad).mean())
    assert result.passed.tolist() == (result.p_value <= 0.05).tolist()
    assert result.passed[0]
    assert (result.test, result.space, result.threshold) == ("paired_t", "raw", 0.05)


def test_wilcoxon_equals_scipy_signed_rank_one_sided_for_every_annotator() -> None:
    judgments, pairs = _campaign(SIZES, SHIFTS, seed=1, integer=True)  # ties and zeros included
    result = bad_reference_test(judgments, test="wilcoxon")
    for code, (real, bad) in enumerate(pairs):
        expected = stats.wilcoxon(real, bad, alternative="greater")
        assert result.statistic[code] == pytest.approx(expected.statistic)
        assert result.p_value[code] == pytest.approx(expected.pvalue, rel=1e-10)


def test_mann_whitney_equals_scipy_rank_sum_one_sided_for_every_annotator() -> None:
    judgments, pairs = _campaign(SIZES, SHIFTS, seed=2, integer=True)
    result = bad_reference_test(judgments, test="mannwhitney", threshold=0.01)
    for code, (real, bad) in enumerate(pairs):
        expected = stats.mannwhitneyu(real, bad, alternative="greater")
        assert result.statistic[code] == pytest.approx(expected.statistic)
        assert result.p_value[code] == pytest.approx(expected.pvalue, rel=1e-10)
    assert result.passed.tolist() == (result.p_value <= 0.01).tolist()


def test_the_test_can_run_on_z_scores() -> None:
    judgments, _ = _campaign(SIZES, SHIFTS, seed=3)
    z = normalise(judgments).z
    result = bad_reference_test(judgments, space="z")
    bad = np.flatnonzero(judgments.item_type == ItemType.BAD_REF)
    for code in range(len(SIZES)):
        mine = bad[judgments.annotator[bad] == code]
        expected = stats.ttest_rel(z[judgments.original[mine]], z[mine], alternative="greater")
        assert result.p_value[code] == pytest.approx(expected.pvalue, rel=1e-9)
    assert result.space == "z"


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy's own call
def test_an_annotator_without_two_pairs_or_any_difference_gets_no_p_value_and_does_not_pass() -> (
    None
):
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
        segment=[0, 0, 0, 1, 0, 1, 0, 1, 0, 1],
        system=[0] * 10,
        score=[5, 1, 3, 4, 3, 4, 5, 5, 1, 1],
        item_type=[0, 3, 0, 0, 3, 3, 0, 0, 3, 3],
        original=[-1, 0, -1, -1, 2, 3, -1, -1, 6, 7],
        n_annotators=4,
    )
    tests: tuple[QCTest, ...] = ("paired_t", "wilcoxon", "mannwhitney")
    for test in tests:
        result = bad_reference_test(judgments, test=test)
        assert result.n.tolist() == [1, 2, 2, 0]
        assert np.isnan(result.p_value[[0, 3]]).all()
        assert not result.passed[[0, 3]].any()
    paired_t = bad_reference_test(judgments)
    # As scipy: identical pairs give no statistic; a constant non-zero difference t = +inf.
    assert np.isnan(paired_t.p_value[1])
    assert paired_t.statistic[2] == np.inf
    assert paired_t.p_value[2] == 0.0
    assert stats.ttest_rel([5, 5], [1, 1], alternative="greater").pvalue == 0.0


def test_repeat_consistency_counts_repeats_within_tolerance_and_equals_scipy_pearson() -> None:
    originals = np.array([[80, 60, 40, 20, 50], [90, 90, 10, 30, 70]], dtype=float)
    repeats = np.array([[85, 45, 40, 31, 50], [10, 80, 90, 30, 72]], dtype=float)
    annotator = np.repeat([0, 1], 10)
    score = np.concatenate([originals[0], repeats[0], originals[1], repeats[1]])
    item_type = np.tile(np.repeat([ItemType.REAL, ItemType.REPEAT], 5), 2)
    original = np.where(item_type == ItemType.REPEAT, np.arange(20) - 5, -1)
    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=np.arange(20) % 5,
        system=np.zeros(20, dtype=int),
        score=score,
        item_type=item_type,
        original=original,
    )
    result = repeat_consistency(judgments, tolerance=TOLERANCE_0_TO_100)
    assert result.n.tolist() == [5, 5]
    assert result.share_within.tolist() == [3 / 5, 3 / 5]  # |diff| ≤ 10, 10 itself included
    for code in range(2):
        expected = stats.pearsonr(originals[code], repeats[code]).statistic
        assert result.pearson[code] == pytest.approx(expected, rel=1e-12)


def test_reference_scores_average_the_references_shown_as_outputs() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 1],
        segment=[0, 1, 2, 0],
        system=[0, 1, 1, 0],
        score=[30, 95, 85, 50],
        item_type=[ItemType.REAL, ItemType.REFERENCE, ItemType.REFERENCE, ItemType.REAL],
    )
    result = reference_scores(judgments)
    assert result.n.tolist() == [2, 0]
    assert result.mean[0] == 90
    assert np.isnan(result.mean[1])


def test_time_on_task_counts_each_screen_once_and_caps_idle_screens() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 0, 1, 1],
        segment=[0, 0, 1, 2, 0, 1],
        system=[0, 1, 0, 0, 0, 0],
        score=[1, 2, 3, 4, 5, 5],
        screen=[0, 0, 1, 2, 3, 4],  # screen 0 shows two outputs
        seconds=[40, 40, 1000, np.nan, 12, 8],
    )
    result = time_on_task(judgments, idle_cap=300)
    assert result.seconds.tolist() == [40 + 300, 20]
    assert result.n_screens.tolist() == [3, 2]
    assert result.n_unknown.tolist() == [1, 0]
    assert result.n_capped.tolist() == [1, 0]


def test_annotator_qc_bundles_every_check_and_reports_the_bad_reference_verdict() -> None:
    judgments, _ = _campaign(SIZES, SHIFTS, seed=4)
    result = annotator_qc(judgments, tolerance=TOLERANCE_0_TO_100, test="wilcoxon")
    assert result.bad_reference.test == "wilcoxon"
    assert result.passed is result.bad_reference.passed
    assert result.repeats.n.tolist() == [0, 0, 0, 0]
    assert result.time.n_screens.tolist() == [2 * n for n in SIZES]


def test_unknown_test_or_space_is_refused() -> None:
    judgments, _ = _campaign([3], [1.0])
    with pytest.raises(ValueError, match="unknown QC test"):
        bad_reference_test(judgments, test="chi2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown QC score space"):
        bad_reference_test(judgments, space="shifted")  # type: ignore[arg-type]


def test_ranking_repeats_count_the_pairs_ordered_as_on_the_original_screen() -> None:
    # Annotator 0 repeats a screen of three outputs and swaps one pair; annotator 1 repeats a
    # screen of two outputs exactly.
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
        segment=[0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
        system=[0, 1, 2, 0, 1, 2, 0, 1, 0, 1],
        score=[1, 2, 3, 1, 3, 2, 2, 1, 2, 1],
        item_type=[0, 0, 0, 1, 1, 1, 0, 0, 1, 1],
        original=[-1, -1, -1, 0, 1, 2, -1, -1, 6, 7],
        screen=[0, 0, 0, 1, 1, 1, 2, 2, 3, 3],
        n_annotators=3,
    )
    result = ranking_repeat_consistency(pairwise_comparisons(judgments), n_annotators=3)
    assert result.n.tolist() == [3, 1, 0]
    assert result.n_same.tolist() == [2, 1, 0]
    assert result.share_same[:2] == pytest.approx([2 / 3, 1.0])
    assert np.isnan(result.share_same[2])
