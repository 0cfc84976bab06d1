"""Word f-measure (Koehn eq. 8.4–8.5)."""

from __future__ import annotations

import numpy as np

from .lexical import WordMatches
from .sacre import LOWERCASE, TOKENIZE
from .spec import MetricSpec


class WordFMeasure(WordMatches):
    """Word f-measure (Koehn eq. 8.4–8.5): correct / ((output length + reference length) / 2)."""

    name = "fmeasure"
    display_name = "F-measure"

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return self._ratio(summed[..., 0], (summed[..., 1] + summed[..., 2]) / 2.0)


SPEC = MetricSpec(WordFMeasure, (TOKENIZE, LOWERCASE))
