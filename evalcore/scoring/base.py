"""What every metric shares: per-segment statistics, a vectorised score, a signature.

A metric turns each (hypothesis, references) pair into a row of *sufficient statistics*; the
corpus score is a function of the column sums. Resampling (``evalcore.stats``) therefore never
touches text: it re-weights rows and calls :meth:`Metric.score_from_statistics` on the sums.

References are passed as sacreBLEU passes them: a sequence of reference *streams*, each holding
one line per segment (``[[ref1_seg1, ref1_seg2, ...], [ref2_seg1, ...]]``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

References = Sequence[Sequence[str]]


@dataclass(frozen=True)
class Signature:
    """A sacreBLEU-style reproducibility signature: ``NAME|key:value|...|version:X``.

    For BLEU, chrF and TER the keys and values are exactly sacreBLEU's, so the string can be
    compared with what ``sacrebleu`` prints for the same settings. Resampling adds ``bs`` (bootstrap
    samples), ``ar`` (randomisation trials) and ``seed``, in sacreBLEU's positions.
    """

    metric: str
    info: tuple[tuple[str, str], ...]

    # sacreBLEU's order for the keys it shares between metrics; metric keys follow; version last.
    _LEADING: ClassVar[tuple[str, ...]] = ("nrefs", "bs", "ar", "seed")

    @classmethod
    def build(cls, metric: str, info: Mapping[str, Any]) -> Signature:
        """Make a signature from a mapping; ``None`` values are left out, booleans become yes/no."""
        pairs: list[tuple[str, str]] = []
        for key, value in info.items():
            if value is None:
                continue
            text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
            pairs.append((key, text))
        return cls(metric=metric, info=cls._ordered(pairs))

    @classmethod
    def _ordered(cls, pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        items = dict(pairs)
        keys = [k for k in cls._LEADING if k in items]
        keys += [k for k in items if k not in cls._LEADING and k != "version"]
        if "version" in items:
            keys.append("version")
        return tuple((k, items[k]) for k in keys)

    def as_dict(self) -> dict[str, str]:
        """The key/value pairs, in signature order."""
        return dict(self.info)

    def with_resampling(
        self, *, bootstrap: int | None = None, trials: int | None = None, seed: int | None = None
    ) -> Signature:
        """This signature plus the number of bootstrap samples, AR trials and the seed used."""
        items = self.as_dict()
        if bootstrap is not None:
            items["bs"] = str(bootstrap)
        if trials is not None:
            items["ar"] = str(trials)
        if seed is not None:
            items["seed"] = str(seed)
        return Signature(metric=self.metric, info=self._ordered(items.items()))

    def format(self) -> str:
        """``NAME|key:value|...``, keys in sacreBLEU's order, version last."""
        body = "|".join(f"{k}:{v}" for k, v in self.info)
        return f"{self.metric}|{body}" if body else self.metric

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class CorpusScore:
    """A corpus-level score with the summed statistics it came from and its signature."""

    metric: str
    score: float
    summed: np.ndarray
    signature: Signature
    n_segments: int
    details: Mapping[str, float] = field(default_factory=dict)
    """Metric-specific parts (BLEU's precisions and brevity penalty, ...)."""

    def format(self, width: int = 2) -> str:
        """``signature = score`` as sacreBLEU prints it."""
        return f"{self.signature} = {self.score:.{width}f}"


class MetricUnavailableError(RuntimeError):
    """The metric needs an optional dependency that is not installed; the message says how."""


