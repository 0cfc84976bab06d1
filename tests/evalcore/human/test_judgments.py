"""The judgments table: defaults, validation, original pointers and grouping helpers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from evalcore.human.judgments import ItemType, Judgments, group_mean_sd, link_originals


def test_from_arrays_fills_the_optional_columns_with_their_defaults() -> None:
    judgments = Judgments.from_arrays(annotator=[0, 1], segment=[0, 0], system=[1, 0], score=[3, 4])
    assert judgments.item_type.tolist() == [ItemType.REAL, ItemType.REAL]
    assert judgments.original.tolist() == [-1, -1]
    assert judgments.screen.tolist() == [0, 1]
    assert np.isnan(judgments.seconds).all()
    assert (judgments.n_annotators, judgments.n_segments, judgments.n_systems) == (2, 1, 2)


def test_counts_can_be_larger_than_the_codes_but_not_smaller() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0], segment=[0], system=[0], score=[1], n_annotators=5
    )
    assert judgments.n_annotators == 5
    with pytest.raises(ValueError, match="n_systems=1 but a code 1 occurs"):
        Judgments.from_arrays(annotator=[0], segment=[0], system=[1], score=[1], n_systems=1)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"score": [1.0, np.nan]}, "score of row 1 is not a finite number"),
        ({"annotator": [0, -1]}, "annotator of row 1 is negative"),
        ({"item_type": [0, 7]}, "item_type of row 1 is 7"),
        ({"segment": [0.5, 1]}, "segment must hold integer codes"),
        ({"system": [0, 1, 2]}, r"system has shape \(3,\), expected \(2,\)"),
    ],
)
def test_bad_columns_are_refused_with_the_offending_row(
    change: dict[str, list[float]], message: str
) -> None:
    columns: dict[str, list[float]] = {
        "annotator": [0, 0],
        "segment": [0, 1],
        "system": [0, 1],
        "score": [1.0, 2.0],
    }
    columns.update(change)
    with pytest.raises(ValueError, match=message):
        Judgments.from_arrays(**columns)  # type: ignore[arg-type]


def test_an_original_must_be_a_real_row_of_the_same_annotator() -> None:
    columns: dict[str, Any] = {
        "annotator": [0, 1],
        "segment": [0, 0],
        "system": [0, 0],
        "score": [5, 1],
        "item_type": [ItemType.REAL, ItemType.BAD_REF],
    }
    with pytest.raises(ValueError, match="not a REAL row of the same annotator"):
        Judgments.from_arrays(**columns, original=[-1, 0])
    with pytest.raises(ValueError, match="has an original but is not a REPEAT or BAD_REF row"):
        Judgments.from_arrays(**columns, original=[1, -1])


def test_link_originals_finds_the_same_annotators_judgment_of_the_same_output() -> None:
    # Two annotators saw item 10 (two outputs) and a bad-reference copy of it (item 20).
    annotator = [0, 0, 1, 1, 0, 0, 1]
    item = [10, 10, 10, 10, 20, 20, 20]
    original_item = [-1, -1, -1, -1, 10, 10, 10]
    output = [7, 8, 7, 8, 8, 7, 9]
    rows = link_originals(
        annotator=annotator, item=item, original_item=original_item, output=output
    )
    assert rows.tolist() == [-1, -1, -1, -1, 1, 0, -1]  # output 9 was never judged originally


def test_link_originals_refuses_two_rows_for_the_same_annotator_item_and_output() -> None:
    with pytest.raises(ValueError, match="rows share annotator, item and output"):
        link_originals(annotator=[0, 0], item=[1, 1], original_item=[-1, -1])


def test_select_keeps_originals_that_are_selected_and_drops_the_others() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0, 0],
        segment=[0, 1, 0, 1],
        system=[0, 0, 0, 0],
        score=[5, 4, 1, 4],
        item_type=[ItemType.REAL, ItemType.REAL, ItemType.BAD_REF, ItemType.REPEAT],
        original=[-1, -1, 0, 1],
    )
    subset = judgments.select(np.array([False, True, True, True]))
    assert subset.original.tolist() == [-1, -1, 0]
    assert subset.score.tolist() == [4, 1, 4]


def test_negated_judgments_differ_only_in_the_sign_of_their_scores() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0, 0, 0],
        segment=[0, 1, 0],
        system=[0, 1, 0],
        score=[20, 0, 60],
        item_type=[ItemType.REAL, ItemType.REAL, ItemType.BAD_REF],
        original=[-1, -1, 0],
    )
    negated = judgments.negated()
    assert negated.score.tolist() == [-20, 0, -60]
    # A zero stays +0.0, so nothing computed from it shows "-0".
    assert not np.signbit(negated.score[1])
    for column in ("annotator", "segment", "system", "item_type", "original", "screen"):
        np.testing.assert_array_equal(getattr(negated, column), getattr(judgments, column))
    assert judgments.score.tolist() == [20, 0, 60]


def test_group_mean_and_sample_sd_equal_numpy_per_group() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 5, 200)
    values = rng.normal(1e6, 3.0, 200)  # a large offset: the two-pass SD must not cancel
    mean, sd, count = group_mean_sd(keys, values, 6)
    for key in range(5):
        assert mean[key] == pytest.approx(values[keys == key].mean(), rel=1e-14)
        assert sd[key] == pytest.approx(values[keys == key].std(ddof=1), rel=1e-9)
        assert count[key] == (keys == key).sum()
    assert count[5] == 0
    assert np.isnan(mean[5])
    assert np.isnan(sd[5])
