"""The judgments table that every function of :mod:`evalcore.human` reads.

One row is one annotator's answer about one shown output on one criterion: a 1–5 adequacy or
fluency score, a 0–100 direct-assessment score, or, for ranking protocols, the rank the output got
on its screen (1 = best, ties share a rank). A table holds one criterion of one protocol (and one
language pair); the caller builds one table per criterion, so every per-annotator statistic is
"per annotator and criterion" without a criterion column.

Annotators, segments and systems are integer codes ``0..n-1`` (``numpy.unique(ids,
return_inverse=True)`` turns database ids into codes). Every per-annotator result is an array
indexed by annotator code, every per-system result an array indexed by system code, so a code
without rows still has a slot (with ``n = 0`` and NaN statistics).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class ItemType(enum.IntEnum):
    """What a row's item was (DESIGN §4). The values are the codes stored in ``item_type``."""

    REAL = 0  # an ordinary item: a system output to be judged
    REPEAT = 1  # the same output shown again to the same annotator (expects the same answer)
    REFERENCE = 2  # a human reference shown as an output (expects a high score)
    BAD_REF = 3  # a degraded copy of a real output (expects a lower score than its original)


@dataclass(frozen=True)
class Judgments:
    """Parallel arrays, one entry per row (annotator × item × shown output, one criterion).

    Build it with :meth:`from_arrays`, which converts dtypes, fills the optional columns and
    validates everything; the constructor only checks shapes.

    Attributes:
        annotator: annotator code per row, ``0..n_annotators-1``.
        segment: segment code per row, ``0..n_segments-1``.
        system: system code per row, ``0..n_systems-1`` (a reference shown as an output gets a code
            of its own, e.g. a "human" system).
        score: the answer. Scores: higher is better (a criterion whose lower scores are better,
            such as an edit rate, enters :meth:`negated`). Ranking protocols: the rank, 1 = best.
        item_type: :class:`ItemType` code per row.
        original: for REPEAT and BAD_REF rows, the row index of the same annotator's judgment of the
            original output (the REAL row it repeats or degrades); ``-1`` for other rows and for QC
            rows whose original was not judged. :func:`link_originals` computes it from item ids.
        screen: screen code per row; rows answered together on one screen (a ranking of k outputs,
            a page of k adequacy scores) share it. Rankings are compared within a screen, time on
            task counts each screen once.
        seconds: time spent on the screen the row belongs to (NaN when unknown); every row of a
            screen carries the same value.
        n_annotators, n_segments, n_systems: number of codes (at least the largest code + 1).
        credit_of: for a row that credits another system with an answer given once (a merged
            identical output: the text was shown once for several systems), the row index of
            the answer's own row; ``-1`` for the answer's own rows. Credited rows are REAL rows
            that differ from their answer's row only in ``system``: per-system statistics see
            them, per-annotator and per-answer statistics (normalisation, QC, agreement, time)
            count the answer once (:attr:`answers`).
        standardised: the scores are z-scores already (a release that publishes only its
            standardised scores, WMT's ``*-good-stnd.csv``): normalisation takes them as
            given, and the raw scale's figures are not known (:func:`~evalcore.human.
            normalisation.normalise`).
    """

    annotator: IntArray
    segment: IntArray
    system: IntArray
    score: FloatArray
    item_type: IntArray
    original: IntArray
    screen: IntArray
    seconds: FloatArray
    n_annotators: int
    n_segments: int
    n_systems: int
    credit_of: IntArray | None = None
    standardised: bool = False

    def __post_init__(self) -> None:
        n = self.score.shape[0]
        if self.credit_of is None:
            object.__setattr__(self, "credit_of", np.full(n, -1, dtype=np.int64))
        for name in (
            "annotator",
            "segment",
            "system",
            "item_type",
            "original",
            "screen",
            "seconds",
            "credit_of",
        ):
            column = getattr(self, name)
            if column.shape != (n,):
                raise ValueError(f"Judgments.{name} has shape {column.shape}, expected ({n},)")

    def __len__(self) -> int:
        return int(self.score.shape[0])

    @property
    def answers(self) -> BoolArray:
        """The rows that are answers given (every row but those crediting another system with
        a merged answer)."""
        assert self.credit_of is not None
        return self.credit_of < 0

    @property
    def answer(self) -> IntArray:
        """Per row, the row of the answer it holds: itself, or the row it credits."""
        assert self.credit_of is not None
        return np.where(self.credit_of >= 0, self.credit_of, np.arange(len(self)))

    @classmethod
    def from_arrays(
        cls,
        *,
        annotator: npt.ArrayLike,
        segment: npt.ArrayLike,
        system: npt.ArrayLike,
        score: npt.ArrayLike,
        item_type: npt.ArrayLike | None = None,
        original: npt.ArrayLike | None = None,
        screen: npt.ArrayLike | None = None,
        seconds: npt.ArrayLike | None = None,
        n_annotators: int | None = None,
        n_segments: int | None = None,
        n_systems: int | None = None,
        credit_of: npt.ArrayLike | None = None,
        standardised: bool = False,
    ) -> Judgments:
        """Validate and convert the columns; optional ones get their defaults.

        Defaults: every row REAL, no originals (``-1``), one screen per row (as in direct
        assessment), unknown seconds (NaN), counts = largest code + 1, no credited rows.

        Raises:
            ValueError: on a shape mismatch, a negative or too large code, a non-finite score, an
                unknown item type, or an ``original`` that does not point to a REAL row of the same
                annotator (the message names the first offending row).
        """
        score_arr = np.asarray(score, dtype=np.float64)
        if score_arr.ndim != 1:
            raise ValueError(f"score must be one-dimensional, got shape {score_arr.shape}")
        n = score_arr.shape[0]
        annotator_arr = _codes("annotator", annotator, n)
        segment_arr = _codes("segment", segment, n)
        system_arr = _codes("system", system, n)
        item_type_arr = (
            np.zeros(n, dtype=np.int64) if item_type is None else _codes("item_type", item_type, n)
        )
        original_arr = (
            np.full(n, -1, dtype=np.int64) if original is None else _as_int("original", original, n)
        )
        screen_arr = np.arange(n, dtype=np.int64) if screen is None else _codes("screen", screen, n)
        seconds_arr = (
            np.full(n, np.nan) if seconds is None else np.asarray(seconds, dtype=np.float64)
        )
        if seconds_arr.shape != (n,):
            raise ValueError(f"seconds has shape {seconds_arr.shape}, expected ({n},)")

        bad = ~np.isfinite(score_arr)
        if bad.any():
            raise ValueError(f"score of row {int(np.argmax(bad))} is not a finite number")
        known = np.isin(item_type_arr, [t.value for t in ItemType])
        if not known.all():
            row = int(np.argmin(known))
            raise ValueError(f"item_type of row {row} is {item_type_arr[row]}, not an ItemType")

        judgments = cls(
            annotator=annotator_arr,
            segment=segment_arr,
            system=system_arr,
            score=score_arr,
            item_type=item_type_arr,
            original=original_arr,
            screen=screen_arr,
            seconds=seconds_arr,
            n_annotators=_count("n_annotators", n_annotators, annotator_arr),
            n_segments=_count("n_segments", n_segments, segment_arr),
            n_systems=_count("n_systems", n_systems, system_arr),
            credit_of=None if credit_of is None else _as_int("credit_of", credit_of, n),
            standardised=standardised,
        )
        judgments._check_originals()
        judgments._check_credits()
        return judgments

    def _check_credits(self) -> None:
        assert self.credit_of is not None
        credited = self.credit_of >= 0
        if not credited.any():
            return
        if (self.credit_of < -1).any() or (self.credit_of >= len(self)).any():
            row = int(np.argmax((self.credit_of < -1) | (self.credit_of >= len(self))))
            raise ValueError(f"credit_of of row {row} is {self.credit_of[row]}, not a row index")
        target = np.where(credited, self.credit_of, 0)
        wrong = credited & (
            (self.credit_of[target] >= 0)
            | (self.item_type != ItemType.REAL)
            | (self.item_type[target] != ItemType.REAL)
            | (self.annotator[target] != self.annotator)
            | (self.screen[target] != self.screen)
            | (self.segment[target] != self.segment)
            | (self.score[target] != self.score)
        )
        if wrong.any():
            row = int(np.argmax(wrong))
            raise ValueError(
                f"credit_of of row {row} points to row {self.credit_of[row]}, which is not a "
                "REAL answer of the same annotator, screen, segment and score"
            )

    def _check_originals(self) -> None:
        has = self.original >= 0
        if (self.original < -1).any() or (self.original >= len(self)).any():
            row = int(np.argmax((self.original < -1) | (self.original >= len(self))))
            raise ValueError(f"original of row {row} is {self.original[row]}, not a row index")
        qc = (self.item_type == ItemType.REPEAT) | (self.item_type == ItemType.BAD_REF)
        if (has & ~qc).any():
            row = int(np.argmax(has & ~qc))
            raise ValueError(f"row {row} has an original but is not a REPEAT or BAD_REF row")
        target = np.where(has, self.original, 0)
        wrong = has & (
            (self.annotator[target] != self.annotator) | (self.item_type[target] != ItemType.REAL)
        )
        if wrong.any():
            row = int(np.argmax(wrong))
            raise ValueError(
                f"original of row {row} points to row {self.original[row]}, "
                "which is not a REAL row of the same annotator"
            )

    def select(self, rows: npt.ArrayLike) -> Judgments:
        """The rows selected by a boolean mask or an index array, with ``original`` re-pointed.

        An original that is not selected becomes ``-1``; the code counts are kept.
        """
        index = np.arange(len(self))[np.asarray(rows)]
        new_position = np.full(len(self), -1, dtype=np.int64)
        new_position[index] = np.arange(index.shape[0])
        old_original = self.original[index]
        original = np.where(old_original >= 0, new_position[np.maximum(old_original, 0)], -1)
        # The rows of one answer left in the selection credit the first of them (which
        # becomes the answer's own row when the old one is left out).
        _, first, inverse = np.unique(self.answer[index], return_index=True, return_inverse=True)
        root = first[inverse]
        credit_of = np.where(root == np.arange(index.shape[0]), -1, root).astype(np.int64)
        return Judgments(
            annotator=self.annotator[index],
            segment=self.segment[index],
            system=self.system[index],
            score=self.score[index],
            item_type=self.item_type[index],
            original=original,
            screen=self.screen[index],
            seconds=self.seconds[index],
            n_annotators=self.n_annotators,
            n_segments=self.n_segments,
            n_systems=self.n_systems,
            credit_of=credit_of,
            standardised=self.standardised,
        )

    def negated(self) -> Judgments:
        """The same rows with every score negated (``0.0 − x``, so a zero stays +0.0): the
        judgments of a criterion whose lower scores are better, turned to "higher is better",
        which the score QC, system scores and significance tests assume."""
        return replace(self, score=0.0 - self.score)

    def rows_of(self, *types: ItemType) -> BoolArray:
        """Boolean mask of the rows whose item type is one of ``types``."""
        return np.isin(self.item_type, [t.value for t in types])


