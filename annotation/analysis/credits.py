"""Merged identical outputs in the analysis: one answer about a shown output credited to every
system that produced its text (:class:`~annotation.models.ItemOutputCredit`).

The judgments table is where answers become per-system rows, so the credits are expanded there:
each REAL row of a merged output gets one more row per credited system, a copy that differs
only in its system and points to its answer's row (``Judgments.credit_of``). Every per-system
statistic (segment and system scores, significance, clusters, Expected Wins, TrueSkill,
metric correlations) then sees every credited system; per-annotator and per-answer
statistics (normalisation, QC, agreement, time) count the answer once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from annotation.models import ItemOutputCredit, ProtocolConfig

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CreditedRows:
    """Rows to add to a table: ``source[i]`` is the row copied, ``system[i]`` and ``run[i]``
    the database ids of the system run it credits."""

    source: IntArray
    system: IntArray
    run: IntArray

    def __len__(self) -> int:
        return int(self.source.shape[0])

    def grow(self, column: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """``column`` with the copied rows' values appended."""
        return np.r_[column, column[self.source]] if len(self) else column


def config_credits(*, config: ProtocolConfig) -> tuple[IntArray, IntArray, IntArray]:
    """Output, system and run ids of every credit of the config's shown outputs (one
    query)."""
    rows = np.array(
        ItemOutputCredit.objects.filter(output__item__task__config=config).values_list(
            "output_id", "system_id", "run_id"
        ),
        dtype=np.int64,
    ).reshape(-1, 3)
    return rows[:, 0], rows[:, 1], rows[:, 2]


def credited_rows(
    *,
    output: IntArray,
    real: npt.NDArray[np.bool_],
    credits: tuple[IntArray, IntArray, IntArray],
) -> CreditedRows:
    """The rows that credit other systems: for every credit (output, system) and every REAL
    row (``real``) of that output, one row. Vectorised: the rows are sorted by output and each
    credit takes the run of rows of its output."""
    credit_output, credit_system, credit_run = credits
    candidates = np.flatnonzero(real)
    if not candidates.size or not credit_output.size:
        empty = np.zeros(0, dtype=np.int64)
        return CreditedRows(empty, empty, empty)
    order = candidates[np.argsort(output[candidates], kind="stable")]
    sorted_output = output[order]
    left = np.searchsorted(sorted_output, credit_output, side="left")
    right = np.searchsorted(sorted_output, credit_output, side="right")
    count = right - left
    which = np.repeat(np.arange(credit_output.shape[0]), count)
    offset = np.arange(which.shape[0]) - np.repeat(np.cumsum(count) - count, count)
    source = order[left[which] + offset]
    # In row order, then by system: the table's stable order.
    system = credit_system[which]
    final = np.lexsort((system, source))
    return CreditedRows(
        source[final].astype(np.int64),
        system[final].astype(np.int64),
        credit_run[which][final].astype(np.int64),
    )
