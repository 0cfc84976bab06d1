"""Judgments whose scores are standardised already (a release with z-scores only) are analysed
as given: normalisation keeps them, the raw scale's figures are NaN, system scores in raw space
are refused, and the bad-reference test gives the raw scores' p-values (each test is unchanged by
an annotator's standardisation), checked against scipy on the raw scores."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human import Judgments, normalise
from evalcore.human.judgments import ItemType
from evalcore.human.qc import bad_reference_test, repeat_consistency
from evalcore.human.systems import system_scores

N_ANNOTATORS = 3
N_REAL = 12
N_BAD = 6


def _raw_and_standardised() -> tuple[Judgments, Judgments]:
    """Three annotators' raw 0–100 scores (12 real, 6 bad references of the first 6, 2
    repeats), and the same rows standardised by each annotator's mean and SD of all rows."""
    rng = np.random.default_rng(7)
    annotator, segment, system, score, kind, original = [], [], [], [], [], []
    for a in range(N_ANNOTATORS):
        first = len(score)
        for s in range(N_REAL):
            annotator.append(a)
            segment.append(s // 2)
            system.append(s % 2)
            score.append(float(rng.integers(30, 100)))
            kind.append(ItemType.REAL)
            original.append(-1)
        for s in range(N_BAD):
            annotator.append(a)
            segment.append(s // 2)
            system.append(s % 2)
            score.append(max(0.0, score[first + s] - float(rng.integers(-10, 40))))
            kind.append(ItemType.BAD_REF)
            original.append(first + s)
        for s in range(2):
            annotator.append(a)
            segment.append(s // 2)
            system.append(s % 2)
            score.append(score[first + s] + 3)
            kind.append(ItemType.REPEAT)
            original.append(first + s)
    columns = {
        "annotator": annotator,
        "segment": segment,
        "system": system,
        "item_type": kind,
        "original": original,
    }
    raw = Judgments.from_arrays(score=score, **columns)
    values = np.asarray(score)
    z = np.empty_like(values)
    for a in range(N_ANNOTATORS):
        rows = raw.annotator == a
        z[rows] = (values[rows] - values[rows].mean()) / values[rows].std(ddof=1)
    return raw, Judgments.from_arrays(score=z, standardised=True, **columns)


def test_standardised_scores_are_the_z_scores_as_given_and_have_no_raw_figures() -> None:
    _, given = _raw_and_standardised()
    normalised = normalise(given, basis="all")
    assert np.array_equal(normalised.z, given.score)
    assert np.isnan(normalised.raw).all()
    assert np.isnan(normalised.shifted).all()
    assert np.isnan(normalised.annotator_mean).all()
    assert np.isnan(normalised.annotator_sd).all()
    assert not normalised.degenerate.any()
    assert normalised.annotator_n.tolist() == [N_REAL + N_BAD + 2] * N_ANNOTATORS


def test_a_selection_stays_standardised() -> None:
    _, given = _raw_and_standardised()
    assert given.select(given.annotator == 0).standardised
    assert given.negated().standardised


def test_system_scores_of_standardised_scores_are_their_means_and_raw_space_is_refused() -> None:
    _, given = _raw_and_standardised()
    systems = system_scores(given, normalise(given), space="z", n_bootstrap=0)
    real = given.rows_of(ItemType.REAL, ItemType.REPEAT)
    for code in range(2):
        rows = real & (given.system == code)
        by_segment = [given.score[rows & (given.segment == s)].mean() for s in range(6)]
        assert systems.score[code] == pytest.approx(np.mean(by_segment), abs=1e-12)
    assert np.isnan(systems.mean_raw).all()
    assert np.isnan(systems.mean_shifted).all()
    with pytest.raises(ValueError, match=r"standardised scores .* 'raw' space"):
        system_scores(given, normalise(given), space="raw", n_bootstrap=0)


@pytest.mark.parametrize("test", ["paired_t", "wilcoxon", "mannwhitney"])
@pytest.mark.parametrize("space", ["raw", "z"])
def test_the_bad_reference_test_on_given_z_scores_has_the_raw_scores_p_values(
    test: str, space: str
) -> None:
    raw, given = _raw_and_standardised()
    result = bad_reference_test(given, test=test, space=space)  # type: ignore[arg-type]
    assert result.space == "z"
    scipy_test = {
        "paired_t": stats.ttest_rel,
        "wilcoxon": stats.wilcoxon,
        "mannwhitney": stats.mannwhitneyu,
    }[test]
    for a in range(N_ANNOTATORS):
        bad = np.flatnonzero((raw.annotator == a) & (raw.item_type == ItemType.BAD_REF))
        expected = scipy_test(raw.score[raw.original[bad]], raw.score[bad], alternative="greater")
        assert result.p_value[a] == pytest.approx(expected.pvalue, rel=1e-9)


def test_the_repeat_share_needs_raw_scores_and_pearson_does_not() -> None:
    raw, given = _raw_and_standardised()
    on_raw = repeat_consistency(raw, tolerance=10)
    on_given = repeat_consistency(given, tolerance=10)
    assert np.isnan(on_given.share_within).all()
    assert on_given.n.tolist() == on_raw.n.tolist() == [2] * N_ANNOTATORS
    assert on_given.pearson == pytest.approx(on_raw.pearson, rel=1e-9, nan_ok=True)
