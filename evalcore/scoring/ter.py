"""TER (Snover et al. 2006) as sacreBLEU computes it, its edits by compiled code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric
from sacrebleu.metrics.ter import TER as SacreTER  # noqa: N811

from .sacre import SacreBackedMetric
from .spec import MetricSpec, Option, Source, gettext_noop


class CompiledSacreTER(SacreTER):
    """sacreBLEU's TER (its tokenizer, options, references and signature) with the edits
    computed by :func:`evalcore.scoring.edit_distance.ter_edits_ids`, which reproduces
    sacreBLEU's ``translation_edit_rate`` step for step at compiled speed: the same statistics,
    to the edit."""

    def _extract_reference_info(self, refs: Sequence[str]) -> dict[str, Any]:
        # imported here: numba takes about a second to import, which only processes that
        # compute TER or WER should pay
        from .edit_distance import vocabulary_of, word_ids

        info = super()._extract_reference_info(refs)
        # each reference's words as ids once, with the vocabulary its hypotheses are read in
        vocabularies = [vocabulary_of(words) for words in info["ref_words"]]
        info["ref_ids"] = [
            (vocabulary, word_ids(words, vocabulary))
            for vocabulary, words in zip(vocabularies, info["ref_words"], strict=True)
        ]
        return info

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[Any]:
        from .edit_distance import ter_edits_ids, word_ids

        # sacreBLEU's loop over the references, with its "fewest edits" and average length
        words_hyp = hypothesis.split()
        best_num_edits = int(1e16)
        ref_lengths = 0
        for vocabulary, ref_ids in ref_kwargs["ref_ids"]:
            num_edits = ter_edits_ids(word_ids(words_hyp, vocabulary), ref_ids)
            ref_lengths += len(ref_ids)
            best_num_edits = min(best_num_edits, num_edits)
        return [best_num_edits, ref_lengths / len(ref_kwargs["ref_ids"])]


class TER(SacreBackedMetric):
    """Translation edit rate (Snover et al. 2006) as sacreBLEU computes it (lower is better).

    Statistics per segment: the fewest edits (shifts included) to any reference and the average
    reference length. Options are sacreBLEU's: normalisation, punctuation removal, Asian support
    and case sensitivity. The edits are computed by compiled code that reproduces sacreBLEU's
    (:class:`CompiledSacreTER`); ``compiled=False`` runs sacreBLEU's own Python code instead, the
    reference the tests compare with (some hundred times slower).
    """

    name = "ter"
    display_name = "TER"
    higher_is_better = False

    def __init__(
        self,
        *,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        compiled: bool = True,
    ) -> None:
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self.compiled = compiled
        super().__init__()

    def _make_sacre(self) -> SacreMetric:
        return (CompiledSacreTER if self.compiled else SacreTER)(
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("edits", "ref_len")

    def prepare(self) -> None:
        if self.compiled:
            from .edit_distance import warm_up

            warm_up()

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        edits, ref = summed[..., 0], summed[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(
                ref > 0, edits / np.where(ref > 0, ref, 1.0), np.where(edits > 0, 1.0, 0.0)
            )
        result: np.ndarray = 100 * rate
        return result


CASE_SENSITIVE = Option(
    "ter_case_sensitive",
    bool,
    False,
    keyword="case_sensitive",
    label=gettext_noop("TER case-sensitive"),
    flags=("--ter-case-sensitive",),
    signature="case",
    source=Source.SACREBLEU_SETTING,
)
NO_PUNCT = Option(
    "ter_no_punct",
    bool,
    False,
    keyword="no_punct",
    label=gettext_noop("TER without punctuation"),
    flags=("--ter-no-punct",),
    signature="punct",
    source=Source.SACREBLEU_SETTING,
)
NORMALIZED = Option(
    "ter_normalized",
    bool,
    False,
    keyword="normalized",
    label=gettext_noop("TER normalised"),
    flags=("--ter-normalized",),
    signature="norm",
    source=Source.SACREBLEU_SETTING,
)
ASIAN_SUPPORT = Option(
    "ter_asian_support",
    bool,
    False,
    keyword="asian_support",
    label=gettext_noop("TER Asian support"),
    flags=("--ter-asian-support",),
    signature="asian",
    source=Source.SACREBLEU_SETTING,
)
SPEC = MetricSpec(TER, (CASE_SENSITIVE, NO_PUNCT, NORMALIZED, ASIAN_SUPPORT), on_command_line=True)
