"""Per-annotator normalisation of scores and the segment × system score matrix.

Judges use a scale differently: some are lenient, some harsh, some use only part of it (Koehn,
*Statistical Machine Translation*, §8.1.1, Fig. 8.3). Two corrections, per annotator (and criterion,
since a :class:`~evalcore.human.judgments.Judgments` table holds one criterion):

- mean shift (Koehn §8.1.1): ``x' = x + (μ_global − μ_a)`` moves every judge's average to the
  global one;
- z-score (Graham et al.; Mathur et al. 2019, "standardised worker scores"): ``z = (x − μ_a) / σ_a``
  with the sample standard deviation (n − 1).

A table of scores that are standardised already (``Judgments.standardised``: a release that
publishes only z-scores) is not standardised again: its z-scores are the values as given, and
what needs the raw scale (raw and shifted scores, μ_a and σ_a) is NaN, since the release does
not hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalcore.human.judgments import (
    BoolArray,
    FloatArray,
    IntArray,
    ItemType,
    Judgments,
    group_count,
    group_mean_sd,
    group_sum,
)

Basis = Literal["real_and_repeat", "all"]
Space = Literal["raw", "shifted", "z"]


@dataclass(frozen=True)
class Normalised:
    """Normalised scores of every row and the per-annotator statistics behind them.

    Attributes:
        basis: which rows the annotator statistics were computed over ("real_and_repeat" or "all").
        raw, shifted, z: one value per row of the judgments table (QC rows included, so QC can
            work in z space). ``shifted`` is NaN for an annotator without basis rows; ``z`` is NaN
            for an annotator flagged ``degenerate``.
        global_mean: μ_global, the mean of all basis rows.
        annotator_mean, annotator_sd, annotator_n: μ_a, σ_a (sample, n − 1) and the number of basis
            rows, indexed by annotator code; NaN when undefined.
        degenerate: annotators whose z-scores are undefined: σ_a = 0 (one score for everything) or
            fewer than two basis rows. Reported rather than divided by zero.
    """

    basis: Basis
    raw: FloatArray
    shifted: FloatArray
    z: FloatArray
    global_mean: float
    annotator_mean: FloatArray
    annotator_sd: FloatArray
    annotator_n: IntArray
    degenerate: BoolArray

    def values(self, space: Space) -> FloatArray:
        """The per-row scores in ``space`` ("raw", "shifted" or "z")."""
        if space == "raw":
            return self.raw
        if space == "shifted":
            return self.shifted
        if space == "z":
            return self.z
        raise ValueError(f"unknown score space {space!r}; use 'raw', 'shifted' or 'z'")


def basis_rows(judgments: Judgments, basis: Basis) -> BoolArray:
    """The rows that annotator statistics are computed over.

    "real_and_repeat" (default of :func:`normalise`): REAL and REPEAT rows, so QC items with an
    expected answer (references, degraded outputs) do not move μ_a and σ_a. "all": every row, as
    the original DA scripts did.

    Either way an answer counts once: rows that credit another system with a merged answer
    (``Judgments.credit_of``) are left out, so an annotator's μ_a and σ_a are those of the
    answers they gave, and the normalised score is then credited to every system (as WMT's
    scripts expand a collapsed output's score after normalisation).
    """
    if basis == "real_and_repeat":
        return judgments.rows_of(ItemType.REAL, ItemType.REPEAT) & judgments.answers
    if basis == "all":
        return judgments.answers.copy()
    raise ValueError(f"unknown basis {basis!r}; use 'real_and_repeat' or 'all'")


def normalise(judgments: Judgments, *, basis: Basis = "real_and_repeat") -> Normalised:
    """Mean-shifted and z-scores of every row, from per-annotator statistics over ``basis`` rows.

    Formulas (per annotator a, over its basis rows):
        μ_a = mean(x), σ_a = sqrt(Σ (x − μ_a)² / (n_a − 1)),
        μ_global = mean over the basis rows of all annotators,
        shifted = x + (μ_global − μ_a)            (Koehn §8.1.1),
        z = (x − μ_a) / σ_a                        (Mathur et al. 2019, standardised scores).

    The statistics come from the basis rows but are applied to every row, QC rows included.
    Annotators with σ_a = 0 or n_a < 2 are flagged ``degenerate`` and get z = NaN.

    Standardised judgments (``judgments.standardised``) are returned as :func:`as_given`
    returns them.
    """
    rows = basis_rows(judgments, basis)
    n_annotators = judgments.n_annotators
    if judgments.standardised:
        return as_given(judgments, basis=basis)
    mean, sd, count = group_mean_sd(judgments.annotator[rows], judgments.score[rows], n_annotators)
    global_mean = float(judgments.score[rows].mean()) if rows.any() else float("nan")
    degenerate = ~(sd > 0)  # NaN (n < 2) compares False, so it counts as degenerate too
    row_mean = mean[judgments.annotator]
    row_sd = sd[judgments.annotator]
    shifted = judgments.score + (global_mean - row_mean)
    z = np.full(len(judgments), np.nan)
    usable = ~degenerate[judgments.annotator]
    z[usable] = (judgments.score[usable] - row_mean[usable]) / row_sd[usable]
    return Normalised(
        basis=basis,
        raw=judgments.score,
        shifted=shifted,
        z=z,
        global_mean=global_mean,
        annotator_mean=mean,
        annotator_sd=sd,
        annotator_n=count,
        degenerate=degenerate,
    )


def as_given(judgments: Judgments, *, basis: Basis = "real_and_repeat") -> Normalised:
    """Scores that are z-scores already, as given: ``z`` is the score of every row (so the
    system means are the release's own), none is degenerate; ``raw``, ``shifted``, μ_global,
    μ_a and σ_a are NaN, because the raw scores they are figures of are not in the release
    (no figure of the z-scores is passed off as one of them). ``annotator_n`` still counts the
    basis rows."""
    rows = basis_rows(judgments, basis)
    unknown = np.full(len(judgments), np.nan)
    per_annotator = np.full(judgments.n_annotators, np.nan)
    return Normalised(
        basis=basis,
        raw=unknown,
        shifted=unknown.copy(),
        z=judgments.score.copy(),
        global_mean=float("nan"),
        annotator_mean=per_annotator,
        annotator_sd=per_annotator.copy(),
        annotator_n=group_count(judgments.annotator[rows], judgments.n_annotators),
        degenerate=np.zeros(judgments.n_annotators, dtype=bool),
    )


@dataclass(frozen=True)
class SegmentScores:
    """Segment-level scores per system: ``mean[y, s]`` is the mean of the judgments of system y on
    segment s (NaN where there is none), ``count[y, s]`` their number."""

    mean: FloatArray
    count: IntArray


def segment_scores(judgments: Judgments, values: FloatArray, rows: BoolArray) -> SegmentScores:
    """Mean of ``values`` over the selected rows per (system, segment): the segment scores.

    Rows whose value is not finite (z of a degenerate annotator) are left out. The result is a
    dense ``(n_systems, n_segments)`` matrix, the input of system scores and of the paired tests.
    """
    use = rows & np.isfinite(values)
    n_units = judgments.n_systems * judgments.n_segments
    unit = judgments.system[use] * judgments.n_segments + judgments.segment[use]
    total = group_sum(unit, values[use], n_units)
    count = group_count(unit, n_units)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    shape = (judgments.n_systems, judgments.n_segments)
    return SegmentScores(mean=mean.reshape(shape), count=count.reshape(shape))
