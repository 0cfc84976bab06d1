"""Merged identical outputs in the judgment report: one row per credited system.

An answer about a merged output (shown once for several systems that produced the same text)
is reported on the row of the system shown and on one more row per credited system, right
after it, with that system's name and run; every row of a merged output carries the shown
output's id in the ``merged`` column (empty for other rows), so a reader can tell the
answers given from the credits and count each answer once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotation.models import Campaign, ItemKind, ItemOutputCredit

# (system name, run name) of every credit, by shown output id.
Credits = dict[int, list[tuple[str, str]]]


def campaign_credits(*, campaign: Campaign) -> Credits:
    """The credited system runs of the campaign's merged outputs (one query)."""
    credits: Credits = {}
    for output, system, run in (
        ItemOutputCredit.objects.filter(output__item__task__config__campaign=campaign)
        .order_by("output_id", "system__name", "run__name")
        .values_list("output_id", "system__name", "run__name")
    ):
        credits.setdefault(output, []).append((system, run))
    return credits


@dataclass(frozen=True)
class Expansion:
    """A chunk's rows with the credited rows added: ``index[j]`` is the query row that row j
    repeats, ``credit[j]`` the (system, run) it credits (None: the row itself), ``merged[j]``
    the shown output's id on the rows of a merged output (None elsewhere)."""

    index: list[int]
    credit: list[tuple[str, str] | None]
    merged: list[int | None]

    def take(self, column: Sequence[Any]) -> list[Any]:
        return [column[i] for i in self.index]


def chunk_expansion(outputs: Sequence[int], real: Sequence[bool], credits: Credits) -> Expansion:
    """Where a chunk of report rows (their shown output ids, whether each is a real item's
    row) grows: after each real row of a merged output, one row per credit."""
    index: list[int] = []
    credit: list[tuple[str, str] | None] = []
    merged: list[int | None] = []
    for i, (output, is_real) in enumerate(zip(outputs, real, strict=True)):
        extra = credits.get(output) if is_real else None
        index.append(i)
        credit.append(None)
        merged.append(output if extra else None)
        for pair in extra or ():
            index.append(i)
            credit.append(pair)
            merged.append(output)
    return Expansion(index, credit, merged)


def is_real_kind(kind: str) -> bool:
    return kind == ItemKind.REAL
