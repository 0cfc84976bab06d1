"""The campaign's own human system scores as the human side of a meta-evaluation: one source per
criterion of the latest stored human analysis (the dashboard's "Human rankings")."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.analysis.results import HumanDocument
from annotation.models import Campaign
from metrics.models import AnalysisResult


@dataclass(frozen=True)
class HumanSource:
    """One criterion's system scores: its ``score`` (the mean in the criterion's space) or, for
    rankings, Expected Wins; systems without a score are left out."""

    key: str
    label: str
    scores: dict[str, float]


def campaign_human_sources(*, campaign: Campaign) -> list[HumanSource]:
    """The criteria of the newest stored human analysis that score at least one system (one
    query)."""
    result = (
        AnalysisResult.objects.filter(campaign=campaign, kind=AnalysisResult.Kind.HUMAN)
        .order_by("-created")
        .first()
    )
    if result is None:
        return []
    sources = []
    for criterion in HumanDocument.read(result.data).analysis.criteria:
        scores = {}
        for system in criterion.ranked_systems:
            value = system.score if system.score is not None else system.expected_wins
            if value is not None:
                scores[system.name] = float(value)
        if scores:
            sources.append(
                HumanSource(
                    key=f"{criterion.config_id}:{criterion.criterion}",
                    label=f"{criterion.config_name} — {criterion.criterion_label}",
                    scores=scores,
                )
            )
    return sources
