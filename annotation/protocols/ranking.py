"""Ranking: the shown translations ranked from best (1) to worst, ties allowed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import (
    BILINGUAL,
    MONOLINGUAL,
    PAIRWISE,
    RANK,
    Criterion,
    Protocol,
)

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

    def histogram_criteria(self) -> tuple[Criterion, ...]:
        """None: a rank depends on the screen's size, so its histogram says little."""
        return ()

    def degraded_positions(self, n_outputs: int, rng: np.random.Generator) -> list[int]:
        """One output: ranked outputs are judged against each other, so the degraded one is
        shown among repeats of the others and can be ranked below them."""
        if n_outputs <= 1:
            return list(range(n_outputs))
        return [int(rng.integers(n_outputs))]

    def import_criteria(self) -> tuple[Criterion, ...]:
        return (RANK,)

    def import_value_problem(
        self, criterion: Criterion, value: float, *, scale_hint: str = ""
    ) -> str | None:
        """A rank is a whole number from 1; its upper end is its screen's size."""
        if value < 1 or value != int(value):
            return f"rank {value:g} is not a whole number from 1"
        return None

    def standardised_import_problem(self) -> str | None:
        return "ranks are not scores, so they cannot be standardised scores"

    def screen_value_problem(self, criterion: str, value: float, n_outputs: int) -> str | None:
        if value > n_outputs:
            return f"rank {value:g}"
        return None

    def simulated_answer(
        self,
        output_ids: Sequence[int],
        qualities: Sequence[float],
        rng: np.random.Generator,
        *,
        careless: bool,
        texts: Sequence[str] = (),
        noticed: Sequence[tuple[int, int] | None] = (),
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
    analysis=PAIRWISE,
    min_outputs=2,
    imports_need_screens=True,
    max_outputs=9,
    digit_hint=_("set the rank of the focused translation"),
    instructions=_(
        "Rank the translations from best (1) to worst. Give two translations the same rank "
        "when they are equally good."
    ),
)
