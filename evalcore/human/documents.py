"""Document-level scores: one 0–100 score per annotator and document screen (a whole document
or a window of it), analysed as direct assessment analyses segment scores (DESIGN §5–6), with
the screen's window in place of a segment.

The input is a :class:`~evalcore.human.judgments.Judgments` table whose "segments" are the
windows (the same window shown in every system's translation shares a code) and whose rows are
the document scores. Annotators are normalised over their own document scores (z per annotator
and protocol, as DA's), never mixed with their segment scores; system scores are the mean over
windows of the window means, with percentile-bootstrap intervals over windows, in raw and z
space from the same resamples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.human.judgments import BoolArray, Judgments
from evalcore.human.normalisation import Basis, Normalised, normalise
from evalcore.human.systems import (
    DEFAULT_CONFIDENCE,
    SystemScores,
    seed_for_calls,
    system_scores,
)


@dataclass(frozen=True)
class DocumentScores:
    """The document-level analysis: the normalised scores of every row, and the system scores
    with their bootstrap intervals in raw space (``raw``) and in z space (``z``). Both come from
    the same window resamples (``seed``)."""

    normalised: Normalised
    raw: SystemScores
    z: SystemScores
    seed: int


def document_scores(
    judgments: Judgments,
    *,
    include: BoolArray | None = None,
    basis: Basis = "real_and_repeat",
    confidence: float = DEFAULT_CONFIDENCE,
    n_bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> DocumentScores:
    """Analyse document-level scores (rows: one annotator's score of one window shown in one
    system's translation; ``segment`` codes: windows).

    z = (x − μ_a)/σ_a over annotator a's ``basis`` rows of this table (sample SD, n − 1), as
    :func:`~evalcore.human.normalisation.normalise`; system score = mean over its windows of the
    mean of that window's scores (REAL and REPEAT rows of the ``include``d annotators);
    bootstrap interval: windows resampled with replacement ``n_bootstrap`` times, the central
    ``confidence`` share of the resampled means (:func:`~evalcore.human.systems.system_scores`).
    """
    # One seed for both calls: raw and z intervals from the same resamples.
    seed = seed_for_calls(rng)
    normalised = normalise(judgments, basis=basis)
    spaces = [
        system_scores(
            judgments,
            normalised,
            include=include,
            space=space,
            confidence=confidence,
            n_bootstrap=n_bootstrap,
            rng=seed,
        )
        for space in ("raw", "z")
    ]
    return DocumentScores(normalised=normalised, raw=spaces[0], z=spaces[1], seed=seed)
