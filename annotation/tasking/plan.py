"""Planning annotation tasks: balanced screens, quality-control items and their placement.

Pure Python and numpy (no Django), deterministic from a seed. The service that stores tasks
(``annotation.tasking.build.tasks_build``) turns these plans into rows.

- **Balanced screens**: every system is shown for every segment; with ``k`` outputs per screen the
  screens of a segment are filled from a per-segment rotation of the systems. When the systems
  fill the screens exactly, a Latin-square slot rotation shows each system equally often in every
  position (exactly, over any multiple of ``k`` segments); otherwise short screens are topped up
  with the systems shown least so far and slots are an assignment problem per screen (balanced
  within one).
- **QC items** (DESIGN §4, WMT DA / Appraise): bad references (a span of the output replaced by a
  same-length phrase from a different segment's reference; never the first word; the span length
  from :func:`bad_reference_span`), repeats and references as output; each placed about half a
  task away from its original, in shuffled positions.
- **Document screens** (WMT's document-level DA and ESA): one system's translation of a window
  of consecutive segments of one document on one screen. Windows are planned and placed (QC
  copies included: a repeat or a bad reference of a whole window) as screens are, then expanded
  into one item per segment (:func:`expand_windows`), so that judgments and QC stay per segment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np
from scipy.optimize import linear_sum_assignment

REAL = "real"
BAD_REFERENCE = "bad_ref"
REPEAT = "repeat"
REFERENCE = "reference"

# Languages written without spaces between words: spans are counted in characters.
CHARACTER_BASED_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo"})


def is_character_based(language: str) -> bool:
    return language.lower().replace("_", "-").split("-")[0] in CHARACTER_BASED_LANGUAGES


def bad_reference_span(length: int, *, character_based: bool = False) -> int:
    """How many units of an output a bad reference replaces (WMT DA / Appraise table).

    ``length`` is the output's length in words (or characters for scripts without spaces):
    1 → 1, 2–5 → 2, 6–8 → 3, 9–15 → 4, 16–20 → 5, more → 6; doubled for character-based scripts.
    """
    if length < 1:
        raise ValueError("an output needs at least one word to be degraded")
    if length == 1:
        span = 1
    elif length <= 5:
        span = 2
    elif length <= 8:
        span = 3
    elif length <= 15:
        span = 4
    elif length <= 20:
        span = 5
    else:
        span = 6
    return 2 * span if character_based else span


def _unit_offsets(text: str, character_based: bool) -> list[tuple[int, int]]:
    """(start, end) of every unit in ``text``: words, or non-space characters for scripts
    without spaces. Replacing through offsets keeps the rest of the text exactly as it was
    (spaces, Latin words and digits inside Chinese or Japanese text)."""
    if character_based:
        return [(i, i + 1) for i, c in enumerate(text) if not c.isspace()]
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


@dataclass(frozen=True)
class BadReference:
    text: str
    start: int  # first replaced unit (0-based, never 0 when the output has more than one unit)
    span: int  # units replaced
    donor: int  # index of the segment whose reference gave the phrase


def reference_units(references: Sequence[str], *, character_based: bool = False) -> np.ndarray:
    """The number of units (words, or characters for scripts without spaces) of each reference,
    for :func:`make_bad_reference`: a build counts them once for all its bad references."""
    return np.array(
        [len(_unit_offsets(ref, character_based)) for ref in references], dtype=np.int64
    )


def make_bad_reference(
    text: str,
    *,
    segment: int,
    references: Sequence[str],
    rng: np.random.Generator,
    character_based: bool = False,
    donor_units: np.ndarray | None = None,
) -> BadReference:
    """Degrade ``text`` (an output for segment ``segment``) with a phrase from the reference of
    a different segment, picked at random among those long enough.

    The span never covers the first unit; an output of a single unit gets the phrase appended.
    ``donor_units`` is :func:`reference_units` of ``references``, counted once by a caller that
    makes many bad references (counted on every call, a build took minutes at 2,000 segments).
    """
    offsets = _unit_offsets(text, character_based)
    units = [text[a:b] for a, b in offsets] or [""]
    span = bad_reference_span(len(units), character_based=character_based)
    if len(units) > 1:
        span = min(span, len(units) - 1)
        start = int(rng.integers(1, len(units) - span + 1))
    else:
        start = 1  # append after the only unit: the first is never touched
    counts = (
        reference_units(references, character_based=character_based)
        if donor_units is None
        else donor_units
    )
    # A reference with a unit is one with text; the donors keep the references' order, so the
    # same seed picks the same donor.
    donors = np.flatnonzero(counts > 0)
    donors = donors[donors != segment]
    if not donors.size:
        raise ValueError("a bad reference needs the reference of another segment")
    long_enough = donors[counts[donors] >= span]
    donor = (
        int(rng.choice(long_enough))
        if long_enough.size
        else int(donors[np.argmax(counts[donors])])  # the first of the longest
    )
    donor_text = references[donor]
    donor_offsets = _unit_offsets(donor_text, character_based)
    offset = int(rng.integers(0, max(1, len(donor_offsets) - span + 1)))
    taken = donor_offsets[offset : offset + span]
    phrase = donor_text[taken[0][0] : taken[-1][1]]
    if len(units) > 1:
        # Replace units start .. start + span − 1 in place; everything around stays as it was.
        degraded = text[: offsets[start][0]] + phrase + text[offsets[start + span - 1][1] :]
    else:
        separator = "" if character_based else " "
        degraded = text.rstrip() + separator + phrase
    return BadReference(degraded, start, span, donor)


# --------------------------------------------------------------------------------------------
# Screens


@dataclass(frozen=True)
class Screen:
    """A real screen: one segment and the systems shown in slot order (indices into the
    planner's system list). ``turn`` picks the systems' runs (default: the segment): the
    segments of a document screen share their window's, so one run translates the window."""

    segment: int
    systems: tuple[int, ...]
    turn: int | None = None
    # Per slot, the other systems that produced the slot's text and share its answer
    # (merged identical outputs, :mod:`annotation.tasking.merging`); empty: none merged.
    credits: tuple[tuple[int, ...], ...] = ()

    def credited(self, slot: int) -> tuple[int, ...]:
        return self.credits[slot] if self.credits else ()

    @property
    def run_turn(self) -> int:
        return self.segment if self.turn is None else self.turn


def balanced_screens(
    n_segments: int, n_systems: int, k: int, rng: np.random.Generator
) -> list[Screen]:
    """Screens that show every system for every segment, ``min(k, n_systems)`` per screen,
    with systems balanced over screen positions."""
    if n_segments < 1 or n_systems < 1:
        return []
    width = min(k, n_systems)
    base = rng.permutation(n_systems)
    shown = np.zeros(n_systems, dtype=np.int64)
    slot_counts = np.zeros((n_systems, width), dtype=np.int64)
    screens: list[Screen] = []
    exact = n_systems % width == 0
    for segment in range(n_segments):
        # A Latin rotation: segment j starts the base order at j, so screen groupings vary.
        order = [int(s) for s in np.roll(base, -segment)]
        groups = [order[i : i + width] for i in range(0, n_systems, width)]
        if exact:
            # Slot (index + 2j) mod width puts system s in slot (pos(s) + j) mod width: every
            # system visits every slot once per ``width`` segments.
            for group in groups:
                slots = [0] * width
                for index, system in enumerate(group):
                    slots[(index + 2 * segment) % width] = system
                screens.append(Screen(segment, tuple(slots)))
            continue
        last = groups[-1]
        while len(last) < width:
            candidates = [s for s in range(n_systems) if s not in last]
            fewest = min(shown[c] for c in candidates)
            pool = [c for c in candidates if shown[c] == fewest]
            last.append(int(rng.choice(pool)))
        for group in groups:
            for s in group:
                shown[s] += 1
            # Slot assignment minimising how often each system already sat in each slot;
            # a random tie-breaker keeps ties from always favouring the same order.
            cost = slot_counts[group].astype(float) + rng.random((width, width)) * 1e-3
            rows, cols = linear_sum_assignment(cost)
            slots = [0] * width
            for r, c in zip(rows, cols, strict=True):
                slots[c] = group[r]
                slot_counts[group[r], c] += 1
            screens.append(Screen(segment, tuple(slots)))
    return screens


# --------------------------------------------------------------------------------------------
# Document screens


@dataclass(frozen=True)
class Window:
    """A real document screen: consecutive segments of one document (indices in document
    order) in the translation of one system."""

    segments: tuple[int, ...]
    system: int


def document_windows(places: Sequence[tuple[int, int]], size: int) -> list[tuple[int, ...]]:
    """The segments (indices into ``places``, which holds each segment's document and position
    in it) cut into windows in document order: each document whole when ``size`` is 0,
    otherwise in the fewest windows of at most ``size`` segments, of near-equal length (11
    segments in windows of 10 are 6 and 5, not 10 and 1: a window of one segment has no
    context). Documents come in the order of their first segment in ``places``."""
    if size < 0:
        raise ValueError("a window holds at least one segment (0: the whole document)")
    by_document: dict[int, list[int]] = {}
    for index, (document, _place) in enumerate(places):
        by_document.setdefault(document, []).append(index)
    windows = []
    for in_document in by_document.values():
        segments = sorted(in_document, key=lambda i: places[i][1])
        n = 1 if size == 0 else math.ceil(len(segments) / size)
        base, extra = divmod(len(segments), n)
        start = 0
        for w in range(n):
            length = base + (1 if w < extra else 0)
            windows.append(tuple(segments[start : start + length]))
            start += length
    return windows


def document_screens(windows: Sequence[tuple[int, ...]], n_systems: int) -> list[Window]:
    """Every window in the translation of every system."""
    return [Window(tuple(w), system) for w in windows for system in range(n_systems)]


def windows_per_task(windows: Sequence[Window], items_per_task: int) -> int:
    """How many document screens make a task of about ``items_per_task`` segments (at least
    one): the QC mix is then counted in screens, since its copies are whole windows."""
    if not windows:
        return 1
    mean = sum(len(w.segments) for w in windows) / len(windows)
    return max(1, round(items_per_task / mean))


# --------------------------------------------------------------------------------------------
# Tasks


@dataclass(frozen=True)
class QcMix:
    """Quality-control items per 100 items (the rest are real)."""

    bad_reference: int = 10
    repeat: int = 5
    reference: int = 5

    @property
    def real(self) -> int:
        return 100 - self.bad_reference - self.repeat - self.reference


def qc_counts(size: int, mix: QcMix) -> dict[str, int]:
    """Items of each kind in a task of ``size`` items (largest-remainder rounding)."""
    shares = {
        REAL: mix.real,
        BAD_REFERENCE: mix.bad_reference,
        REPEAT: mix.repeat,
        REFERENCE: mix.reference,
    }
    exact = {kind: size * share / 100 for kind, share in shares.items()}
    counts = {kind: math.floor(value) for kind, value in exact.items()}
    left = size - sum(counts.values())
    # Ties go to real items first, then in the order of the mix.
    order = sorted(
        exact, key=lambda kind: (-(exact[kind] - counts[kind]), list(shares).index(kind))
    )
    for kind in order[:left]:
        counts[kind] += 1
    return counts


S = TypeVar("S", Screen, Window)


@dataclass
class PlannedItem(Generic[S]):
    kind: str
    screen: S
    original: int | None = None  # index (in the task's final order) of the real item copied
    # On a document screen: the index of the screen's first item (None: a screen of its own).
    screen_start: int | None = None


@dataclass
class PlannedTask(Generic[S]):
    items: list[PlannedItem[S]] = field(default_factory=list)


def plan_tasks(
    screens: Sequence[S],
    *,
    items_per_task: int,
    mix: QcMix,
    rng: np.random.Generator,
    with_reference_items: bool = True,
) -> list[PlannedTask[S]]:
    """Split shuffled real screens into tasks and add QC copies about half a task away.

    Each task holds ``items_per_task`` items (the last may be smaller) in the proportions of
    ``mix``; without references, reference items become real ones.
    """
    if items_per_task < 1:
        raise ValueError("items_per_task must be at least 1")
    if not with_reference_items:
        mix = QcMix(mix.bad_reference, mix.repeat, 0)
    counts = qc_counts(items_per_task, mix)
    real_per_task = max(1, counts[REAL])
    order = [screens[int(i)] for i in rng.permutation(len(screens))]
    tasks = []
    for start in range(0, len(order), real_per_task):
        reals = order[start : start + real_per_task]
        if len(reals) == real_per_task:
            task_counts = counts
        else:
            # A shorter last task keeps the proportions of the mix.
            size = max(len(reals), round(len(reals) * 100 / max(mix.real, 1)))
            task_counts = qc_counts(size, mix)
            task_counts[REAL] = len(reals)
        tasks.append(_place(reals, task_counts, rng))
    return tasks


def _place(reals: list[S], counts: dict[str, int], rng: np.random.Generator) -> PlannedTask[S]:
    """Order real items and their QC copies so that each copy lands about half a task from its
    original: every real item gets a target in [0, 1), a copy the original's target + ½ (mod 1)
    with a little jitter, and items are sorted by target."""
    n_real = len(reals)
    qc_kinds = [kind for kind in (BAD_REFERENCE, REPEAT, REFERENCE) for _ in range(counts[kind])]
    qc_kinds = qc_kinds[:n_real]  # each copy needs a distinct original
    originals = [int(i) for i in rng.choice(n_real, size=len(qc_kinds), replace=False)]
    targets = (np.arange(n_real) + rng.random(n_real)) / n_real
    # (target, kind, index of the real screen it shows, True for the real item itself)
    entries = [(float(targets[i]), REAL, i) for i in range(n_real)]
    for kind, original in zip(qc_kinds, originals, strict=True):
        jitter = (rng.random() - 0.5) * 0.1
        entries.append(((float(targets[original]) + 0.5 + jitter) % 1.0, kind, original))
    entries.sort(key=lambda e: e[0])
    position_of_real = {real: pos for pos, (_, kind, real) in enumerate(entries) if kind == REAL}
    return PlannedTask(
        [
            PlannedItem(kind, reals[real], None if kind == REAL else position_of_real[real])
            for _, kind, real in entries
        ]
    )


def spread_documents(
    plans: Sequence[PlannedTask[Window]], document_of: Sequence[int]
) -> list[PlannedTask[Window]]:
    """The tasks' document screens reordered so that no two screens in a row show the same
    document (``document_of``: each segment's document), across the end of one task and the
    start of the next too (an annotator often takes them in turn): two systems' translations of
    one talk, or a talk and its QC copy, are never read back to back. Each screen keeps its
    place unless it would follow its own document; then the first later screen that can go
    there without making the rest impossible does (so QC copies stay about half a task from
    their originals). Where one document fills more than half a task, as few repeats as can
    be are left."""
    result: list[PlannedTask[Window]] = []
    last: int | None = None
    for plan in plans:
        documents = [document_of[p.screen.segments[0]] for p in plan.items]
        order = _spread(documents, last)
        new_place = {old: new for new, old in enumerate(order)}
        items = []
        for old in order:
            planned = plan.items[old]
            original = None if planned.original is None else new_place[planned.original]
            items.append(PlannedItem(planned.kind, planned.screen, original))
        result.append(PlannedTask(items))
        if order:
            last = documents[order[-1]]
    return result


def _spread(documents: Sequence[int], before: int | None) -> list[int]:
    """An order of ``documents`` (indexes) with no document twice in a row and the first not
    ``before``, as close to the given order as can be (see :func:`spread_documents`)."""
    left = list(range(len(documents)))
    counts: dict[int, int] = {}
    for d in documents:
        counts[d] = counts.get(d, 0) + 1
    order: list[int] = []
    previous = before
    while left:
        pick = next(
            (i for i in left if documents[i] != previous and _feasible(counts, documents[i])),
            None,
        )
        if pick is None:
            # No order avoids a repeat: the first screen of another document, else the first.
            pick = next((i for i in left if documents[i] != previous), left[0])
        left.remove(pick)
        counts[documents[pick]] -= 1
        order.append(pick)
        previous = documents[pick]
    return order


def _feasible(counts: dict[int, int], taken: int) -> bool:
    """Whether the screens left after taking one of document ``taken`` (``counts`` before it)
    can still follow it with no document twice in a row: no document holds more than half of
    them, rounded up, and one that holds exactly that many of an odd number must come first,
    so must not be ``taken``."""
    rest = {d: n - (d == taken) for d, n in counts.items()}
    n = sum(rest.values())
    if not n:
        return True
    most = max(rest.values())
    if most > (n + 1) // 2:
        return False
    return not (n % 2 and most == (n + 1) // 2 and rest[taken] == most)


def expand_windows(plans: Sequence[PlannedTask[Window]]) -> list[PlannedTask[Screen]]:
    """Tasks of document screens as tasks of items: each window becomes one item per segment,
    consecutive and in document order, that know their screen's first item; a QC copy of a
    window copies it segment by segment (its i-th item points to the original's i-th)."""
    expanded = []
    for plan in plans:
        starts = []
        start = 0
        for planned in plan.items:
            starts.append(start)
            start += len(planned.screen.segments)
        items: list[PlannedItem[Screen]] = []
        for planned, first in zip(plan.items, starts, strict=True):
            window = planned.screen
            for offset, segment in enumerate(window.segments):
                items.append(
                    PlannedItem(
                        planned.kind,
                        Screen(segment, (window.system,), turn=window.segments[0]),
                        None if planned.original is None else starts[planned.original] + offset,
                        screen_start=first,
                    )
                )
        expanded.append(PlannedTask(items))
    return expanded
