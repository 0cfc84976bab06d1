"""Document-level scores: z per annotator over their own document scores, system means over
windows, and percentile-bootstrap intervals over windows — against hand-computed values and
scipy's bootstrap."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from evalcore.human import ItemType, Judgments, document_scores

# Two annotators, two systems (X = 0, Y = 1), two windows (0, 1); annotator B also scored a
# degraded copy of window 0 in Y's translation (a bad reference: no basis row, no system score).
ROWS = [
    # annotator, window, system, score, type
    (0, 0, 0, 80, ItemType.REAL),
    (0, 0, 1, 40, ItemType.REAL),
    (0, 1, 0, 70, ItemType.REAL),
    (0, 1, 1, 50, ItemType.REAL),
    (1, 0, 0, 90, ItemType.REAL),
    (1, 1, 1, 30, ItemType.REAL),
    (1, 0, 1, 10, ItemType.BAD_REF),
]


def table(rows=ROWS) -> Judgments:  # type: ignore[no-untyped-def]
    annotator, window, system, score, kind = zip(*rows, strict=True)
    return Judgments.from_arrays(
        annotator=annotator, segment=window, system=system, score=score, item_type=kind
    )


def hand_z() -> list[float]:
    """z of every row by the formula, each annotator over their REAL rows (sample SD)."""
    out = []
    for annotator, _w, _s, score, _k in ROWS:
        own = [r[3] for r in ROWS if r[0] == annotator and r[4] == ItemType.REAL]
        out.append((score - statistics.mean(own)) / statistics.stdev(own))
    return out


def test_z_scores_are_per_annotator_over_their_own_document_scores() -> None:
    result = document_scores(table(), n_bootstrap=0, rng=1)
    assert result.normalised.z == pytest.approx(hand_z())
    # A: mean 60, s = sqrt(1000/3); B: mean 60, s = sqrt(1800).
    assert result.normalised.z[0] == pytest.approx(20 / math.sqrt(1000 / 3))
    assert result.normalised.z[4] == pytest.approx(30 / math.sqrt(1800))


def test_system_scores_are_means_over_windows_of_window_means_without_qc_rows() -> None:
    result = document_scores(table(), n_bootstrap=0, rng=1)
    z = hand_z()
    # X: window 0 (80 + 90) / 2 = 85, window 1 70; Y: window 0 40, window 1 (50 + 30) / 2.
    assert result.raw.score.tolist() == pytest.approx([(85 + 70) / 2, (40 + 40) / 2])
    x_z = ((z[0] + z[4]) / 2 + z[2]) / 2
    y_z = (z[1] + (z[3] + z[5]) / 2) / 2
    assert result.z.score.tolist() == pytest.approx([x_z, y_z])
    assert result.raw.n_judgments.tolist() == [3, 3]
    assert result.raw.n_segments.tolist() == [2, 2]


def test_an_excluded_annotator_leaves_the_system_scores_but_not_the_normalisation() -> None:
    result = document_scores(table(), include=np.array([True, False]), n_bootstrap=0, rng=1)
    assert result.raw.score.tolist() == pytest.approx([75.0, 45.0])
    assert result.normalised.z == pytest.approx(hand_z())


def test_the_bootstrap_interval_is_scipys_percentile_interval_over_windows() -> None:
    rng = np.random.default_rng(7)
    scores = np.clip(rng.normal(62, 15, size=40), 0, 100).round()
    rows = [(0, w, 0, float(s), ItemType.REAL) for w, s in enumerate(scores)]
    result = document_scores(table(rows), n_bootstrap=20000, confidence=0.95, rng=11)
    reference = stats.bootstrap(
        (scores,), np.mean, n_resamples=20000, method="percentile", random_state=3
    ).confidence_interval
    assert result.raw.score[0] == pytest.approx(scores.mean())
    assert result.raw.boot_low[0] == pytest.approx(reference.low, abs=0.3)
    assert result.raw.boot_high[0] == pytest.approx(reference.high, abs=0.3)


def test_raw_and_z_intervals_come_from_one_seed_and_repeat_exactly() -> None:
    first = document_scores(table(), n_bootstrap=500, rng=5)
    again = document_scores(table(), n_bootstrap=500, rng=5)
    assert first.seed == again.seed == 5
    assert first.raw.seed == first.z.seed == 5
    assert first.z.boot_low.tolist() == again.z.boot_low.tolist()
    assert first.raw.boot_high.tolist() == again.raw.boot_high.tolist()
