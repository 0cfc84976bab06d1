"""What the metrics whose statistics come from sacreBLEU share: its tokenizers, and the base
class that computes per-segment statistics with a sacreBLEU metric object.

Tokenisation and per-segment statistics are sacreBLEU's own code (pinned to 2.6.x, whose
internal ``_extract_corpus_statistics``/``_compute_segment_statistics`` we call), so they cannot
drift from it; BLEU's and chrF's n-gram counts are the exception, counted in numpy by
:mod:`.ngram_counts` with sacreBLEU's integers (its tests compare them with sacreBLEU's own
code), and TER's edits by the compiled kernel (:class:`.ter.CompiledSacreTER`). A process has one
tokenizer object of each kind (:func:`shared_tokenizer`), so a line is tokenised once for every
metric. The corpus formulas (:mod:`.bleu`, :mod:`.chrf`, :mod:`.ter`, :mod:`.length`) are
re-written in vectorised numpy, operation for operation as sacreBLEU writes them, so that one
call scores thousands of resamples; the tests hold them to sacreBLEU's corpus scores within 1e-9.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric
from sacrebleu.metrics.bleu import _get_tokenizer

from .base import Metric, References, check_corpus
from .spec import Option, Source, gettext_noop


@cache
def shared_tokenizer(name: str) -> Callable[[str], str]:
    """The process's one sacreBLEU tokenizer of ``name``. sacreBLEU keeps tokenised lines in a
    cache keyed by the tokenizer object and the line, so BLEU, Length and the word metrics
    (WER, PER, precision, recall, F-measure) tokenise a line once between them instead of once
    each: the same object, the same code, the same tokens."""
    tokenizer: Callable[[str], str] = _get_tokenizer(name)()
    return tokenizer


BLEU_TOKENIZERS = ("13a", "intl", "zh", "char", "none", "ja-mecab", "ko-mecab")
# sacreBLEU's SentencePiece tokenizers: usable where their model file is present locally (sacreBLEU
# would download it; EvalSite downloads nothing) and the sentencepiece package is installed.
SPM_TOKENIZERS = ("flores101", "flores200", "spm")


def spm_model_problem(tokenize: str) -> str | None:
    """Why sacreBLEU's SentencePiece tokenizer ``tokenize`` cannot run here (naming the file
    or package that is missing), or None when it can."""
    import importlib.util
    import os

    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS
    from sacrebleu.utils import SACREBLEU_DIR

    path = os.path.join(SACREBLEU_DIR, "models", os.path.basename(SPM_MODELS[tokenize]["url"]))
    if not os.path.exists(path):
        return (
            f"the {tokenize} tokenizer needs its SentencePiece model at {path}, which is "
            "missing: copy it there (sacreBLEU downloads it; EvalSite downloads nothing)"
        )
    if importlib.util.find_spec("sentencepiece") is None:
        return f"the {tokenize} tokenizer needs the sentencepiece package, which is not installed"
    return None


def tokenizer_problem(tokenize: str) -> str | None:
    """Why the tokenizer cannot be used here (unknown, or its model file missing), or None."""
    if tokenize in SPM_TOKENIZERS:
        return spm_model_problem(tokenize)
    if tokenize not in BLEU_TOKENIZERS:
        return (
            f"unknown tokenizer {tokenize}; choose from "
            f"{', '.join(BLEU_TOKENIZERS + SPM_TOKENIZERS)}"
        )
    return None


# The options of BLEU, Length and the word metrics (WER, PER, precision, recall, F-measure).
TOKENIZE = Option(
    "tokenize",
    str,
    "13a",
    label=gettext_noop("Tokenizer"),
    help=f"tokenizer: {' '.join(BLEU_TOKENIZERS + SPM_TOKENIZERS)} (the last three need their "
    "SentencePiece model present locally)",
    flags=("-tok", "--tokenize"),
    signature="tok",
    choices=BLEU_TOKENIZERS,
    problem=tokenizer_problem,
    source=Source.SETTING,
)
LOWERCASE = Option(
    "lowercase",
    bool,
    False,
    # A campaign's one switch lowercases chrF too (chrF's own option follows it).
    label=gettext_noop("Lowercase (BLEU, chrF, Length, word metrics)"),
    help="case-insensitive BLEU (and Length and the word metrics); not chrF or TER",
    flags=("-lc", "--lowercase"),
    signature="case",
    source=Source.SETTING,
)


class SacreBackedMetric(Metric):
    """A metric whose per-segment statistics are computed by a sacreBLEU metric object."""

    def __init__(self) -> None:
        self._sacre = self._make_sacre()

    def _make_sacre(self) -> SacreMetric:
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        # sacreBLEU objects hold tokenizer caches; worker processes rebuild them instead.
        state = self.__dict__.copy()
        state.pop("_sacre", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sacre = self._make_sacre()

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        """Per-segment statistics exactly as sacreBLEU extracts them."""
        check_corpus(hypotheses, references)
        if len(hypotheses) == 0:
            return np.zeros((0, len(self.stat_names)))
        rows = self._sacre._extract_corpus_statistics(list(hypotheses), references)
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), len(self.stat_names))

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        """Statistics of several hypotheses of one segment, the references prepared once."""
        # sacreBLEU accepts None for a missing reference although its hints say str.
        streams: Any = [[ref] for ref in references]
        ref_info = self._sacre._cache_references(streams)[0]
        rows = [
            self._sacre._compute_segment_statistics(self._sacre._preprocess_segment(h), ref_info)
            for h in hypotheses
        ]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), len(self.stat_names))

    def sacre_signature_info(self, n_refs: int | str) -> dict[str, Any]:
        """sacreBLEU's own signature fields for this configuration."""
        # the signature reads num_refs, which sacreBLEU sets while caching references
        setattr(self._sacre, "num_refs", -1 if n_refs == "var" else n_refs)  # noqa: B010
        return dict(self._sacre.get_signature().info)

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        return self.sacre_signature_info(n_refs)
