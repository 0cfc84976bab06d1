"""Word precision (Koehn eq. 8.2)."""

from __future__ import annotations

import numpy as np

from .lexical import WordMatches
from .sacre import LOWERCASE, TOKENIZE
from .spec import MetricSpec


class WordPrecision(WordMatches):
    """Word precision (Koehn eq. 8.2): correct / output length."""

    name = "precision"
    display_name = "Precision"

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return self._ratio(summed[..., 0], summed[..., 1])


SPEC = MetricSpec(WordPrecision, (TOKENIZE, LOWERCASE))
