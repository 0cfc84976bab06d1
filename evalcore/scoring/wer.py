"""Word error rate (Koehn eq. 8.7)."""

from __future__ import annotations

import numpy as np

from .lexical import TokenizedMetric, error_rate, word_edit_distance
from .sacre import LOWERCASE, TOKENIZE
from .spec import MetricSpec


class WER(TokenizedMetric):
    """Word error rate (Koehn eq. 8.7): word Levenshtein distance / reference length."""

    name = "wer"
    display_name = "WER"
    higher_is_better = False

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("edits", "ref_len")

    def prepare(self) -> None:
        from .edit_distance import warm_up

        warm_up()

    def segment_row(self, hypothesis: list[str], references: list[list[str]]) -> list[float]:
        if not references:
            return [float(len(hypothesis)), 0.0]
        edits = min(word_edit_distance(hypothesis, ref) for ref in references)
        return [float(edits), sum(len(r) for r in references) / len(references)]

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        return error_rate(summed)


SPEC = MetricSpec(WER, (TOKENIZE, LOWERCASE))
