"""n-gram match statistics for many segments at once, in numpy: sacreBLEU's numbers exactly.

sacreBLEU counts each order's n-grams of a hypothesis and of a reference in ``Counter`` objects
and adds up, in a Python loop, the smaller of the two counts of every hypothesis n-gram (chrF:
``CHRF._compute_segment_statistics``; BLEU: ``BLEU._compute_segment_statistics``, clipping by the
largest count in any one reference). Here every line of a batch of segments (their references,
then their hypotheses) becomes one array of symbol ids — characters (without whitespace unless
asked), chrF's words (sacreBLEU's own ``_remove_punctuation``) or BLEU's tokens (sacreBLEU's
tokenizer, then split on spaces) — and an n-gram is the exact integer of its n ids, each in ``b``
bits (``b`` the bits of the batch's number of distinct symbols), beside its line's number. One
sort per order counts every (line, n-gram); a hypothesis n-gram's count in a reference is found
by binary search. Two n-grams get the same integer exactly when their symbols are the same, so
the counts, and hence the statistics, are sacreBLEU's, integer for integer
(``tests/evalcore/scoring/test_ngram_counts.py`` compares them on real text and randomised inputs
of every option).

A batch whose integers would not fit in 62 bits (many distinct characters or words) is halved
until they do; a single segment that still does not fit, whose text Python cannot encode as
UTF-32 (a lone surrogate), or that has no reference, is left to sacreBLEU (``None``).

chrF with several references takes the reference with the best sentence F-score, first on a tie,
computed by sacreBLEU's ``_compute_f_score``; BLEU the closest reference length, the shorter on a
tie, as sacreBLEU's ``_get_closest_ref_len`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import References, check_corpus

BITS = 62
"""Bits an n-gram's integer and its line's number may take (int64, sign bit and one spare)."""

BATCH = 32
"""Segments counted in one pass (amortises numpy's cost per call; a pass's sort stays small)."""


Batch = Sequence[tuple[list[str], list[str]]]
"""Segments as (their references, present and preprocessed; their preprocessed hypotheses)."""


def chrf_rows(sacre: Any, work: Batch) -> list[np.ndarray | None]:
    """Per segment of ``work``: chrF's statistics of each hypothesis (hypotheses × 3 · orders,
    int64), or ``None`` for a segment left to sacreBLEU."""
    return _in_batches(_chrf_batch, sacre, work)


def bleu_rows(sacre: Any, work: Batch) -> list[np.ndarray | None]:
    """Per segment of ``work``: BLEU's statistics of each hypothesis (its length, the closest
    reference length, the matches and the n-grams of each order; int64), or ``None`` for a
    segment left to sacreBLEU."""
    return _in_batches(_bleu_batch, sacre, work)


CountBatch = Callable[[Any, Batch], "list[np.ndarray | None] | None"]


def _in_batches(count: CountBatch, sacre: Any, work: Batch) -> list[np.ndarray | None]:
    found: list[np.ndarray | None] = []
    for start in range(0, len(work), BATCH):
        found += _halved(count, sacre, work[start : start + BATCH])
    return found


def _halved(count: CountBatch, sacre: Any, work: Batch) -> list[np.ndarray | None]:
    """``count`` of the batch, halved until its keys fit."""
    rows = count(sacre, work)
    if rows is not None:
        return rows
    if len(work) == 1:
        return [None]
    half = len(work) // 2
    return _halved(count, sacre, work[:half]) + _halved(count, sacre, work[half:])


def _layout(work: Batch) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The batch's lines (each segment's references, then its hypotheses), the hypotheses'
    lines, and per reference position j the line of each hypothesis's j-th reference (-1:
    its segment has fewer)."""
    lines: list[str] = []
    hyp_lines: list[int] = []
    n_refs = max((len(refs) for refs, _ in work), default=0)
    refs_of: list[list[int]] = [[] for _ in range(n_refs)]
    for refs, hyps in work:
        first = len(lines)
        lines += refs
        for hyp in hyps:
            hyp_lines.append(len(lines))
            lines.append(hyp)
            for j in range(n_refs):
                refs_of[j].append(first + j if j < len(refs) else -1)
    hyp_at = np.asarray(hyp_lines, dtype=np.int64)
    return lines, hyp_at, np.asarray(refs_of, dtype=np.int64).reshape(n_refs, len(hyp_lines))


def _word_ids(words: list[list[str]]) -> tuple[np.ndarray, int]:
    """Every line's words as ids (1 to the number of distinct words), one line after another."""
    vocabulary: dict[str, int] = {}
    ids = np.fromiter(
        (vocabulary.setdefault(w, len(vocabulary) + 1) for ws in words for w in ws),
        dtype=np.int64,
    )
    return ids, len(vocabulary)