def link_originals(
    *,
    annotator: npt.ArrayLike,
    item: npt.ArrayLike,
    original_item: npt.ArrayLike,
    output: npt.ArrayLike | None = None,
) -> IntArray:
    """Row index of each QC row's original judgment, for ``Judgments.original``.

    Row ``i`` is matched to the row ``j`` with the same annotator, ``item[j] == original_item[i]``
    and the same shown ``output`` (a translation id, or the position on the screen; omit it when
    every item shows one output). Rows with a negative ``original_item`` (not a QC item) and QC rows
    whose original the annotator did not judge get ``-1``.

    Args:
        annotator: annotator code (or id) per row.
        item: item id per row (the screen's item, e.g. the database key of the Item).
        original_item: for REPEAT/BAD_REF rows the id of the item they copy, else ``-1``.
        output: the shown output per row, to tell apart several outputs on one screen.

    Raises:
        ValueError: when two rows share (annotator, item, output), so the match is ambiguous.
    """
    annotator_arr = np.asarray(annotator)
    item_arr = np.asarray(item)
    original_arr = np.asarray(original_item)
    n = item_arr.shape[0]
    output_arr = np.zeros(n, dtype=np.int64) if output is None else np.asarray(output)
    # Code every column over the values it shares with its lookup counterpart, then mix the
    # codes into one integer key per row: a sorted search then matches all rows at once.
    _, annotator_code = np.unique(annotator_arr, return_inverse=True)
    _, output_code = np.unique(output_arr, return_inverse=True)
    items, both = np.unique(np.concatenate([item_arr, original_arr]), return_inverse=True)
    item_code, original_code = both[:n], both[n:]
    n_items = items.shape[0]
    n_outputs = int(output_code.max()) + 1 if n else 1
    key = (annotator_code.astype(np.int64) * n_items + item_code) * n_outputs + output_code
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    if n and (np.diff(sorted_key) == 0).any():
        duplicate = order[int(np.argmax(np.diff(sorted_key) == 0)) + 1]
        raise ValueError(f"rows share annotator, item and output (row {int(duplicate)})")
    wanted = (annotator_code.astype(np.int64) * n_items + original_code) * n_outputs + output_code
    position = np.searchsorted(sorted_key, wanted)
    position = np.minimum(position, max(n - 1, 0))
    found = (original_arr >= 0) & (sorted_key[position] == wanted) if n else np.zeros(0, bool)
    return np.where(found, order[position], -1).astype(np.int64)


