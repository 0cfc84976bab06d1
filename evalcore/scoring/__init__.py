"""Automatic MT metrics as per-segment sufficient statistics plus a vectorised corpus score.

Django-free. Use :func:`make_metric` to build a metric by name; every metric has
``statistics(hypotheses, references)`` → ``(n_segments, n_stats)``, ``score_from_statistics``
(the ``score_fn`` of ``evalcore.stats``), ``corpus_score``, ``sentence_scores`` and ``signature``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import (
    CorpusScore,
    Metric,
    MetricUnavailableError,
    References,
    Signature,
    check_corpus,
    count_references,
)
from .bleu import BLEU
from .chrf import CHRF
from .chrf_plus import CHRFPlusPlus
from .fmeasure import WordFMeasure
from .lemma import LemmaOverlap
from .length import Length
from .per import PER
from .precision import WordPrecision
from .recall import WordRecall
from .ter import TER
from .wer import WER

__all__ = [
    "BLEU",
    "CHRF",
    "METRIC_NAMES",
    "PER",
    "TER",
    "WER",
    "CHRFPlusPlus",
    "CorpusScore",
    "LemmaOverlap",
    "Length",
    "Metric",
    "MetricOptions",
    "MetricUnavailableError",
    "References",
    "Signature",
    "WordFMeasure",
    "WordPrecision",
    "WordRecall",
    "check_corpus",
    "count_references",
    "make_metric",
]

METRIC_NAMES: tuple[str, ...] = (
    "bleu",
    "chrf",
    "chrf++",
    "ter",
    "length",
    "wer",
    "per",
    "precision",
    "recall",
    "fmeasure",
    "lemma_overlap",
    "bertr",
)


@dataclass(frozen=True)
class MetricOptions:
    """Settings shared by the metrics that use them; each metric takes the ones it knows."""

    tokenize: str = "13a"
    """sacreBLEU tokenizer for BLEU, Length and the word metrics."""
    lowercase: bool = False
    """Case-insensitive BLEU, Length and word metrics (sacreBLEU's ``-lc``; chrF and TER have
    their own case options)."""
    smooth_method: str = "exp"
    smooth_value: float | None = None
    chrf_char_order: int = 6
    chrf_word_order: int = 0
    chrf_beta: int = 2
    chrf_whitespace: bool = False
    chrf_lowercase: bool = False
    chrf_eps_smoothing: bool = False
    ter_case_sensitive: bool = False
    ter_normalized: bool = False
    ter_no_punct: bool = False
    ter_asian_support: bool = False
    lang: str = "en"
    """Target language for lemma overlap (simplemma and stop words)."""


def make_metric(name: str, options: MetricOptions | None = None) -> Metric:
    """Build the metric called ``name`` (one of :data:`METRIC_NAMES`) with ``options``.

    Raises ValueError for an unknown name and MetricUnavailableError when the metric's optional
    dependencies are missing (BERTR without the ``neural`` extra).
    """
    o = options or MetricOptions()
    word: dict[str, Any] = {"tokenize": o.tokenize, "lowercase": o.lowercase}
    if name == "bleu":
        return BLEU(smooth_method=o.smooth_method, smooth_value=o.smooth_value, **word)
    chrf: dict[str, Any] = {
        "char_order": o.chrf_char_order,
        "beta": o.chrf_beta,
        "whitespace": o.chrf_whitespace,
        "lowercase": o.chrf_lowercase,
        "eps_smoothing": o.chrf_eps_smoothing,
    }
    if name == "chrf":
        return CHRF(word_order=o.chrf_word_order, **chrf)
    if name == "chrf++":
        return CHRFPlusPlus(**chrf)
    if name == "ter":
        return TER(
            normalized=o.ter_normalized,
            no_punct=o.ter_no_punct,
            asian_support=o.ter_asian_support,
            case_sensitive=o.ter_case_sensitive,
        )
    if name == "length":
        return Length(**word)
    if name == "wer":
        return WER(**word)
    if name == "per":
        return PER(**word)
    if name == "precision":
        return WordPrecision(**word)
    if name == "recall":
        return WordRecall(**word)
    if name == "fmeasure":
        return WordFMeasure(**word)
    if name == "lemma_overlap":
        return LemmaOverlap(lang=o.lang)
    if name == "bertr":
        from .bertr import BERTR  # imports torch lazily, only when asked for

        return BERTR()
    raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRIC_NAMES)}")
