"""Content-lemma overlap: an approximation of SemPOS (Kos & Bojar, eq. 1 with a single class).

SemPOS compares the lemmas of autosemantic (content) words per semantic part of speech,
obtained from a deep-syntactic analysis: O(t) = Σ min(cnt(w, t, r), cnt(w, t, c)) / Σ max(...).
We have no tagger or tectogrammatical parser, so this metric

* takes every token that contains a letter as a candidate content word,
* lemmatises it with ``simplemma`` (a dictionary lemmatiser, no context),
* drops stop words (``stopwordsiso`` list for the language), as a stand-in for "autosemantic",
* and puts all words into one class, so no macro-average over parts of speech.

It is therefore *not* SemPOS, and is named ``lemma_overlap``; it keeps SemPOS's main idea —
matching lemmas, not surface forms, and ignoring order — which is what helps for morphologically
rich target languages. Score: 100 · Σ min / Σ max over the corpus (statistics ``[Σ min, Σ max]``
per segment); with several references, the one with the highest overlap counts. A blank candidate
and reference score zero, as in SemPOS.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import version
from typing import Any

import numpy as np
import simplemma
import stopwordsiso

from evalcore.version import signature_version

from .base import Metric, References, check_corpus
from .spec import MetricSpec, Option, Source, gettext_noop

_WORD = re.compile(r"\w+(?:[-'’]\w+)*", re.UNICODE)
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


@lru_cache(maxsize=32)
def _stopwords(lang: str) -> frozenset[str]:
    if not stopwordsiso.has_lang(lang):
        return frozenset()
    return frozenset(w.lower() for w in stopwordsiso.stopwords(lang))


@lru_cache(maxsize=2**17)
def _content_lemma(token: str, lang: str) -> str | None:
    """A token's lowercased lemma, or None for a number or a stop word (by its form or its
    lemma): a function of the token alone, so each word of a corpus is lemmatised once."""
    if not _LETTER.search(token):
        return None  # numbers carry no lemma
    lemma: str = simplemma.lemmatize(token, lang=lang).lower()
    stop = _stopwords(lang)
    if token.lower() in stop or lemma in stop:
        return None
    return lemma


class LemmaOverlap(Metric):
    """Σ min / Σ max of content-lemma counts (single-class SemPOS approximation), in percent."""

    name = "lemma_overlap"
    display_name = "LemmaOverlap"

    def __init__(self, *, lang: str = "en") -> None:
        self.lang = lang

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("min_sum", "max_sum")

    def content_lemmas(self, text: str) -> Counter[str]:
        """Counts of the lowercased lemmas of the content words of one line."""
        found = (_content_lemma(token, self.lang) for token in _WORD.findall(text))
        return Counter(lemma for lemma in found if lemma is not None)

    @staticmethod
    def _overlap(hyp: Counter[str], ref: Counter[str]) -> tuple[float, float]:
        words = hyp.keys() | ref.keys()
        low = sum(min(hyp[w], ref[w]) for w in words)
        high = sum(max(hyp[w], ref[w]) for w in words)
        return float(low), float(high)

    def _row(self, hyp: Counter[str], refs: list[Counter[str]]) -> list[float]:
        best = (0.0, float(sum(hyp.values())))
        best_ratio = -1.0
        for ref in refs:
            low, high = self._overlap(hyp, ref)
            ratio = low / high if high else 0.0
            if ratio > best_ratio:
                best_ratio = ratio
                best = (low, high)
        return list(best)

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        check_corpus(hypotheses, references)
        rows = []
        for i, hypothesis in enumerate(hypotheses):
            refs = [self.content_lemmas(s[i]) for s in references if s[i] is not None]
            rows.append(self._row(self.content_lemmas(hypothesis), refs))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        """Statistics of several hypotheses of one segment, the references lemmatised once."""
        refs = [self.content_lemmas(r) for r in references if r is not None]
        rows = [self._row(self.content_lemmas(h), refs) for h in hypotheses]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        low, high = summed[..., 0], summed[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            result: np.ndarray = np.where(high > 0, 100.0 * low / np.where(high > 0, high, 1), 0)
        return result

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        return {
            "nrefs": n_refs,
            "lang": self.lang,
            "lemmas": f"simplemma-{version('simplemma')}",
            "stop": f"stopwordsiso-{version('stopwordsiso')}",
            "version": signature_version(),
        }


LANG = Option(
    "lang",
    str,
    "en",
    label=gettext_noop("Target language"),
    help="target language for lemma_overlap (ISO 639-1)",
    signature="lang",
    source=Source.TARGET_LANGUAGE,
)
SPEC = MetricSpec(LemmaOverlap, (LANG,))
