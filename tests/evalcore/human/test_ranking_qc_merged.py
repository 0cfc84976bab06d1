"""The ranking bad-reference test in normalised-rank space on a screen with a merged output:
a rank is normalised by the outputs the annotator ranked on the screen, not by the rows that
credit a merged answer to other systems (which would make every rank on that screen look
better than it was, and a careless ranker pass)."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.human import ItemType, Judgments, ranking_bad_reference_test

REAL, BAD, REPEAT = ItemType.REAL, ItemType.BAD_REF, ItemType.REPEAT


def _judgments(*, merged: bool) -> Judgments:
    # Screen 0: three outputs ranked 1, 2, 3 (systems 0, 1, 2); merged, system 0's output is
    # also systems 3's and 4's (two credited rows). Screen 1: its copy, system 1's output
    # degraded and ranked last, the other two intact.
    rows = [
        # (screen, system, rank, item type, original, credit_of)
        (0, 0, 1, REAL, -1, -1),
        (0, 1, 2, REAL, -1, -1),
        (0, 2, 3, REAL, -1, -1),
        (1, 0, 1, REPEAT, 0, -1),
        (1, 1, 3, BAD, 1, -1),
        (1, 2, 2, REPEAT, 2, -1),
    ]
    if merged:
        rows += [(0, 3, 1, REAL, -1, 0), (0, 4, 1, REAL, -1, 0)]
    screen, system, rank, item_type, original, credit_of = (
        list(c) for c in zip(*rows, strict=True)
    )
    return Judgments.from_arrays(
        annotator=np.zeros(len(rows), dtype=int),
        segment=np.zeros(len(rows), dtype=int),
        system=system,
        score=rank,
        item_type=item_type,
        original=original,
        screen=screen,
        credit_of=credit_of,
    )


@pytest.mark.parametrize("merged", [False, True])
def test_credited_rows_do_not_widen_the_screen_a_rank_is_normalised_by(merged: bool) -> None:
    result = ranking_bad_reference_test(_judgments(merged=merged), space="normalised_rank")
    # Three outputs ranked on each screen: the original's rank 2 is (2 − 1)/(3 − 1) = 0.5, the
    # bad reference's rank 3 is 1.0; the difference 0.5 whether or not an output was merged.
    assert result.n.tolist() == [1]
    assert result.mean_difference[0] == pytest.approx(0.5, abs=1e-12)
    raw = ranking_bad_reference_test(_judgments(merged=merged), space="rank")
    assert raw.mean_difference[0] == pytest.approx(1.0, abs=1e-12)
