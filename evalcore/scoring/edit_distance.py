"""Word edit distances at compiled speed: sacreBLEU's TER and Levenshtein's distance.

:func:`ter_edits` computes exactly what ``sacrebleu.metrics.lib_ter.translation_edit_rate``
computes, heuristics included: the *beam-limited* edit distance (cells within 25 of the
length-ratio diagonal, wider for very unequal lengths; the last row in full), Tercom's shift
filters and ranking, and the limits (shifts of at most 10 words over at most 50 positions, at most
1,000 shift candidates per hypothesis, after which the best one found is *not* applied). It is not
a true minimum of edits, and it is not meant to be: it is sacreBLEU's number. Only the way it is
computed differs:

* the words are integer ids (a word that is in no reference is -1, since TER compares hypothesis
  words only with reference words) and the loops are compiled by numba;
* the beam's band is stored row by row in one flat array (sacreBLEU keeps full rows of infinity);
* sacreBLEU caches rows by word prefix; here a shifted candidate starts from the current
  hypothesis's row at the first position the shift changes, and stops as soon as a row past the
  shifted words equals the current hypothesis's row plus a constant, since the remaining rows then
  differ by that constant too (the recurrence is a min of sums; cells outside the band stay
  "infinite" in both). Neither changes a value: every row is a function of the word prefix.

numba compiles the kernels on first use (a few seconds) and keeps the machine code in this
package's ``__pycache__`` (``cache=True``), so later processes load it in a fraction of a second;
:func:`warm_up` does that ahead of time (the Celery worker calls it before forking its pool, so
forked children inherit the compiled code; a ``fork`` process pool inherits it the same way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np

# sacreBLEU's (Tercom's) limits, sacrebleu/metrics/lib_ter.py.
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INF = 10**16  # sacreBLEU's _INT_INFINITY

# Edit operations, named as in sacreBLEU's trace of rewriting the hypothesis into the reference.
_NOP, _SUB, _DEL, _INS = 0, 1, 2, 3

_jit = numba.njit(cache=True, nogil=True)

Array = np.ndarray
Band = tuple[Array, Array, Array]  # per row of the beam: first cell, end, offset in the flat array
Rows = tuple[Array, Array, Array]  # the current rows' values, their operations, a scratch array
Shift = tuple[int, int, int]  # start, length, target
Candidate = tuple[int, int, int, int]  # gain, length, start, target
State = tuple[int, Array, bool, Candidate, int]  # score, alignment, found, best, candidates


@_jit
def _layout(n: int, m: int) -> Band:
    """Per row ``i`` of the beam: its cells ``[lo[i], hi[i])`` and their offset in the flat
    array, exactly as sacreBLEU's ``BeamEditDistance._edit_distance`` bounds its loop."""
    ratio = m / n if n > 0 else 1.0
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
    lo = np.empty(n + 1, np.int64)
    hi = np.empty(n + 1, np.int64)
    off = np.empty(n + 2, np.int64)
    lo[0], hi[0], off[0] = 0, m + 1, 0  # the first row: one insertion per reference word
    for i in range(1, n + 1):
        diagonal = math.floor(i * ratio)
        lo[i] = max(0, diagonal - beam)
        hi[i] = m + 1 if i == n else min(m + 1, diagonal + beam)
    for i in range(n + 1):
        off[i + 1] = off[i] + hi[i] - lo[i]
    return lo, hi, off


@_jit
def _row(
    word: int,
    ref: Array,
    band: Band,
    values: Array,
    ops: Array,
    i: int,
    with_ops: bool,
) -> None:
    """Row ``i`` from row ``i - 1``: sacreBLEU's update, its preference order included
    (substitution or match, then deletion, then insertion; a cost replaces the cell's only when
    strictly smaller, starting from infinity). A cell outside a row's band is infinite, as in
    sacreBLEU's empty rows."""
    lo, hi, off = band
    base = off[i] - lo[i]
    above_lo, above_hi = lo[i - 1], hi[i - 1]
    above = off[i - 1] - above_lo
    for j in range(lo[i], hi[i]):
        if j == 0:
            best = (values[above] if above_lo == 0 else INF) + 1
            op = _DEL
        else:
            best = INF
            op = _DEL
            match = word == ref[j - 1]
            cost = (values[above + j - 1] if above_lo < j <= above_hi else INF) + (1 - match)
            if best > cost:
                best = cost
                op = _NOP if match else _SUB
            cost = (values[above + j] if above_lo <= j < above_hi else INF) + 1
            if best > cost:
                best = cost
                op = _DEL
            cost = (values[base + j - 1] if j > lo[i] else INF) + 1
            if best > cost:
                best = cost
                op = _INS
        values[base + j] = best
        if with_ops:
            ops[base + j] = op


@_jit
def _distance(words: Array, ref: Array, band: Band, values: Array, ops: Array) -> int:
    """The beam edit distance of ``words``, every row and its operations kept."""
    lo, off = band[0], band[2]
    for i in range(1, len(words) + 1):
        _row(words[i - 1], ref, band, values, ops, i, True)
    return int(values[off[len(words)] + len(ref) - lo[len(words)]])