def _bleu_batch(sacre: Any, work: Batch) -> list[np.ndarray | None] | None:
    """sacreBLEU's ``_compute_segment_statistics`` for the batch: each n-gram's count clipped
    by its largest count in any one reference, the closest reference length (the shorter on a
    tie); ``None`` when the keys do not fit."""
    lines, hyp_at, ref_at = _layout(work)
    words = [line.split() for line in lines]
    ids, n_words = _word_ids(words)
    max_order = sacre.max_ngram_order
    orders = order_counts(ids, n_words, [len(ws) for ws in words], max_order, hyp_at)
    if orders is None:
        return None
    size = np.asarray([len(ws) for ws in words], dtype=np.int64)
    rows = np.zeros((len(hyp_at), 2 + 2 * max_order), dtype=np.int64)
    rows[:, 0] = hyp_len = size[hyp_at]
    best_diff = np.full(len(hyp_at), -1, dtype=np.int64)
    best_len = np.full(len(hyp_at), -1, dtype=np.int64)
    for refs in ref_at:  # sacreBLEU's _get_closest_ref_len, reference after reference
        length = size[np.maximum(refs, 0)]
        diff = np.abs(hyp_len - length)
        take = (refs >= 0) & (
            (best_diff == -1) | (diff < best_diff) | ((diff == best_diff) & (length < best_len))
        )
        best_diff = np.where(take, diff, best_diff)
        best_len = np.where(take, length, best_len)
    rows[:, 1] = best_len
    for n, counted in enumerate(orders):
        theirs = np.zeros(len(counted.owner), dtype=np.int64)
        for refs in ref_at:
            theirs = np.maximum(theirs, counted.count_in(refs))
        rows[:, 2 + n] = np.bincount(
            counted.owner, weights=np.minimum(counted.own, theirs), minlength=len(hyp_at)
        ).astype(np.int64)
        rows[:, 2 + max_order + n] = counted.totals[hyp_at]
    found: list[np.ndarray | None] = []
    start = 0
    for refs, hyps in work:  # a segment without references is sacreBLEU's own case
        found.append(rows[start : start + len(hyps)].copy() if refs else None)
        start += len(hyps)
    return found


def _chrf_batch(sacre: Any, work: Batch) -> list[np.ndarray | None] | None:
    """The batch's chrF statistics, or ``None`` when its integers do not fit."""
    lines, hyp_at, ref_at = _layout(work)
    char_order, word_order = sacre.char_order, sacre.word_order
    chars = lines if sacre.whitespace else ["".join(line.split()) for line in lines]
    try:
        points = np.frombuffer("".join(chars).encode("utf-32-le"), dtype=np.uint32)
    except UnicodeEncodeError:
        return None
    symbols, ids = np.unique(points, return_inverse=True)
    parts = _orders(ids + 1, len(symbols), [len(c) for c in chars], char_order, hyp_at, ref_at)
    if parts is None:
        return None
    if word_order:
        words = [sacre._remove_punctuation(line) for line in lines]
        word_ids, n_words = _word_ids(words)
        more = _orders(word_ids, n_words, [len(ws) for ws in words], word_order, hyp_at, ref_at)
        if more is None:
            return None
        parts = np.concatenate([parts, more], axis=2)
    return _best_references(sacre, work, parts)


@dataclass(frozen=True)
class OrderCounts:
    """One order's n-grams of a batch's lines: every distinct (line, n-gram) as a sorted key
    with its count, the n-grams of each line, and each hypothesis's distinct n-grams (the
    hypothesis's index, the n-gram, its count there)."""

    shift: int
    keys: np.ndarray
    counts: np.ndarray
    totals: np.ndarray
    owner: np.ndarray
    grams: np.ndarray
    own: np.ndarray

    def count_in(self, lines: np.ndarray) -> np.ndarray:
        """Each hypothesis n-gram's count in line ``lines[owner]`` (0 where that is -1)."""
        line = lines[self.owner]
        wanted = (line << self.shift) | self.grams
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        found: np.ndarray = np.where((self.keys[at] == wanted) & (line >= 0), self.counts[at], 0)
        return found


def order_counts(
    ids: np.ndarray, n_symbols: int, lengths: list[int], max_order: int, hyp_at: np.ndarray
) -> list[OrderCounts] | None:
    """:class:`OrderCounts` of orders 1 to ``max_order`` over the lines' symbol ids (1 to
    ``n_symbols``, the lines one after the other; ``hyp_at``: the hypotheses' lines), or None
    when a key would not fit in :data:`BITS` bits."""
    bits = max(1, int(n_symbols).bit_length())
    shift = bits * max_order
    if shift + max(1, len(lengths).bit_length()) > BITS:
        return None
    size = np.asarray(lengths, dtype=np.int64)
    line = np.repeat(np.arange(len(size), dtype=np.int64), size)
    end = np.repeat(np.cumsum(size), size)
    position = np.arange(len(ids), dtype=np.int64)
    padded = np.concatenate([ids.astype(np.int64), np.zeros(max_order, dtype=np.int64)])
    code = np.zeros(len(ids), dtype=np.int64)
    hyp_index = np.full(len(size), -1, dtype=np.int64)
    hyp_index[hyp_at] = np.arange(len(hyp_at))
    found = []
    for n in range(1, max_order + 1):
        code |= padded[n - 1 : n - 1 + len(ids)] << (bits * (n - 1))
        inside = position + n <= end  # the n-gram ends within its line
        lines_in = line[inside]
        keys, counts = np.unique((lines_in << shift) | code[inside], return_counts=True)
        owner = hyp_index[keys >> shift]
        mine = owner >= 0
        found.append(
            OrderCounts(
                shift=shift,
                keys=keys,
                counts=counts,
                totals=np.bincount(lines_in, minlength=len(size)),
                owner=owner[mine],
                grams=keys[mine] & ((1 << shift) - 1),
                own=counts[mine],
            )
        )
    return found


