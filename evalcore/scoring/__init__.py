"""Automatic MT metrics as per-segment sufficient statistics plus a vectorised corpus score.

Django-free. One module per metric declares its class, its options and its ``SPEC``; the
registry (:mod:`.registry`) lists them. Use :func:`make_metric` to build a metric by name; every
metric has ``statistics(hypotheses, references)`` → ``(n_segments, n_stats)``,
``score_from_statistics`` (the ``score_fn`` of ``evalcore.stats``), ``corpus_score``,
``sentence_scores`` and ``signature``.
"""

from __future__ import annotations

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
from .registry import (
    METRIC_NAMES,
    METRICS,
    MetricOptions,
    make_metric,
    metric_names,
    register,
    registered_options,
)
from .spec import MetricSpec, Option, OptionValues, Source
from .ter import TER
from .wer import WER

__all__ = [
    "BLEU",
    "CHRF",
    "METRICS",
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
    "MetricSpec",
    "MetricUnavailableError",
    "Option",
    "OptionValues",
    "References",
    "Signature",
    "Source",
    "WordFMeasure",
    "WordPrecision",
    "WordRecall",
    "check_corpus",
    "count_references",
    "make_metric",
    "metric_names",
    "register",
    "registered_options",
]