def _as_int(name: str, values: npt.ArrayLike, n: int) -> IntArray:
    array = np.asarray(values)
    if array.shape != (n,):
        raise ValueError(f"{name} has shape {array.shape}, expected ({n},)")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        as_int = array.astype(np.int64)
        if not np.array_equal(as_int, array):
            raise ValueError(f"{name} must hold integer codes")
        return as_int
    return array.astype(np.int64)


def _codes(name: str, values: npt.ArrayLike, n: int) -> IntArray:
    array = _as_int(name, values, n)
    if (array < 0).any():
        raise ValueError(f"{name} of row {int(np.argmax(array < 0))} is negative; codes start at 0")
    return array


def _count(name: str, given: int | None, codes: IntArray) -> int:
    needed = int(codes.max()) + 1 if codes.size else 0
    if given is None:
        return needed
    if given < needed:
        raise ValueError(f"{name}={given} but a code {needed - 1} occurs")
    return int(given)


def group_sum(keys: IntArray, values: npt.NDArray[Any], n_groups: int) -> FloatArray:
    """Sum of ``values`` per integer key ``0..n_groups-1`` (vectorised with ``bincount``)."""
    return np.bincount(keys, weights=values, minlength=n_groups).astype(np.float64)


def group_count(keys: IntArray, n_groups: int) -> IntArray:
    """Number of rows per integer key ``0..n_groups-1``."""
    return np.bincount(keys, minlength=n_groups).astype(np.int64)


def group_mean_sd(
    keys: IntArray, values: FloatArray, n_groups: int
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Mean, sample standard deviation (n−1) and count of ``values`` per key.

    Two passes (mean first, then squared deviations) so that large offsets cannot cancel. Groups
    with no row get a NaN mean, groups with fewer than two rows a NaN standard deviation.
    """
    count = group_count(keys, n_groups)
    total = group_sum(keys, values, n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        deviation = values - mean[keys]
        squares = group_sum(keys, deviation * deviation, n_groups)
        sd = np.where(count > 1, np.sqrt(squares / np.maximum(count - 1, 1)), np.nan)
    return mean, sd, count
