"""Mean shift and z-scores per annotator (Koehn §8.1.1), and segment scores."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.normalisation import normalise, segment_scores


def _three_judges() -> Judgments:
    # A harsh, a lenient and a middle judge score the same four outputs.
    return Judgments.from_arrays(
        annotator=[0] * 4 + [1] * 4 + [2] * 4,
        segment=[0, 1, 2, 3] * 3,
        system=[0] * 12,
        score=[1, 2, 2, 3, 3, 4, 5, 5, 2, 3, 3, 4],
    )


def test_mean_shift_moves_every_judge_to_the_global_mean() -> None:
    judgments = _three_judges()
    result = normalise(judgments)
    assert result.global_mean == pytest.approx(judgments.score.mean())
    for annotator in range(3):
        rows = judgments.annotator == annotator
        assert result.shifted[rows].mean() == pytest.approx(result.global_mean)
        # A shift only: the differences between the judge's own scores stay.
        assert np.diff(result.shifted[rows]) == pytest.approx(np.diff(judgments.score[rows]))


def test_z_scores_equal_scipy_zscore_with_the_sample_standard_deviation() -> None:
    judgments = _three_judges()
    result = normalise(judgments)
    for annotator in range(3):
        rows = judgments.annotator == annotator
        expected = stats.zscore(judgments.score[rows], ddof=1)
        assert result.z[rows] == pytest.approx(expected, abs=1e-12)
        assert result.annotator_sd[annotator] == pytest.approx(judgments.score[rows].std(ddof=1))


def test_a_judge_with_one_score_for_everything_is_flagged_instead_of_divided_by_zero() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 1, 1, 2],
        segment=[0, 1, 2, 0, 1, 0],
        system=[0] * 6,
        score=[4, 4, 4, 1, 5, 3],
    )
    with np.errstate(all="raise"):  # any division by zero would raise here
        result = normalise(judgments)
    assert result.degenerate.tolist() == [True, False, True]  # σ = 0, fine, a single score
    assert result.annotator_sd[0] == 0.0
    assert np.isnan(result.annotator_sd[2])
    assert np.isnan(result.z[judgments.annotator != 1]).all()
    assert np.isfinite(result.shifted).all()


def test_qc_rows_do_not_move_the_statistics_unless_the_basis_is_all() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 0],
        segment=[0, 1, 0, 2],
        system=[0, 0, 0, 1],
        score=[4, 2, 1, 5],
        item_type=[ItemType.REAL, ItemType.REAL, ItemType.BAD_REF, ItemType.REFERENCE],
        original=[-1, -1, 0, -1],
    )
    default = normalise(judgments)
    assert default.annotator_mean[0] == 3.0
    assert default.annotator_n[0] == 2
    # The statistics of the real rows apply to the QC rows too.
    assert default.z[2] == pytest.approx((1 - 3.0) / np.std([4, 2], ddof=1))
    every_row = normalise(judgments, basis="all")
    assert every_row.annotator_mean[0] == 3.0
    assert every_row.annotator_sd[0] == pytest.approx(np.std([4, 2, 1, 5], ddof=1))
    assert every_row.annotator_n[0] == 4


def test_unknown_basis_or_space_is_refused() -> None:
    judgments = _three_judges()
    with pytest.raises(ValueError, match="unknown basis"):
        normalise(judgments, basis="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown score space"):
        normalise(judgments).values("logit")  # type: ignore[arg-type]


def test_segment_scores_are_the_mean_of_the_judgments_of_each_system_on_each_segment() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 1, 2, 0, 1],
        segment=[0, 0, 1, 1, 0],
        system=[0, 0, 0, 1, 1],
        score=[2, 4, 5, 1, 3],
        n_segments=3,
    )
    result = segment_scores(judgments, judgments.score, np.ones(5, dtype=bool))
    assert result.count.tolist() == [[2, 1, 0], [1, 1, 0]]
    np.testing.assert_array_equal(result.mean, [[3, 5, np.nan], [3, 1, np.nan]])
    # Non-finite values (z of a degenerate judge) are left out rather than spreading NaN.
    values = judgments.score.copy()
    values[0] = np.nan
    assert segment_scores(judgments, values, np.ones(5, dtype=bool)).mean[0, 0] == 4
