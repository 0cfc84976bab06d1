"""What the word-level metrics of Koehn §8.2 share: WER (:mod:`.wer`), PER (:mod:`.per`), and
word precision, recall and f-measure (:mod:`.precision`, :mod:`.recall`, :mod:`.fmeasure`).

Words are the tokens of a sacreBLEU tokenizer (13a by default, ``none`` to split on spaces only),
optionally lowercased. All scores are percentages. With several references:

* WER and PER take the fewest errors against any reference and divide by the *average*
  reference length, the convention sacreBLEU's TER uses for multiple references;
* precision, recall and f-measure use the reference with the highest f-measure (first on ties).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from evalcore.version import signature_version

from .base import Metric, References, check_corpus
from .sacre import shared_tokenizer


def word_edit_distance(hypothesis: Sequence[str], reference: Sequence[str]) -> int:
    """Levenshtein distance between two word sequences (insertions, deletions, substitutions),
    by the compiled kernel that TER's edit distance also uses
    (:func:`evalcore.scoring.edit_distance.levenshtein`)."""
    from .edit_distance import levenshtein  # numba only where WER or TER is computed

    return levenshtein(hypothesis, reference)


def bag_matches(hypothesis: Sequence[str], reference: Sequence[str]) -> int:
    """Words of the hypothesis that also occur in the reference, each reference word used once
    (Koehn's position-independent "correct")."""
    hyp_counts = Counter(hypothesis)
    ref_counts = Counter(reference)
    return sum(min(count, ref_counts[word]) for word, count in hyp_counts.items())


class TokenizedMetric(Metric):
    """Base for metrics on sacreBLEU-tokenised words."""

    def __init__(self, *, tokenize: str = "13a", lowercase: bool = False) -> None:
        self.tokenize = tokenize
        self.lowercase = lowercase
        self._tokenizer: Callable[[str], str] = shared_tokenizer(tokenize)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_tokenizer", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tokenizer = shared_tokenizer(self.tokenize)

    def words(self, text: str) -> list[str]:
        """The tokens of one line, as BLEU would see them."""
        if self.lowercase:
            text = text.lower()
        return self._tokenizer(text.rstrip()).split()

    def segment_row(self, hypothesis: list[str], references: list[list[str]]) -> list[float]:
        """One row of statistics from tokenised words."""
        raise NotImplementedError

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        check_corpus(hypotheses, references)
        rows = []
        for i, hypothesis in enumerate(hypotheses):
            refs = [self.words(stream[i]) for stream in references if stream[i] is not None]
            rows.append(self.segment_row(self.words(hypothesis), refs))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), len(self.stat_names))

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        """Statistics of several hypotheses of one segment, the references tokenised once."""
        refs = [self.words(r) for r in references if r is not None]
        rows = [self.segment_row(self.words(h), refs) for h in hypotheses]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), len(self.stat_names))

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        return {
            "nrefs": n_refs,
            "case": "lc" if self.lowercase else "mixed",
            "tok": self._tokenizer_signature(),
            "version": signature_version(),
        }

    def _tokenizer_signature(self) -> str:
        signature = getattr(self._tokenizer, "signature", None)
        return str(signature()) if callable(signature) else self.tokenize


def error_rate(summed: np.ndarray) -> np.ndarray:
    """100 · errors / reference length; an empty reference scores 100 if anything was output."""
    summed = np.asarray(summed, dtype=np.float64)
    errors, ref = summed[..., 0], summed[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(
            ref > 0, errors / np.where(ref > 0, ref, 1.0), np.where(errors > 0, 1.0, 0.0)
        )
    result: np.ndarray = 100.0 * rate
    return result


class WordMatches(TokenizedMetric):
    """Statistics ``[correct, output length, reference length]`` of position-independent word
    matches against the reference with the best f-measure."""

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("correct", "hyp_len", "ref_len")

    def statistics_source(self, n_references: int) -> tuple[Hashable, slice]:
        # Precision, recall and F-measure differ in their scores only.
        return ("word_matches", self.tokenize, self.lowercase), slice(None)

    def segment_row(self, hypothesis: list[str], references: list[list[str]]) -> list[float]:
        best: list[float] = [0.0, float(len(hypothesis)), 0.0]
        best_f = -1.0
        for ref in references:
            correct = bag_matches(hypothesis, ref)
            length = len(hypothesis) + len(ref)
            f = 2 * correct / length if length else 0.0
            if f > best_f:
                best_f = f
                best = [float(correct), float(len(hypothesis)), float(len(ref))]
        return best

    @staticmethod
    def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = np.where(
                denominator > 0, 100.0 * numerator / np.where(denominator > 0, denominator, 1), 0
            )
        return result
