"""What the organizer sees of a pull-mode config's allocation: pairs decided, judgments stored
and allocated against the budget, and whether the stopping rule holds (the setup page and
``GET /api/campaigns/{id}/protocols/{config}/allocation/``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import AllocationState, Campaign, ProtocolConfig


@dataclass(frozen=True)
class PairState:
    high: str
    low: str
    p: float
    decided: bool


@dataclass(frozen=True)
class AllocationSummary:
    config: ProtocolConfig
    # None until the tasks are built.
    state: AllocationState | None
    pairs: list[PairState]

    @property
    def decided(self) -> int:
        return sum(1 for pair in self.pairs if pair.decided)

    @property
    def stopped(self) -> str:
        return self.state.stopped if self.state is not None else ""

    @property
    def stopped_label(self) -> str:
        return str(AllocationState.Stop(self.stopped).label)

    def to_json(self) -> dict[str, Any]:
        state = self.state
        return {
            "allocation": self.config.allocation,
            "budget": self.config.allocation_budget or None,
            "level": self.config.allocation_level,
            "top_k": self.config.allocation_top_k
            if self.config.allocation == ProtocolConfig.Allocation.TOP_K
            else None,
            "built": state is not None,
            "judgments": state.judgments if state else 0,
            "allocated": state.allocated if state else 0,
            "pairs": [
                {"high": p.high, "low": p.low, "p": p.p, "decided": p.decided} for p in self.pairs
            ],
            "pairs_decided": self.decided,
            "stopped": self.stopped or None,
            "computed": state.computed.isoformat() if state else None,
        }


def allocation_summaries(*, campaign: Campaign) -> dict[int, AllocationSummary]:
    """The allocation of every pull-mode config of the campaign, by config id (two queries)."""
    configs = list(
        ProtocolConfig.objects.filter(campaign=campaign).exclude(
            allocation=ProtocolConfig.Allocation.PREBUILT
        )
    )
    states = {s.config_id: s for s in AllocationState.objects.filter(config__in=configs)}
    names = dict(campaign.systems.values_list("pk", "name"))  # type: ignore[attr-defined]
    return {
        config.pk: allocation_summary(config, states.get(config.pk), names) for config in configs
    }


def allocation_summary(
    config: ProtocolConfig, state: AllocationState | None, names: dict[int, str]
) -> AllocationSummary:
    pairs = [
        PairState(
            high=names.get(p["high"], "?"),
            low=names.get(p["low"], "?"),
            p=p["p"],
            decided=p["decided"],
        )
        for p in (state.pairs if state else [])
    ]
    return AllocationSummary(config=config, state=state, pairs=pairs)
