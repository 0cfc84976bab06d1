"""chrF (Popović 2015) as sacreBLEU computes it; its F-score in vectorised numpy, operation for
operation as sacreBLEU's."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric
from sacrebleu.metrics.chrf import CHRF as SacreCHRF  # noqa: N811

from .ngram_counts import CountedInNumpy, chrf_rows
from .sacre import SacreBackedMetric
from .spec import MetricSpec, Option, Source, gettext_noop

# chrF++'s word order, whose statistics contain chrF's (CHRF.statistics_source).
_CHRF_PLUS_WORD_ORDER = 2


class CHRF(CountedInNumpy, SacreBackedMetric):
    """chrF (Popović 2015) and chrF++ (word order 2), β = 2, character order 6 by default.

    Statistics per segment: for each character order then each word order, the hypothesis
    n-gram count, the reference n-gram count and the matches, taken from the reference with the
    best sentence-level F-score (as sacreBLEU does).
    """

    name = "chrf"
    display_name = "chrF"

    def __init__(
        self,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
    ) -> None:
        self.char_order = char_order
        self.word_order = word_order
        self.beta = beta
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        super().__init__()

    def _make_sacre(self) -> SacreMetric:
        return SacreCHRF(
            char_order=self.char_order,
            word_order=self.word_order,
            beta=self.beta,
            lowercase=self.lowercase,
            whitespace=self.whitespace,
            eps_smoothing=self.eps_smoothing,
        )

    @property
    def stat_names(self) -> tuple[str, ...]:
        names = []
        for kind, order in (("char", self.char_order), ("word", self.word_order)):
            for n in range(1, order + 1):
                names += [f"{kind}{n}_hyp", f"{kind}{n}_ref", f"{kind}{n}_match"]
        return tuple(names)

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        # Mirrors sacrebleu.metrics.chrf.CHRF._compute_f_score, vectorised over leading axes.
        summed = np.asarray(summed, dtype=np.float64)
        order = self.char_order + self.word_order
        eps = 1e-16
        factor = float(self.beta**2)
        shape = summed.shape[:-1]
        score = np.zeros(shape)
        avg_prec = np.zeros(shape)
        avg_rec = np.zeros(shape)
        effective = np.zeros(shape)
        # Each order's terms in place, in buffers of their own: the same operations in the same
        # order as sacreBLEU's (so the same floats), without a new array for each step (the
        # approximate randomisation scores 10,000 trials of every pair of systems at once).
        prec, rec, denom, term = (np.empty(shape) for _ in range(4))
        has_hyp, has_ref, both = (np.empty(shape, dtype=bool) for _ in range(3))
        columns = np.ascontiguousarray(np.moveaxis(summed, -1, 0))  # each statistic contiguous
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(order):
                n_hyp, n_ref, n_match = columns[3 * i : 3 * i + 3]
                np.greater(n_hyp, 0, out=has_hyp)
                np.greater(n_ref, 0, out=has_ref)
                prec.fill(eps)
                np.divide(n_match, n_hyp, out=prec, where=has_hyp)
                rec.fill(eps)
                np.divide(n_match, n_ref, out=rec, where=has_ref)
                np.multiply(factor, prec, out=denom)
                denom += rec
                np.multiply(1 + factor, prec, out=term)
                term *= rec
                np.divide(term, denom, out=term)
                np.copyto(term, eps, where=~(denom > 0))
                score += term
                np.logical_and(has_hyp, has_ref, out=both)
                np.add(avg_prec, prec, out=avg_prec, where=both)
                np.add(avg_rec, rec, out=avg_rec, where=both)
                effective += both
            if self.eps_smoothing:
                eps_result: np.ndarray = 100 * score / order
                return eps_result
            safe_eff = np.where(effective == 0, 1.0, effective)
            avg_prec = np.where(effective == 0, 0.0, avg_prec / safe_eff)
            avg_rec = np.where(effective == 0, 0.0, avg_rec / safe_eff)
            total = avg_prec + avg_rec
            f = (1 + factor) * avg_prec * avg_rec
            f = f / np.where(total != 0, (factor * avg_prec) + avg_rec, 1.0)
            result: np.ndarray = np.where(total != 0, 100 * f, 0.0)
        return result

    def statistics_source(self, n_references: int) -> tuple[Hashable, slice]:
        if n_references != 1:
            # The best of several references is chosen by an F-score of every order (β too).
            return self, slice(None)
        # Against one reference the character n-grams' statistics are chrF++'s first columns
        # (β and ε-smoothing act on the sums only).
        if self.word_order == 0:
            key = ("chrf", self.char_order, _CHRF_PLUS_WORD_ORDER, self.lowercase, self.whitespace)
            return key, slice(0, 3 * self.char_order)
        key = ("chrf", self.char_order, self.word_order, self.lowercase, self.whitespace)
        return key, slice(None)

    def _numpy_rows(
        self, sacre: Any, work: list[tuple[list[str], list[str]]]
    ) -> list[np.ndarray | None]:
        return chrf_rows(sacre, work)

    @property
    def label(self) -> str:
        """``chrF2`` or ``chrF2++``, as sacreBLEU names the score."""
        return f"chrF{self.beta}" + "+" * self.word_order


# chrF's options, chrF++'s too but the word order.
CHAR_ORDER = Option(
    "chrf_char_order",
    int,
    6,
    keyword="char_order",
    label=gettext_noop("chrF character n-gram order"),
    flags=("-cc", "--chrf-char-order"),
    signature="nc",
    source=Source.SACREBLEU_SETTING,
)
WORD_ORDER = Option(
    "chrf_word_order",
    int,
    0,
    keyword="word_order",
    label=gettext_noop("chrF word n-gram order (2: chrF++)"),
    help="2: chrF++",
    flags=("-cw", "--chrf-word-order"),
    signature="nw",
    source=Source.SACREBLEU_SETTING,
)
BETA = Option(
    "chrf_beta",
    int,
    2,
    keyword="beta",
    label=gettext_noop("chrF β"),
    flags=("--chrf-beta",),
    source=Source.SACREBLEU_SETTING,
)
WHITESPACE = Option(
    "chrf_whitespace",
    bool,
    False,
    keyword="whitespace",
    label=gettext_noop("chrF keeps whitespace"),
    help="keep whitespace",
    flags=("--chrf-whitespace",),
    signature="space",
    source=Source.SACREBLEU_SETTING,
)
CHRF_LOWERCASE = Option(
    "chrf_lowercase",
    bool,
    False,
    keyword="lowercase",
    label=gettext_noop("chrF lowercase"),
    flags=("--chrf-lowercase",),
    signature="case",
    source=Source.FOLLOWS,
    follows="lowercase",
)
EPS_SMOOTHING = Option(
    "chrf_eps_smoothing",
    bool,
    False,
    keyword="eps_smoothing",
    label=gettext_noop("chrF ε-smoothing"),
    flags=("--chrf-eps-smoothing",),
    signature="eff",
)
SPEC = MetricSpec(
    CHRF,
    (CHAR_ORDER, WORD_ORDER, BETA, WHITESPACE, CHRF_LOWERCASE, EPS_SMOOTHING),
    on_command_line=True,
)
