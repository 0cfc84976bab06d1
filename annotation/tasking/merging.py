"""Merging identical outputs: a segment's translations that are the same text are shown once
on a screen, and the answer is credited to every system (and run) that produced them.

Pure Python and numpy (no Django), deterministic from a seed, like :mod:`.plan`.

Two translations are identical when they are the same text after Unicode NFC normalisation,
with leading and trailing whitespace stripped and every run of whitespace made one space
(:func:`normalised_text`). Per segment the systems fall into groups of identical outputs
(:func:`output_groups`); screens are then planned over the groups instead of the systems
(:func:`merged_screens`), so a screen of *k* outputs shows *k* distinct texts whenever the
segment has that many, and a group is shown by its first system with the others credited.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from annotation.tasking.plan import Screen, balanced_screens

Group = tuple[int, ...]


def normalised_text(text: str) -> str:
    """``text`` as merging compares it: NFC, stripped, each run of whitespace one space."""
    return unicodedata.normalize("NFC", " ".join(text.split()))


def output_groups(texts: Sequence[str]) -> list[Group]:
    """The indices of ``texts`` grouped by :func:`normalised_text`: each group ascending, the
    groups in the order of their first index (every index in exactly one group)."""
    groups: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        groups.setdefault(normalised_text(text), []).append(index)
    return [tuple(members) for members in groups.values()]


def merged_screens(
    groups: Sequence[Sequence[Group]],
    n_systems: int,
    k: int,
    rng: np.random.Generator,
    *,
    min_width: int = 1,
) -> list[Screen]:
    """Screens that show every group of identical outputs of every segment (``groups[s]``
    holds segment s's groups of system indices), ``min(k, groups of the segment)`` distinct
    outputs a screen. Each slot shows its group's first system and credits the others.

    A segment's groups take the order of their first systems in a per-segment rotation of a
    random order (as :func:`~annotation.tasking.plan.balanced_screens` takes systems); a short
    last screen is topped up with groups of the segment it does not show yet, those shown
    least first; slots are an assignment problem per screen, balancing the systems shown over
    the positions. A segment with fewer groups than ``min_width`` gets no screen (a ranking
    of one text compares nothing). Without any identical outputs the screens are exactly
    :func:`~annotation.tasking.plan.balanced_screens`'."""
    if all(len(group) == 1 for segment in groups for group in segment):
        return balanced_screens(len(groups), n_systems, k, rng)
    if not groups or n_systems < 1:
        return []
    base = rng.permutation(n_systems)
    place = np.empty(n_systems, dtype=np.int64)
    place[base] = np.arange(n_systems)
    shown = np.zeros(n_systems, dtype=np.int64)
    slot_counts = np.zeros((n_systems, max(k, 1)), dtype=np.int64)
    screens: list[Screen] = []
    for segment, units in enumerate(groups):
        width = min(k, len(units))
        if width < max(min_width, 1):
            continue
        # The rotation of balanced_screens: segment j starts the base order at j.
        order = sorted(range(len(units)), key=lambda u: (place[units[u][0]] - segment) % n_systems)
        chunks = [order[i : i + width] for i in range(0, len(units), width)]
        last = chunks[-1]
        while len(last) < width:
            candidates = [u for u in range(len(units)) if u not in last]
            least = [min(int(shown[m]) for m in units[u]) for u in candidates]
            pool = [u for u, n in zip(candidates, least, strict=True) if n == min(least)]
            last.append(int(rng.choice(pool)))
        for chunk in chunks:
            screens.append(_screen(segment, [units[u] for u in chunk], shown, slot_counts, rng))
    return screens


def _screen(
    segment: int,
    units: list[Group],
    shown: np.ndarray,
    slot_counts: np.ndarray,
    rng: np.random.Generator,
) -> Screen:
    """One screen of ``units`` (distinct groups), their slots chosen to balance how often each
    shown system sat in each slot; ``shown`` and ``slot_counts`` are updated."""
    width = len(units)
    for unit in units:
        shown[list(unit)] += 1
    primaries = [unit[0] for unit in units]
    cost = slot_counts[primaries][:, :width].astype(float) + rng.random((width, width)) * 1e-3
    rows, cols = linear_sum_assignment(cost)
    slots = [0] * width
    credits: list[Group] = [()] * width
    for r, c in zip(rows, cols, strict=True):
        slots[c] = primaries[r]
        credits[c] = tuple(units[r][1:])
        slot_counts[primaries[r], c] += 1
    return Screen(segment, tuple(slots), credits=tuple(credits))


def distinct_pick(
    order: Sequence[int], texts: Sequence[str], k: int, *, min_width: int = 1
) -> list[Group]:
    """One screen's slots when systems are taken one at a time (pull mode): walking ``order``
    (system indices, most wanted first), each system not yet covered brings its group of
    identical outputs (``texts[i]`` is system i's text), itself first and shown, the others
    credited, until ``k`` groups are taken. When fewer than ``min_width`` distinct texts
    exist (a ranking of one text compares nothing), the first ``k`` systems of ``order``
    unmerged."""
    group_of = {member: group for group in output_groups(texts) for member in group}
    picked: list[Group] = []
    covered: set[int] = set()
    for index in order:
        if len(picked) == k:
            break
        if index in covered:
            continue
        members = group_of[index]
        covered.update(members)
        picked.append((index, *(m for m in members if m != index)))
    if len(picked) < min(max(min_width, 1), k):
        return [(int(index),) for index in list(order)[:k]]
    return picked
