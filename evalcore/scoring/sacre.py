"""Metrics whose statistics come from sacreBLEU: BLEU, chrF/chrF++, TER and Length.

Tokenisation and per-segment statistics are sacreBLEU's own code (pinned to 2.6.x, whose
internal ``_extract_corpus_statistics``/``_compute_segment_statistics`` we call), so they cannot
drift from it; BLEU's and chrF's n-gram counts are the exception, counted in numpy by
:mod:`.ngram_counts` with sacreBLEU's integers (its tests compare them with sacreBLEU's own
code), and TER's edits by the compiled kernel (:class:`CompiledSacreTER`). A process has one
tokenizer object of each kind (:func:`shared_tokenizer`), so a line is tokenised once for every
metric. The corpus formulas are re-written here in vectorised numpy, operation for operation as
sacreBLEU writes them, so that one call scores thousands of resamples; the tests hold them to
sacreBLEU's corpus scores within 1e-9.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import cache
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric as SacreMetric
from sacrebleu.metrics.bleu import BLEU as SacreBLEU  # noqa: N811
from sacrebleu.metrics.bleu import _get_tokenizer
from sacrebleu.metrics.chrf import CHRF as SacreCHRF  # noqa: N811
from sacrebleu.metrics.ter import TER as SacreTER  # noqa: N811

from evalcore.version import signature_version

from .base import Metric, References, check_corpus
from .ngram_counts import CountedInNumpy, bleu_rows, chrf_rows


@cache
def shared_tokenizer(name: str) -> Callable[[str], str]:
    """The process's one sacreBLEU tokenizer of ``name``. sacreBLEU keeps tokenised lines in a
    cache keyed by the tokenizer object and the line, so BLEU, Length and the word metrics
    (WER, PER, precision, recall, F-measure) tokenise a line once between them instead of once
    each: the same object, the same code, the same tokens."""
    tokenizer: Callable[[str], str] = _get_tokenizer(name)()
    return tokenizer


# sacreBLEU's floor for log(0) (``sacrebleu.utils.my_log``).
_LOG_ZERO = -9999999999.0

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


SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


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


# chrF++'s word order, whose statistics contain chrF's (CHRF.statistics_source).
_CHRF_PLUS_WORD_ORDER = 2


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


class CHRFPlusPlus(CHRF):
    """chrF++ (word order 2): chrF under its own name, so that results keyed by the metric's
    name keep chrF and chrF++ apart."""

    name = "chrf++"

    def __init__(self, *, word_order: int = 2, **options: Any) -> None:
        super().__init__(word_order=word_order, **options)


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