def _orders(
    ids: np.ndarray,
    n_symbols: int,
    lengths: list[int],
    max_order: int,
    hyp_at: np.ndarray,
    ref_at: np.ndarray,
) -> np.ndarray | None:
    """chrF's statistics (references × hypotheses × 3 · ``max_order``) of orders 1 to
    ``max_order``."""
    orders = order_counts(ids, n_symbols, lengths, max_order, hyp_at)
    if orders is None:
        return None
    result = np.zeros((len(ref_at), len(hyp_at), 3 * max_order), dtype=np.int64)
    for n, counted in enumerate(orders):
        for j, refs in enumerate(ref_at):
            theirs = counted.count_in(refs)
            matches = np.bincount(
                counted.owner, weights=np.minimum(counted.own, theirs), minlength=len(hyp_at)
            )
            ref_total = np.where(refs >= 0, counted.totals[np.maximum(refs, 0)], 0)
            # sacreBLEU counts no hypothesis n-gram where the reference has none of its order
            result[j, :, 3 * n] = np.where(ref_total > 0, counted.totals[hyp_at], 0)
            result[j, :, 3 * n + 1] = ref_total
            result[j, :, 3 * n + 2] = matches.astype(np.int64)
    return result


def _best_references(
    sacre: Any, work: Sequence[tuple[list[str], list[str]]], parts: np.ndarray
) -> list[np.ndarray | None]:
    """Per segment, each hypothesis's statistics against its best reference."""
    found: list[np.ndarray | None] = []
    start = 0
    for refs, hyps in work:
        block = parts[:, start : start + len(hyps)]
        start += len(hyps)
        if not refs:  # sacreBLEU's own answer for a segment without references
            found.append(None)
            continue
        if len(refs) == 1:
            found.append(block[0].copy())
            continue
        rows = []
        for h in range(len(hyps)):
            best: list[int] = []
            best_f = -1.0
            for j in range(len(refs)):
                stats = block[j, h].tolist()
                f_score = sacre._compute_f_score(stats)
                if f_score > best_f:
                    best_f, best = f_score, stats
            rows.append(best)
        found.append(np.asarray(rows, dtype=np.int64).reshape(len(hyps), parts.shape[2]))
    return found


class CountedInNumpy:
    """A sacreBLEU-backed metric (``_sacre``, ``stat_names``) whose statistics are counted in
    numpy by ``_numpy_rows`` (sacreBLEU's own code for the segments it leaves, ``None``)."""

    _sacre: Any

    @property
    def stat_names(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _numpy_rows(
        self, sacre: Any, work: list[tuple[list[str], list[str]]]
    ) -> list[np.ndarray | None]:
        raise NotImplementedError

    def statistics(self, hypotheses: Sequence[str], references: References) -> np.ndarray:
        """sacreBLEU's statistics, counted in numpy."""
        check_corpus(hypotheses, references)
        return self._counted(
            [
                (list(refs), [h])
                for h, refs in zip(hypotheses, zip(*references, strict=True), strict=True)
            ]
        )

    def statistics_for_segment(
        self, references: Sequence[str | None], hypotheses: Sequence[str]
    ) -> np.ndarray:
        return self._counted([(list(references), list(hypotheses))])

    def statistics_for_segments(
        self, work: Sequence[tuple[Sequence[str | None], Sequence[str]]]
    ) -> np.ndarray:
        return self._counted([(list(refs), list(hyps)) for refs, hyps in work])

    def _counted(self, work: list[tuple[list[str | None], list[str]]]) -> np.ndarray:
        """Rows of every segment's hypotheses: ``_numpy_rows``, or sacreBLEU's
        own code for a segment it leaves (the references preprocessed as sacreBLEU does)."""
        sacre = self._sacre
        prepared = [
            (
                [sacre._preprocess_segment(r) for r in refs if r is not None],
                [sacre._preprocess_segment(h) for h in hyps],
            )
            for refs, hyps in work
        ]
        width = len(self.stat_names)
        parts = []
        for (refs, hyps), rows in zip(prepared, self._numpy_rows(sacre, prepared), strict=True):
            if rows is None:
                info = sacre._extract_reference_info(refs)
                rows = np.asarray(
                    [sacre._compute_segment_statistics(h, info) for h in hyps], dtype=np.int64
                ).reshape(len(hyps), width)
            parts.append(rows)
        if not parts:
            return np.zeros((0, width))
        return np.concatenate(parts, axis=0).astype(np.float64)
