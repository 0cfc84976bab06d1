"""Merged answers in the numerical core (``Judgments.credit_of``): a row that credits another
system with an answer given once counts for that system's scores and comparisons, never twice
for its annotator, and two systems sharing one answer are not compared. Hand-computed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.human import (
    Judgments,
    expected_wins,
    inter_annotator_alpha,
    krippendorff_alpha,
    normalise,
    pairwise_comparisons,
    segment_scores,
)


def _scores() -> Judgments:
    # Annotator 0 gave 60 to an output systems 0, 1 and 2 produced (shown as system 0,
    # rows 4 and 5 credit systems 1 and 2) and 80 to system 3; annotator 1 gave 50 to system
    # 0's output of segment 1 and 40 to system 3's.
    return Judgments.from_arrays(
        annotator=[0, 0, 1, 1, 0, 0],
        segment=[0, 0, 1, 1, 0, 0],
        system=[0, 3, 0, 3, 1, 2],
        score=[60, 80, 50, 40, 60, 60],
        screen=[0, 1, 2, 3, 0, 0],
        credit_of=[-1, -1, -1, -1, 0, 0],
    )


def test_an_annotator_mean_and_sd_count_a_merged_answer_once() -> None:
    normalised = normalise(_scores())
    # Annotator 0's answers are 60 and 80: μ 70, σ √((10² + 10²) / 1) = 14.142.
    assert normalised.annotator_mean[0] == pytest.approx(70)
    assert normalised.annotator_sd[0] == pytest.approx(math.sqrt(200))
    assert normalised.annotator_n.tolist() == [2, 2]
    # μ_global over the four answers: (60 + 80 + 50 + 40) / 4 = 57.5.
    assert normalised.global_mean == pytest.approx(57.5)
    # The credited rows carry their answer's normalised score: z (60 − 70) / 14.142, shifted
    # 60 + 57.5 − 70.
    z = -10 / math.sqrt(200)
    assert normalised.z[[0, 4, 5]] == pytest.approx([z, z, z])
    assert normalised.shifted[[0, 4, 5]] == pytest.approx([47.5, 47.5, 47.5])


def test_segment_scores_credit_every_system_that_produced_the_text() -> None:
    judgments = _scores()
    scores = segment_scores(judgments, judgments.score, np.ones(len(judgments), dtype=bool))
    # system × segment: systems 1 and 2 have segment 0's 60 though nobody was shown them.
    expected = np.array(
        [[60, 50], [60, np.nan], [60, np.nan], [80, 40]],
        dtype=float,
    )
    np.testing.assert_array_equal(scores.mean, expected)


def test_two_systems_sharing_a_merged_answer_are_not_compared() -> None:
    # One ranking screen: system 0's output (rank 1) was also system 1's (row 2 credits it);
    # system 2 ranked 2.
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0],
        segment=[0, 0, 0],
        system=[0, 2, 1],
        score=[1, 2, 1],
        screen=[0, 0, 0],
        credit_of=[-1, -1, 0],
    )
    comparisons = pairwise_comparisons(judgments)
    pairs = sorted(zip(comparisons.system_a.tolist(), comparisons.system_b.tolist(), strict=True))
    assert pairs == [(0, 2), (1, 2)]
    assert comparisons.outcome.tolist() == [1, 1]
    wins = expected_wins(comparisons)
    # Systems 0 and 1 each beat system 2 once; system 2 lost both.
    assert wins.score.tolist() == [1.0, 1.0, 0.0]


def test_agreement_counts_a_merged_answer_once() -> None:
    # Two annotators judged the same merged output (systems 0 and 1) and system 2's output.
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 1, 1, 0, 1],
        segment=[0, 0, 0, 0, 0, 0],
        system=[0, 2, 0, 2, 1, 1],
        score=[70, 20, 60, 30, 70, 60],
        screen=[0, 0, 1, 1, 0, 1],
        credit_of=[-1, -1, -1, -1, 0, 2],
    )
    alpha = inter_annotator_alpha(judgments)
    direct = krippendorff_alpha([0, 1, 0, 1], [70, 20, 60, 30])
    assert alpha.n_units == 2
    assert alpha.alpha == pytest.approx(direct.alpha)


def test_a_selection_without_the_answer_row_keeps_one_answer() -> None:
    judgments = _scores()
    # Without row 0, row 4 holds the answer and row 5 credits it.
    kept = judgments.select(np.array([1, 2, 3, 4, 5]))
    assert kept.credit_of.tolist() == [-1, -1, -1, -1, 3]
    assert normalise(kept).annotator_n.tolist() == [2, 2]


def test_a_credit_must_repeat_a_real_answer_of_the_same_annotator_and_screen() -> None:
    with pytest.raises(ValueError, match="credit_of of row 1"):
        Judgments.from_arrays(
            annotator=[0, 1], segment=[0, 0], system=[0, 1], score=[5, 5], credit_of=[-1, 0]
        )
