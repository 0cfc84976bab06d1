"""Error spans (ESA, MQM): agreement between two markings of one text, what quality control
asks of a bad reference, and error tallies per system.

A marking is a list of (start, end) offsets in code points of a text of ``length`` code points;
position ``length`` is the missing-content marker after the text, so a marking covers
``length + 1`` positions. Agreement is counted over positions:

* character-level F1 between two markings, pooled over pairs (micro-averaged):
  2·Σ|A∩B| / (Σ|A| + Σ|B|) — symmetric, so it does not matter which marking is called the
  reference; pairs where neither marks anything add nothing to it and are counted apart;
* Cohen's κ over the positions' marked / unmarked labels, pooled over pairs:
  (p_o − p_e) / (1 − p_e) with p_e from each side's own share of marked positions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Marking = Sequence[tuple[int, int]]
BoolArray = npt.NDArray[np.bool_]


def marked_positions(marking: Marking, length: int) -> BoolArray:
    """Which of the ``length + 1`` positions (the text and its marker) the marking covers."""
    mask = np.zeros(length + 1, dtype=bool)
    for start, end in marking:
        if not 0 <= start < end <= length + 1:
            raise ValueError(f"span {start}–{end} is outside a text of {length} code points")
        mask[start:end] = True
    return mask


@dataclass(frozen=True)
class SpanAgreement:
    """Agreement of pairs of markings of the same texts.

    Attributes:
        f1: character-level F1, pooled; NaN when no pair marks anything.
        kappa: Cohen's κ over positions, pooled; NaN when there are no positions or every
            position has the same label on both sides (p_e = 1).
        n_pairs: pairs compared; n_both_clean: pairs where neither side marked anything.
        n_positions: positions compared (text plus marker, summed over pairs).
    """

    f1: float
    kappa: float
    n_pairs: int
    n_both_clean: int
    n_positions: int


def span_agreement(pairs: Iterable[tuple[Marking, Marking, int]]) -> SpanAgreement:
    """Agreement of ``pairs`` of (marking a, marking b, text length)."""
    both = only_a = only_b = neither = 0
    n_pairs = n_clean = 0
    for a, b, length in pairs:
        mask_a = marked_positions(a, length)
        mask_b = marked_positions(b, length)
        n_pairs += 1
        n_clean += int(not mask_a.any() and not mask_b.any())
        both += int(np.count_nonzero(mask_a & mask_b))
        only_a += int(np.count_nonzero(mask_a & ~mask_b))
        only_b += int(np.count_nonzero(~mask_a & mask_b))
        neither += int(np.count_nonzero(~mask_a & ~mask_b))
    n = both + only_a + only_b + neither
    marked = 2 * both + only_a + only_b
    f1 = 2 * both / marked if marked else float("nan")
    kappa = float("nan")
    if n:
        p_observed = (both + neither) / n
        share_a = (both + only_a) / n
        share_b = (both + only_b) / n
        p_expected = share_a * share_b + (1 - share_a) * (1 - share_b)
        if p_expected < 1:
            kappa = (p_observed - p_expected) / (1 - p_expected)
    return SpanAgreement(f1, kappa, n_pairs, n_clean, n)


def degraded_range(original: str, degraded: str, *, whole_words: bool = True) -> tuple[int, int]:
    """Where ``degraded`` (a bad reference) differs from ``original``: the code points between
    their longest common prefix and suffix, ``(start, end)`` in ``degraded``, widened to whole
    words (a bad reference replaces words; the phrase may begin or end with the letters it
    replaced) unless the script has no spaces between words. An unchanged text gives an empty
    range at its end."""
    limit = min(len(original), len(degraded))
    prefix = 0
    while prefix < limit and original[prefix] == degraded[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and original[-1 - suffix] == degraded[-1 - suffix]:
        suffix += 1
    start, end = prefix, len(degraded) - suffix
    if whole_words and start < end:
        # Only a boundary inside a word moves (not one at a space: an appended phrase).
        if not degraded[start].isspace():
            while start > 0 and not degraded[start - 1].isspace():
                start -= 1
        if not degraded[end - 1].isspace():
            while end < len(degraded) and not degraded[end].isspace():
                end += 1
    return start, end


def finds(marking: Marking, degraded: tuple[int, int]) -> bool:
    """Whether a marking has a span over (or overlapping) the degraded range."""
    start, end = degraded
    if start >= end:
        return False
    return any(s < end and start < e for s, e in marking)