@_jit
def _alignment(
    n: int, m: int, lo: Array, hi: Array, off: Array, ops: Array
) -> tuple[Array, Array, Array]:
    """sacreBLEU's ``trace_to_alignment`` of the flipped trace: for each reference word the
    hypothesis position aligned to it, and running sums of the hypothesis and reference
    errors."""
    path = np.empty(n + m, np.int8)
    k, i, j = 0, n, m
    while i > 0 or j > 0:
        op = ops[off[i] + j - lo[i]]
        path[k] = op
        k += 1
        if op <= _SUB:  # a match or a substitution
            i -= 1
            j -= 1
        elif op == _INS:
            j -= 1
        else:
            i -= 1
    align = np.empty(m, np.int64)
    hyp_err = np.zeros(n + 1, np.int64)
    ref_err = np.zeros(m + 1, np.int64)
    h, r = -1, -1
    for t in range(k - 1, -1, -1):
        op = path[t]
        if op <= _SUB:  # a match or a substitution
            h += 1
            r += 1
            align[r] = h
            if op == _SUB:
                hyp_err[h + 1] = 1
                ref_err[r + 1] = 1
        elif op == _DEL:  # a hypothesis word left out of the reference
            h += 1
            hyp_err[h + 1] = 1
        else:  # a reference word missing from the hypothesis
            r += 1
            align[r] = h
            ref_err[r + 1] = 1
    return align, np.cumsum(hyp_err), np.cumsum(ref_err)


@_jit
def _perform_shift(words: Array, start: int, length: int, target: int) -> Array:
    """sacreBLEU's ``_perform_shift``, slice for slice (its third case included)."""
    block = words[start : start + length]
    if target < start:
        return np.concatenate((words[:target], block, words[target:start], words[start + length :]))
    if target > start + length:
        return np.concatenate(
            (words[:start], words[start + length : target], block, words[target:])
        )
    return np.concatenate(
        (words[:start], words[start + length : length + target], block, words[length + target :])
    )


@_jit
def _source(start: int, length: int, target: int, n: int, k: int) -> int:
    """Where the word at position ``k`` of the shifted hypothesis comes from, by the slices of
    :func:`_perform_shift` (so that a candidate is scored without building it)."""
    if target < start:
        if target <= k < target + length:
            return start + k - target
        return k - length if target + length <= k < start + length else k
    if target > start + length:
        if target - length <= k < target:
            return start + k - (target - length)
        return k + length if start <= k < target - length else k
    jumped = min(n, length + target) - start - length  # the words the block moves past
    if start <= k < start + jumped:
        return k + length
    return k - jumped if start + jumped <= k < start + jumped + length else k


@_jit
def _offset_from(scratch: Array, values: Array, off: Array, i: int) -> tuple[bool, int]:
    """Whether row ``i`` of ``scratch`` is row ``i`` of ``values`` plus a constant, and which
    (infinite cells must be the same in both)."""
    have = False
    shift = 0
    for k in range(off[i], off[i + 1]):
        a = scratch[k]
        b = values[k]
        if a >= INF or b >= INF:
            if a != b:
                return False, 0
        elif not have:
            shift = a - b
            have = True
        elif a - b != shift:
            return False, 0
    return have, shift


@_jit
def _shifted_distance(
    words: Array, ref: Array, shift: Shift, band: Band, rows: Rows, score: int
) -> int:
    """The beam edit distance of ``words`` with ``shift`` (start, length, target) applied,
    computed from the current hypothesis's rows (``rows``: its values and operations, and a
    scratch array)."""
    start, length, target = shift
    lo, off = band[0], band[2]
    values, _, scratch = rows
    n = len(words)
    first = min(start, target)  # rows up to here are the current hypothesis's
    if target < start:
        same_from = start + length
    elif target > start + length:
        same_from = target
    else:
        same_from = min(n, length + target)
    scratch[off[first] : off[first + 1]] = values[off[first] : off[first + 1]]
    for i in range(first + 1, n + 1):
        word = words[_source(start, length, target, n, i - 1)]
        _row(word, ref, band, scratch, scratch, i, False)
        if same_from <= i < n:
            same, change = _offset_from(scratch, values, off, i)
            if same:
                return score + change
    return int(scratch[off[n] + len(ref) - lo[n]])


@_jit
def _try_targets(
    words: Array, ref: Array, start: tuple[int, int, int], band: Band, rows: Rows, state: State
) -> State:
    """The targets of one matched block (``start``: hypothesis and reference start, length),
    as sacreBLEU's ``_shift`` tries them: just after the hypothesis word aligned to each
    reference position from the one before the block to its last, each target once in a row."""
    start_h, start_r, length = start
    score, align, found, best, checked = state
    previous = -1
    for offset in range(-1, length):
        target = 0 if start_r + offset == -1 else align[start_r + offset] + 1
        if target == previous:
            continue
        previous = target
        distance = _shifted_distance(words, ref, (start_h, length, target), band, rows, score)
        checked += 1
        gain = score - distance
        if not found or _ranks_higher((gain, length, start_h, target), best):
            best = (gain, length, start_h, target)
            found = True
    return score, align, found, best, checked


