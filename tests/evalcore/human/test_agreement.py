"""Krippendorff's α against the published example and the krippendorff package; Cohen's κ on
ranking comparisons against a hand-worked example."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from evalcore.human.agreement import (
    Level,
    inter_annotator_alpha,
    intra_annotator_alpha,
    krippendorff_alpha,
    ranking_kappa,
)
from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.rankings import pairwise_comparisons

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E: 4 observers,
# 12 units, values 1–5 with missing data. Published: interval α = 0.849, ordinal α = 0.815.
PUBLISHED = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def _long(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit, value) pairs of a coders × units reliability matrix."""
    units = np.broadcast_to(np.arange(matrix.shape[1]), matrix.shape)
    return units.ravel(), matrix.ravel()


@pytest.mark.parametrize(("level", "published"), [("interval", 0.849), ("ordinal", 0.815)])
def test_alpha_reproduces_krippendorffs_published_example(level: Level, published: float) -> None:
    result = krippendorff_alpha(*_long(PUBLISHED), level=level)
    assert round(result.alpha, 3) == published
    assert result.n_units == 11  # unit 12 has a single value and is not pairable
    assert result.n_values == 40


@pytest.mark.parametrize("level", ["interval", "ordinal"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_the_krippendorff_package_on_random_reliability_data(
    level: Level, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 60)
    matrix = np.clip(truth + rng.integers(-1, 2, (7, 60)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < 0.4] = np.nan
    expected = krippendorff.alpha(matrix, level_of_measurement=level)
    result = krippendorff_alpha(*_long(matrix), level=level)
    assert result.alpha == pytest.approx(expected, abs=1e-12)


def test_interval_alpha_equals_the_package_on_continuous_scores() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(50, 20, 200) + rng.normal(0, 12, (5, 200))
    matrix[rng.random(matrix.shape) < 0.5] = np.nan
    expected = krippendorff.alpha(matrix, level_of_measurement="interval")
    assert krippendorff_alpha(*_long(matrix)).alpha == pytest.approx(expected, abs=1e-10)


def test_alpha_without_pairable_values_or_variation_is_nan() -> None:
    assert np.isnan(krippendorff_alpha([0, 1, 2], [1, 2, 3]).alpha)
    assert np.isnan(krippendorff_alpha([0, 0, 1, 1], [3, 3, 3, 3]).alpha)


def test_inter_annotator_alpha_uses_the_real_items_judged_by_two_or_more_annotators() -> None:
    rng = np.random.default_rng(4)
    n_annotators, n_outputs = 4, 30
    matrix = np.clip(rng.integers(1, 6, n_outputs) + rng.integers(-1, 2, (4, 30)), 1, 5)
    judged = rng.random(matrix.shape) < 0.6
    annotator, output = np.nonzero(judged)
    segment, system = output // 3, output % 3
    score = matrix[annotator, output].astype(float)
    # QC rows of annotator 0 on the same outputs, and a second REAL judgment by annotator 1 of
    # an output they already judged: none of them may change α.
    first = np.flatnonzero(annotator == 0)[:3]
    again = np.flatnonzero(annotator == 1)[0]
    qc_types = [ItemType.REPEAT, ItemType.BAD_REF, ItemType.REFERENCE]
    judgments = Judgments.from_arrays(
        annotator=np.r_[annotator, [0, 0, 0], 1],
        segment=np.r_[segment, segment[first], segment[again]],
        system=np.r_[system, system[first], system[again]],
        score=np.r_[score, [5, 1, 5], 6 - score[again]],
        item_type=np.r_[np.zeros(len(score), dtype=int), qc_types, ItemType.REAL],
    )
    expected_matrix = np.where(judged, matrix, np.nan)
    levels: tuple[Level, ...] = ("interval", "ordinal")
    for level in levels:
        expected = krippendorff.alpha(expected_matrix, level_of_measurement=level)
        result = inter_annotator_alpha(judgments, level=level)
        assert result.alpha == pytest.approx(expected, abs=1e-12)
    assert result.n_units == int((judged.sum(axis=0) >= 2).sum())
    assert n_annotators == judgments.n_annotators


def test_intra_annotator_alpha_compares_every_repeat_with_its_original() -> None:
    originals = np.array([5, 4, 4, 2, 1, 3, 5, 2], dtype=float)
    repeats = np.array([5, 3, 4, 2, 2, 3, 4, 1], dtype=float)
    n = len(originals)
    judgments = Judgments.from_arrays(
        annotator=np.repeat([0, 1], n),  # four pairs per annotator
        segment=np.tile(np.arange(n // 2), 4),
        system=np.zeros(2 * n, dtype=int),
        score=np.r_[originals[:4], repeats[:4], originals[4:], repeats[4:]],
        item_type=np.tile(np.repeat([ItemType.REAL, ItemType.REPEAT], n // 2), 2),
        original=np.r_[[-1] * 4, 0, 1, 2, 3, [-1] * 4, 8, 9, 10, 11],
    )
    expected = krippendorff.alpha(np.vstack([originals, repeats]), level_of_measurement="interval")
    result = intra_annotator_alpha(judgments)
    assert result.alpha == pytest.approx(expected, abs=1e-12)
    assert (result.n_units, result.n_values) == (n, 2 * n)


def _two_way_rankings() -> Judgments:
    """Screens of two outputs (systems 0 and 1); rank 1 = better, equal ranks = tie.

    segment 0: annotators 0 and 1 prefer system 0, annotator 2 sees a tie;
    segment 1: annotators 0 and 1 prefer system 1;
    segment 2: annotator 0 sees a tie, annotator 1 prefers system 0;
    repeats: annotator 0 again prefers system 1 on segment 1 (agrees with itself),
             annotator 1 now sees a tie on segment 2 (disagrees with itself).
    """
    screens = [  # (annotator, segment, rank of system 0, rank of system 1, type, original screen)
        (0, 0, 1, 2, ItemType.REAL, -1),
        (1, 0, 1, 2, ItemType.REAL, -1),
        (2, 0, 1, 1, ItemType.REAL, -1),
        (0, 1, 2, 1, ItemType.REAL, -1),
        (1, 1, 2, 1, ItemType.REAL, -1),
        (0, 2, 1, 1, ItemType.REAL, -1),
        (1, 2, 1, 2, ItemType.REAL, -1),
        (0, 1, 2, 1, ItemType.REPEAT, 3),
        (1, 2, 1, 1, ItemType.REPEAT, 6),
    ]
    columns: dict[str, list[int]] = {k: [] for k in ("a", "s", "y", "r", "t", "o", "screen")}
    for number, (annotator, segment, rank0, rank1, kind, source) in enumerate(screens):
        for system, rank in ((0, rank0), (1, rank1)):
            columns["a"].append(annotator)
            columns["s"].append(segment)
            columns["y"].append(system)
            columns["r"].append(rank)
            columns["t"].append(kind)
            columns["o"].append(-1 if source < 0 else 2 * source + system)
            columns["screen"].append(number)
    return Judgments.from_arrays(
        annotator=columns["a"],
        segment=columns["s"],
        system=columns["y"],
        score=columns["r"],
        item_type=columns["t"],
        original=columns["o"],
        screen=columns["screen"],
    )


def test_inter_annotator_kappa_of_a_hand_worked_example() -> None:
    # Pairs of different annotators on the same comparison: segment 0 has 3 (one agrees),
    # segment 1 one (agrees), segment 2 one (disagrees): P(A) = 2/5. The 7 REAL comparisons hold
    # 2 ties: P(A=B) = 2/7, P(A>B) = P(A<B) = 5/14, P(E) = 2·(5/14)² + (2/7)² = 33/98.
    # κ = (2/5 − 33/98) / (1 − 33/98) = 6.2/65.
    kappa = ranking_kappa(pairwise_comparisons(_two_way_rankings()))
    assert (kappa.n_pairs, kappa.n_agreements, kappa.n_comparisons) == (5, 2, 7)
    assert kappa.p_agreement == pytest.approx(2 / 5)
    assert kappa.p_tie == pytest.approx(2 / 7)
    assert kappa.p_chance == pytest.approx(33 / 98)
    assert kappa.kappa == pytest.approx(6.2 / 65)


def test_kappa_with_empirical_outcome_rates() -> None:
    # System 0 won 3 of the 7 REAL comparisons, lost 2, tied 2: P(E) = (9 + 4 + 4)/49 = 17/49,
    # κ = (2/5 − 17/49) / (1 − 17/49) = 2.6/32.
    kappa = ranking_kappa(pairwise_comparisons(_two_way_rankings()), chance="empirical")
    assert (kappa.p_better, kappa.p_worse) == pytest.approx((3 / 7, 2 / 7))
    assert kappa.p_chance == pytest.approx(17 / 49)
    assert kappa.kappa == pytest.approx(2.6 / 32)


def test_intra_annotator_kappa_compares_repeats_with_the_original_screen() -> None:
    # One repeat agrees, one does not: P(A) = 1/2; P(E) is still 33/98 from the REAL
    # comparisons, so κ = (1/2 − 33/98) / (65/98) = 16/65.
    kappa = ranking_kappa(pairwise_comparisons(_two_way_rankings()), kind="intra")
    assert (kappa.n_pairs, kappa.n_agreements) == (2, 1)
    assert kappa.kappa == pytest.approx(16 / 65)


def test_unknown_kappa_settings_are_refused() -> None:
    comparisons = pairwise_comparisons(_two_way_rankings())
    with pytest.raises(ValueError, match="unknown kappa kind"):
        ranking_kappa(comparisons, kind="both")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown chance model"):
        ranking_kappa(comparisons, chance="uniform")  # type: ignore[arg-type]
