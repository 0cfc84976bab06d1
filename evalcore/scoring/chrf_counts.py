"""chrF's match statistics for many segments at once, in numpy: sacreBLEU's numbers exactly.

sacreBLEU (``sacrebleu.metrics.chrf.CHRF._compute_segment_statistics``) counts each order's
n-grams of a hypothesis and of a reference in ``Counter`` objects and adds up, in a Python loop,
the smaller of the two counts of every hypothesis n-gram. Here every line of a batch of segments
(their references, then their hypotheses) becomes one array of symbol ids — characters (without
whitespace unless asked) or chrF's words (sacreBLEU's own ``_remove_punctuation``) — and an n-gram
is the exact integer of its n ids, each in ``b`` bits (``b`` the bits of the batch's number of
distinct symbols), beside its line's number. One sort per order counts every (line, n-gram); a
hypothesis n-gram's count in its reference is found by binary search. Two n-grams get the same
integer exactly when their symbols are the same, so the counts, and hence the statistics, are
sacreBLEU's, integer for integer (``tests/evalcore/scoring/test_chrf_counts.py`` compares them on
real text and randomised inputs of every option).

A batch whose integers would not fit in 62 bits (many distinct characters, as in a long CJK
batch) is halved until they do; a single segment that still does not fit, or whose text Python
cannot encode as UTF-32 (a lone surrogate), is left to sacreBLEU (``None``).

With several references, the reference of a hypothesis's statistics is the one with the best
sentence F-score, first on a tie, computed by sacreBLEU's ``_compute_f_score``, as sacreBLEU does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

BITS = 62
"""Bits an n-gram's integer and its line's number may take (int64, sign bit and one spare)."""

BATCH = 32
"""Segments counted in one pass (amortises numpy's cost per call; a pass's sort stays small)."""


def chrf_rows(sacre: Any, work: Sequence[tuple[list[str], list[str]]]) -> list[np.ndarray | None]:
    """Per segment of ``work`` (its references, present and preprocessed, and its preprocessed
    hypotheses): the statistics of each hypothesis (hypotheses × 3 · orders, int64), or ``None``
    for a segment left to sacreBLEU."""
    found: list[np.ndarray | None] = []
    for start in range(0, len(work), BATCH):
        found += _batch(sacre, work[start : start + BATCH])
    return found


def _batch(sacre: Any, work: Sequence[tuple[list[str], list[str]]]) -> list[np.ndarray | None]:
    rows = _counted(sacre, work)
    if rows is not None:
        return rows
    if len(work) == 1:
        return [None]
    half = len(work) // 2
    return _batch(sacre, work[:half]) + _batch(sacre, work[half:])


def _counted(
    sacre: Any, work: Sequence[tuple[list[str], list[str]]]
) -> list[np.ndarray | None] | None:
    """The batch's statistics, or ``None`` when its integers do not fit."""
    lines: list[str] = []
    hyp_lines: list[int] = []
    # refs[j][h]: the line of the j-th reference of hypothesis h's segment (-1: none)
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
    char_order, word_order = sacre.char_order, sacre.word_order
    chars = lines if sacre.whitespace else ["".join(line.split()) for line in lines]
    try:
        points = np.frombuffer("".join(chars).encode("utf-32-le"), dtype=np.uint32)
    except UnicodeEncodeError:
        return None
    symbols, ids = np.unique(points, return_inverse=True)
    hyp_at = np.asarray(hyp_lines, dtype=np.int64)
    ref_at = np.asarray(refs_of, dtype=np.int64).reshape(n_refs, len(hyp_lines))
    parts = _orders(ids + 1, len(symbols), [len(c) for c in chars], char_order, hyp_at, ref_at)
    if parts is None:
        return None
    if word_order:
        words = [sacre._remove_punctuation(line) for line in lines]
        vocabulary: dict[str, int] = {}
        word_ids = np.fromiter(
            (vocabulary.setdefault(w, len(vocabulary) + 1) for ws in words for w in ws),
            dtype=np.int64,
        )
        more = _orders(
            word_ids, len(vocabulary), [len(ws) for ws in words], word_order, hyp_at, ref_at
        )
        if more is None:
            return None
        parts = np.concatenate([parts, more], axis=2)
    return _best_references(sacre, work, parts)


def _orders(
    ids: np.ndarray,
    n_symbols: int,
    lengths: list[int],
    max_order: int,
    hyp_at: np.ndarray,
    ref_at: np.ndarray,
) -> np.ndarray | None:
    """Statistics (references × hypotheses × 3 · ``max_order``) of orders 1 to ``max_order``
    over the lines' symbol ids (1 to ``n_symbols``, the lines one after the other)."""
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
    result = np.zeros((len(ref_at), len(hyp_at), 3 * max_order), dtype=np.int64)
    mask = (1 << shift) - 1
    hyp_index = np.full(len(size), -1, dtype=np.int64)
    hyp_index[hyp_at] = np.arange(len(hyp_at))
    for n in range(1, max_order + 1):
        code |= padded[n - 1 : n - 1 + len(ids)] << (bits * (n - 1))
        inside = position + n <= end  # the n-gram ends within its line
        lines_in = line[inside]
        keys, counts = np.unique((lines_in << shift) | code[inside], return_counts=True)
        totals = np.bincount(lines_in, minlength=len(size))
        # each hypothesis's distinct n-grams, with their counts
        owner = hyp_index[keys >> shift]
        mine = owner >= 0
        owner, grams, own_counts = owner[mine], keys[mine] & mask, counts[mine]
        for j, refs in enumerate(ref_at):
            ref_line = refs[owner]
            wanted = (ref_line << shift) | grams
            at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
            theirs = np.where((keys[at] == wanted) & (ref_line >= 0), counts[at], 0)
            matches = np.bincount(
                owner, weights=np.minimum(own_counts, theirs), minlength=len(hyp_at)
            )
            ref_total = np.where(refs >= 0, totals[np.maximum(refs, 0)], 0)
            column = 3 * (n - 1)
            # sacreBLEU counts no hypothesis n-gram where the reference has none of its order
            result[j, :, column] = np.where(ref_total > 0, totals[hyp_at], 0)
            result[j, :, column + 1] = ref_total
            result[j, :, column + 2] = matches.astype(np.int64)
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
