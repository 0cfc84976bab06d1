"""MultEval's Length: the hypotheses' length against BLEU's closest reference length."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric

from evalcore.version import signature_version

from .base import References
from .bleu import BLEU
from .sacre import LOWERCASE, TOKENIZE, SacreBackedMetric
from .spec import MetricSpec


class Length(SacreBackedMetric):
    """MultEval's "Length": 100 · Σ hypothesis length / Σ closest reference length.

    Lengths are counted in the tokens of the chosen BLEU tokenizer, and the closest reference
    length is BLEU's (ties to the shorter), so Length is BLEU's ``ratio`` in percent.
    """

    name = "length"
    display_name = "Length"
    higher_is_better = True  # neither, really: 100 is the target; the table shows it as is

    def __init__(self, *, tokenize: str = "13a", lowercase: bool = False) -> None:
        self._bleu = BLEU(tokenize=tokenize, lowercase=lowercase)
        self.tokenize = tokenize
        self.lowercase = lowercase
        super().__init__()

    def _make_sacre(self) -> SacreMetric:
        sacre: SacreMetric = self._bleu._sacre
        return sacre

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sacre = self._bleu._sacre

    def statistics_source(self, n_references: int) -> tuple[Hashable, slice]:
        key, _ = self._bleu.statistics_source(n_references)
        return key, slice(0, 2)

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("hyp_len", "ref_len")

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        return self._bleu.statistics(hypotheses, references)[:, :2]

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        return self._bleu.statistics_for_segment(references, hypotheses)[:, :2]

    def statistics_for_segments(
        self, work: Sequence[tuple[Sequence[str | None], Sequence[str]]]
    ) -> np.ndarray:
        return self._bleu.statistics_for_segments(work)[:, :2]

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        hyp, ref = summed[..., 0], summed[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = np.where(ref > 0, 100.0 * hyp / np.where(ref > 0, ref, 1.0), 0.0)
        return result

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        info = self._bleu.sacre_signature_info(n_refs)
        return {
            "nrefs": info["nrefs"],
            "case": info["case"],
            "tok": info["tok"],
            "version": signature_version(),
        }


SPEC = MetricSpec(Length, (TOKENIZE, LOWERCASE), on_command_line=True)
