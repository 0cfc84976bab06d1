"""Word recall (Koehn eq. 8.3)."""

from __future__ import annotations

import numpy as np

from .lexical import WordMatches
from .sacre import LOWERCASE, TOKENIZE
from .spec import MetricSpec


class WordRecall(WordMatches):
    """Word recall (Koehn eq. 8.3): correct / reference length."""

    name = "recall"
    display_name = "Recall"

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return self._ratio(summed[..., 0], summed[..., 2])


SPEC = MetricSpec(WordRecall, (TOKENIZE, LOWERCASE))
