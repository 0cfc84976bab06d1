"""Position-independent error rate (Koehn eq. 8.6)."""

from __future__ import annotations

import numpy as np

from .lexical import TokenizedMetric, bag_matches, error_rate
from .sacre import LOWERCASE, TOKENIZE
from .spec import MetricSpec


class PER(TokenizedMetric):
    """Position-independent error rate (Koehn eq. 8.6):
    1 − (correct − max(0, output length − reference length)) / reference length."""

    name = "per"
    display_name = "PER"
    higher_is_better = False

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("errors", "ref_len")

    def segment_row(self, hypothesis: list[str], references: list[list[str]]) -> list[float]:
        if not references:
            return [float(len(hypothesis)), 0.0]
        errors = min(
            len(ref) - bag_matches(hypothesis, ref) + max(0, len(hypothesis) - len(ref))
            for ref in references
        )
        return [float(errors), sum(len(r) for r in references) / len(references)]

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        return error_rate(summed)


SPEC = MetricSpec(PER, (TOKENIZE, LOWERCASE))
