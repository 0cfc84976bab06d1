"""BLEU (Papineni et al. 2002) with sacreBLEU's tokenizers and smoothing methods; its corpus
formula in vectorised numpy, operation for operation as sacreBLEU's."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric
from sacrebleu.metrics.bleu import BLEU as SacreBLEU  # noqa: N811

from .ngram_counts import CountedInNumpy, bleu_rows
from .sacre import (
    BLEU_TOKENIZERS,
    LOWERCASE,
    SPM_TOKENIZERS,
    TOKENIZE,
    SacreBackedMetric,
    shared_tokenizer,
    spm_model_problem,
)
from .spec import MetricSpec, Option, Source, gettext_noop

# sacreBLEU's floor for log(0) (``sacrebleu.utils.my_log``).
_LOG_ZERO = -9999999999.0


SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


def _log_floor(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        logged: np.ndarray = np.where(p == 0.0, _LOG_ZERO, np.log(np.where(p == 0.0, 1.0, p)))
    return logged


class BLEU(CountedInNumpy, SacreBackedMetric):
    """BLEU (Papineni et al. 2002) with sacreBLEU's tokenisers and smoothing methods.

    Statistics per segment: hypothesis length, closest reference length (ties to the shorter),
    then clipped n-gram matches and hypothesis n-gram totals for n = 1..max order (clipping by the
    largest count in any one reference).
    """

    name = "bleu"
    display_name = "BLEU"

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
    ) -> None:
        if tokenize not in BLEU_TOKENIZERS + SPM_TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenize!r}; choose from {BLEU_TOKENIZERS}")
        if tokenize in SPM_TOKENIZERS and (problem := spm_model_problem(tokenize)):
            raise ValueError(problem)
        if smooth_method not in SMOOTH_METHODS:
            raise ValueError(f"unknown smoothing {smooth_method!r}; choose from {SMOOTH_METHODS}")
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.smooth_method = smooth_method
        default = SacreBLEU.SMOOTH_DEFAULTS[smooth_method]
        chosen = default if smooth_value is None else smooth_value
        self.smooth_value: float = 0.0 if chosen is None else float(chosen)
        self._smooth_value_given = smooth_value
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        super().__init__()

    def _make_sacre(self) -> SacreMetric:
        try:
            sacre = SacreBLEU(
                tokenize=self.tokenize,
                lowercase=self.lowercase,
                smooth_method=self.smooth_method,
                smooth_value=self._smooth_value_given,
                max_ngram_order=self.max_ngram_order,
                effective_order=self.effective_order,
                force=True,
            )
        except (ImportError, RuntimeError) as exc:  # mecab tokenizers need the [ja]/[ko] extras
            raise ValueError(
                f"tokenizer {self.tokenize!r} is not installed here ({exc}); "
                f"install sacrebleu's extra: pip install 'sacrebleu[ja]' or 'sacrebleu[ko]'"
            ) from exc
        sacre.tokenizer = shared_tokenizer(self.tokenize)
        return sacre

    def _numpy_rows(
        self, sacre: Any, work: list[tuple[list[str], list[str]]]
    ) -> list[np.ndarray | None]:
        return bleu_rows(sacre, work)

    def statistics_source(self, n_references: int) -> tuple[Hashable, slice]:
        # Smoothing and effective order act on the sums only: the statistics depend on these.
        return ("bleu", self.tokenize, self.lowercase, self.max_ngram_order), slice(None)

    @property
    def stat_names(self) -> tuple[str, ...]:
        n = self.max_ngram_order
        return (
            "hyp_len",
            "ref_len",
            *(f"correct_{i}" for i in range(1, n + 1)),
            *(f"total_{i}" for i in range(1, n + 1)),
        )

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        return self._score(np.asarray(summed, dtype=np.float64), self.effective_order)

    def sentence_score_from_statistics(self, stats: np.ndarray) -> np.ndarray:
        """Sentence BLEU: the corpus formula on one segment, with effective order (as
        ``sacrebleu.sentence_bleu``) so that a missing higher order does not zero the score."""
        return self._score(np.asarray(stats, dtype=np.float64), True)

    def _score(self, summed: np.ndarray, effective_order: bool) -> np.ndarray:
        # Mirrors sacrebleu.metrics.bleu.BLEU.compute_bleu, vectorised over leading axes.
        n_max = self.max_ngram_order
        sys_len = summed[..., 0]
        ref_len = summed[..., 1]
        correct = summed[..., 2 : 2 + n_max]
        total = summed[..., 2 + n_max : 2 + 2 * n_max]
        shape = sys_len.shape
        with np.errstate(divide="ignore", invalid="ignore"):
            short = sys_len < ref_len
            bp = np.where(
                short,
                np.where(
                    sys_len > 0, np.exp(1.0 - ref_len / np.where(sys_len > 0, sys_len, 1.0)), 0
                ),
                1.0,
            )
            alive = np.ones(shape, dtype=bool)  # False once an order had no hypothesis n-grams
            eff_order = np.full(shape, float(n_max))
            smooth_mteval = np.ones(shape)
            log_sum = np.zeros(shape)
            precisions = []
            for n in range(n_max):
                c = correct[..., n]
                t = total[..., n]
                if self.smooth_method == "add-k" and n > 0:
                    c = c + self.smooth_value
                    t = t + self.smooth_value
                alive = alive & (t != 0)
                if effective_order:
                    eff_order = np.where(alive, n + 1.0, eff_order)
                zero = c == 0
                safe_t = np.where(t == 0, 1.0, t)
                if self.smooth_method == "exp":
                    smooth_mteval = np.where(alive & zero, smooth_mteval * 2, smooth_mteval)
                    smoothed = 100.0 / (smooth_mteval * safe_t)
                elif self.smooth_method == "floor":
                    smoothed = 100.0 * self.smooth_value / safe_t
                else:
                    smoothed = np.zeros(shape)
                p = np.where(alive, np.where(zero, smoothed, 100.0 * c / safe_t), 0.0)
                precisions.append(p)
            for n, p in enumerate(precisions):
                # sacreBLEU sums the logs of the first eff_order precisions, left to right.
                log_sum = log_sum + np.where(n < eff_order, _log_floor(p), 0.0)
            score = bp * np.exp(log_sum / eff_order)
            # sacreBLEU returns 0 when no n-gram of any order matched (issue #141).
            any_match = np.any(correct != 0, axis=-1)
            result: np.ndarray = np.where(any_match, score, 0.0)
        return result

    def details_from_statistics(self, summed: np.ndarray) -> dict[str, float]:
        score = self._sacre._compute_score_from_stats(list(np.asarray(summed, dtype=float)))
        details = {f"precision_{i + 1}": float(p) for i, p in enumerate(score.precisions)}
        details.update(
            bp=float(score.bp),
            ratio=float(score.ratio),
            hyp_len=float(summed[0]),
            ref_len=float(summed[1]),
        )
        return details


SMOOTH_METHOD = Option(
    "smooth_method",
    str,
    "exp",
    label=gettext_noop("BLEU smoothing"),
    flags=("-s", "--smooth-method"),
    signature="smooth",
    choices=SMOOTH_METHODS,
    source=Source.SACREBLEU_SETTING,
)
SMOOTH_VALUE = Option(
    "smooth_value",
    float,
    None,
    nullable=True,
    label=gettext_noop("BLEU smoothing value (floor, add-k)"),
    help="for floor and add-k smoothing",
    flags=("--smooth-value",),
    source=Source.SACREBLEU_SETTING,
)
SPEC = MetricSpec(BLEU, (TOKENIZE, LOWERCASE, SMOOTH_METHOD, SMOOTH_VALUE), on_command_line=True)