@_jit
def _best_shift(
    words: Array, ref: Array, band: Band, rows: Rows, score: int, checked: int
) -> tuple[bool, Candidate, int]:
    """sacreBLEU's ``_shift``: the best shift by (gain, length, earliest start, earliest
    target) over the blocks its filters let through, until the candidate limit."""
    n, m = len(words), len(ref)
    lo, hi, off = band
    align, hyp_err, ref_err = _alignment(n, m, lo, hi, off, rows[1])
    state = (score, align, False, (0, 0, 0, 0), checked)
    for start_h in range(n):
        for start_r in range(
            max(0, start_h - MAX_SHIFT_DIST), min(m, start_h + MAX_SHIFT_DIST + 1)
        ):
            length = 0
            while length < MAX_SHIFT_SIZE and words[start_h + length] == ref[start_r + length]:
                length += 1
                # shift only a block with an error, to a place with an error, not into itself
                if (
                    hyp_err[start_h + length] > hyp_err[start_h]
                    and ref_err[start_r + length] > ref_err[start_r]
                    and not start_h <= align[start_r] < start_h + length
                ):
                    state = _try_targets(words, ref, (start_h, start_r, length), band, rows, state)
                    if state[4] >= MAX_SHIFT_CANDIDATES:
                        return state[2], state[3], state[4]
                if start_h + length == n or start_r + length == m:
                    break
    return state[2], state[3], state[4]


@_jit
def _ranks_higher(candidate: Candidate, best: Candidate) -> bool:
    """sacreBLEU's order of candidates (gain, length, -start, -target), strictly greater."""
    gain, length, start, target = candidate
    if gain != best[0]:
        return bool(gain > best[0])
    if length != best[1]:
        return bool(length > best[1])
    if start != best[2]:
        return bool(start < best[2])
    return bool(target < best[3])


@_jit
def _ter(hyp: Array, ref: Array) -> int:
    """sacreBLEU's ``translation_edit_rate`` on word ids: the number of edits."""
    n, m = len(hyp), len(ref)
    if m == 0:
        return n
    band = _layout(n, m)
    size = band[2][n + 1]
    rows = (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64))
    values, ops, _ = rows
    for j in range(m + 1):  # the first row: one insertion per reference word
        values[j] = j
        ops[j] = _INS
    words = hyp.copy()
    shifts = 0
    checked = 0
    while True:
        score = _distance(words, ref, band, values, ops)
        found, best, checked = _best_shift(words, ref, band, rows, score, checked)
        if checked >= MAX_SHIFT_CANDIDATES or not found or best[0] <= 0:
            return shifts + score
        shifts += 1
        words = _perform_shift(words, best[2], best[1], best[3])


@_jit
def _levenshtein(hyp: Array, ref: Array) -> int:
    """Levenshtein's distance between two id sequences, one row at a time."""
    row = np.arange(len(ref) + 1)
    for i in range(1, len(hyp) + 1):
        diagonal = row[0]
        row[0] = i
        for j in range(1, len(ref) + 1):
            above = row[j]
            row[j] = min(diagonal + (hyp[i - 1] != ref[j - 1]), above + 1, row[j - 1] + 1)
            diagonal = above
    return int(row[len(ref)])


def word_ids(words: Sequence[str], vocabulary: dict[str, int]) -> np.ndarray:
    """The ids of ``words`` in ``vocabulary`` (-1 for a word not in it), as the kernels take
    them."""
    return np.fromiter((vocabulary.get(w, -1) for w in words), np.int32, len(words))


def vocabulary_of(words: Sequence[str]) -> dict[str, int]:
    """An id for every distinct word of ``words``."""
    vocabulary: dict[str, int] = {}
    for word in words:
        vocabulary.setdefault(word, len(vocabulary))
    return vocabulary


def ter_edits(hypothesis: Sequence[str], reference: Sequence[str]) -> int:
    """The edits of sacreBLEU's TER between two word sequences (shifts count one each):
    ``translation_edit_rate(hypothesis, reference)[0]``, at compiled speed."""
    vocabulary = vocabulary_of(reference)
    return ter_edits_ids(word_ids(hypothesis, vocabulary), word_ids(reference, vocabulary))


def ter_edits_ids(hypothesis: np.ndarray, reference: np.ndarray) -> int:
    """:func:`ter_edits` on int32 word ids (equal ids are equal words; -1 matches nothing)."""
    return int(_ter(hypothesis, reference))


def levenshtein(hypothesis: Sequence[str], reference: Sequence[str]) -> int:
    """Levenshtein's distance between two word sequences (insertions, deletions,
    substitutions), at compiled speed."""
    vocabulary = vocabulary_of(reference)
    return int(_levenshtein(word_ids(hypothesis, vocabulary), word_ids(reference, vocabulary)))


def warm_up() -> None:
    """Compile the kernels, or load them from numba's cache, now rather than on first use."""
    ter_edits(["a", "b", "c"], ["b", "a", "d"])
    levenshtein(["a"], ["b"])
