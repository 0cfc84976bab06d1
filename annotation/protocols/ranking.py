"""Ranking: the shown translations ranked from best (1) to worst, ties allowed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import BILINGUAL, MONOLINGUAL, RANK, Criterion, Protocol

RANKING = "ranking"


@dataclass(frozen=True)
class RankingProtocol(Protocol):
    """Ranks 1..k of the k outputs of a screen: the one criterion's scale is the screen's."""

    def criteria_for(self, n_outputs: int) -> tuple[Criterion, ...]:
        return (
            Criterion(
                RANK.key,
                RANK.label,
                1,
                n_outputs,
                {1: _("Best"), n_outputs: _("Worst")},
                higher_is_better=False,
            ),
        )

    def simulated_answer(
        self,
        output_ids: Sequence[int],
        qualities: Sequence[float],
        rng: np.random.Generator,
        *,
        careless: bool,
    ) -> dict[str, dict[str, float]]:
        """The outputs ranked by perceived quality, best first (no further noise)."""
        key = self.criteria_for(len(output_ids))[0].key
        order = np.argsort(-np.array(qualities), kind="stable")
        ranks = np.empty(len(output_ids), dtype=int)
        ranks[order] = np.arange(1, len(output_ids) + 1)
        return {str(o): {key: float(r)} for o, r in zip(output_ids, ranks, strict=True)}


PROTOCOL = RankingProtocol(
    RANKING,
    _("Ranking"),
    (RANK,),
    (BILINGUAL, MONOLINGUAL),
    ranks=True,
    max_outputs=9,
    instructions=_(
        "Rank the translations from best (1) to worst. Give two translations the same rank "
        "when they are equally good."
    ),
)