class Metric(ABC):
    """A corpus metric built on per-segment sufficient statistics.

    Subclasses set :attr:`name`, :attr:`display_name`, :attr:`higher_is_better` and
    :attr:`stat_names`, and implement :meth:`statistics`, :meth:`score_from_statistics` and
    :meth:`signature_info`.
    """

    name: ClassVar[str]
    """Registry key (``bleu``)."""
    display_name: ClassVar[str]
    """Name shown in tables and signatures (``BLEU``)."""
    higher_is_better: ClassVar[bool] = True
    forks: ClassVar[bool] = True
    """Whether worker processes forked from this one may compute its statistics (not BERTR's:
    a fork of a process running torch is neither safe nor faster)."""

    @property
    @abstractmethod
    def stat_names(self) -> tuple[str, ...]:
        """Names of the columns of :meth:`statistics`."""

    @abstractmethod
    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        """Per-segment sufficient statistics, ``(n_segments, n_stats)`` float64."""

    @abstractmethod
    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        """Vectorised corpus score: summed statistics ``(..., n_stats)`` → scores ``(...)``.

        This is the ``score_fn`` that every resampling function in ``evalcore.stats`` takes.
        """

    @abstractmethod
    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        """Signature keys and values (without the metric name) for ``n_refs`` references."""

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        """Statistics of several hypotheses of one segment (``(len(hypotheses), n_stats)``).

        Subclasses override this to prepare the segment's references only once.
        """
        streams: Any = [[ref] * len(hypotheses) for ref in references]
        return self.statistics(hypotheses, streams)

    def statistics_for_segments(
        self, work: Sequence[tuple[Sequence[str | None], Sequence[str]]]
    ) -> np.ndarray:
        """Rows for many segments at once: for each (references, hypotheses) of one segment, the
        statistics of its hypotheses, stacked segment after segment."""
        parts = [self.statistics_for_segment(refs, hyps) for refs, hyps in work]
        if not parts:
            return np.zeros((0, len(self.stat_names)))
        return np.concatenate(parts, axis=0)

    def statistics_source(self, n_references: int) -> tuple[Hashable, slice]:
        """Where this metric's statistics come from, given the number of reference streams:
        ``(key, columns)``, its statistics being columns ``columns`` of the statistics that
        ``key`` names. Metrics with the same key and all columns have the same statistics;
        one with fewer columns is a part of theirs (Length: BLEU's two lengths; chrF with one
        reference: chrF++'s character n-grams). A caller scoring several metrics then computes
        them once (:func:`evalcore.scoring.extraction.extract_all`). By default, its own."""
        return self, slice(None)

    def prepare(self) -> None:
        """Load or compile what computing statistics needs, now: called before worker processes
        fork, so that they inherit it instead of each doing it (TER's and WER's compiled
        kernels). Nothing for most metrics."""
        return None

    @property
    def label(self) -> str:
        """The score's name in tables and signatures (``chrF2++`` for chrF with word order 2)."""
        return self.display_name

    def sentence_score_from_statistics(self, stats: np.ndarray) -> np.ndarray:
        """Sentence-level scores from per-segment statistics (BLEU adds effective order)."""
        return self.score_from_statistics(stats)

    def details_from_statistics(self, summed: np.ndarray) -> dict[str, float]:
        """Metric-specific parts of a corpus score, for display."""
        return {}

    def signature(self, n_refs: int | str = 1) -> Signature:
        """This metric's signature for ``n_refs`` references."""
        return Signature.build(self.label, self.signature_info(n_refs))

    def corpus_score(self, hypotheses: Sequence[str], references: References) -> CorpusScore:
        """Score a corpus: statistics, their sums, the score and its signature."""
        stats = self.statistics(hypotheses, references)
        return self.corpus_score_from_statistics(stats, n_refs=count_references(references))

    def corpus_score_from_statistics(
        self, stats: np.ndarray, *, n_refs: int | str = 1
    ) -> CorpusScore:
        """Score already extracted statistics."""
        summed = np.asarray(stats, dtype=np.float64).sum(axis=0)
        return CorpusScore(
            metric=self.label,
            score=float(self.score_from_statistics(summed)),
            summed=summed,
            signature=self.signature(n_refs),
            n_segments=int(np.asarray(stats).shape[0]),
            details=self.details_from_statistics(summed),
        )

    def sentence_scores(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        """One score per segment, ``(n_segments,)``."""
        return self.sentence_score_from_statistics(self.statistics(hypotheses, references))

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> float:
        """The score of one sentence against its references."""
        streams = [[ref] for ref in references]
        return float(self.sentence_scores([hypothesis], streams)[0])


def count_references(references: References) -> int | str:
    """Number of references as a signature shows it: an int, or ``var`` if it varies by line
    (a missing reference is ``None`` in its stream, as sacreBLEU allows)."""
    counts = {sum(ref is not None for ref in refs) for refs in zip(*references, strict=True)}
    if len(counts) == 1:
        return counts.pop()
    return "var" if counts else len(references)


def check_corpus(hypotheses: Sequence[str], references: References) -> None:
    """Raise ValueError unless every reference stream has one line per hypothesis."""
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a sequence of strings, not one string")
    if not references:
        raise ValueError("at least one reference stream is needed")
    for i, stream in enumerate(references):
        if isinstance(stream, str):
            raise TypeError("references must be a sequence of reference streams")
        if len(stream) != len(hypotheses):
            raise ValueError(
                f"reference stream {i + 1} has {len(stream)} lines, "
                f"the hypotheses have {len(hypotheses)}"
            )
