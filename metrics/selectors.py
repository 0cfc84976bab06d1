"""Selectors of the metrics app: what the campaign dashboard shows.

The dashboard reads **stored results only**: the latest :class:`~metrics.models.AnalysisResult`
of each kind (``metrics``, ``human``, ``correlations``, written by
:func:`metrics.pipeline.finalize`; the ``human`` one read through
:meth:`annotation.analysis.results.HumanDocument.from_json`) and the latest
:class:`~metrics.models.AnalysisJob`. Nothing
here computes a statistic; the functions below pick, order and shape the stored numbers for the
template and the plots. Beside them come a few cheap live aggregates (judgments per protocol and
annotator, time spent, what remains) and the "stale" flag, each a fixed number of aggregate
queries, so the page costs the same number of queries whatever the size of the campaign.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotation.analysis.results import HumanDocument
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.span_rule import span_annotators_left_out_of
from annotation.models import Campaign
from metrics.documents import CorrelationParams, CorrelationsDocument, MetricsDocument
from metrics.models import AnalysisResult
from metrics.presenters.correlations import CorrelationCriterion, correlation_panel, scatter_plots
from metrics.presenters.human import HumanCriterion, histogram_plots, human_panel
from metrics.presenters.metrics import (
    MetricsPanel,
    metrics_panel,
    significance_heatmaps,
)
from metrics.queries import (
    AnalysisState,
    Progress,
    analysis_state,
    campaign_progress,
    result_data,
    status_json,
)

# --------------------------------------------------------------------------------------------
# Live progress


# --------------------------------------------------------------------------------------------
# Jobs, stored results and staleness


# --------------------------------------------------------------------------------------------
# Panels: the stored documents shaped for the template and the plots


@dataclass(frozen=True)
class Dashboard:
    """Everything the dashboard page shows."""

    state: AnalysisState
    progress: Progress
    metrics: MetricsPanel | None
    human: list[HumanCriterion]
    correlations: list[CorrelationCriterion]
    human_version: str
    # The analysis setting the stored human analysis was computed with (the campaign's).
    human_settings: AnalysisSettings | None
    correlation_params: CorrelationParams | None
    plots: dict[str, Any] = field(default_factory=dict)
    # Human translations rated as systems, left out of the correlations (their names).
    human_systems_left_out: list[str] = field(default_factory=list)
    # Per span config, the annotators the stored human analysis leaves out (their spans do
    # not count: annotation.analysis.span_rule); None without a stored human analysis.
    span_left_out: dict[int, frozenset[int]] | None = None

    @property
    def has_results(self) -> bool:
        return bool(self.state.results)

    @property
    def status_json(self) -> dict[str, Any]:
        """The same document as :func:`dashboard_status`, for the page's first paint."""
        return status_json(self.state, self.progress)


def dashboard_data(*, campaign: Campaign) -> Dashboard:
    """The campaign dashboard: the latest job, the panels built from the latest stored result
    of each kind, live annotation progress and the stale flag.

    A fixed number of queries whatever the campaign's size: the latest job, one per result
    kind, the fingerprint's aggregates (:func:`campaign_fingerprint_current`) and the progress
    aggregates (:func:`campaign_progress`).
    """
    state = analysis_state(campaign=campaign)
    metrics_data = result_data(state, AnalysisResult.Kind.METRICS)
    metrics_doc = MetricsDocument.from_json(metrics_data) if metrics_data else None
    human_data = result_data(state, AnalysisResult.Kind.HUMAN)
    human_doc = HumanDocument.from_json(human_data) if human_data else None
    correlations_data = result_data(state, AnalysisResult.Kind.CORRELATIONS)
    correlations_doc = (
        CorrelationsDocument.from_json(correlations_data) if correlations_data else None
    )
    # Config id → protocol kind, to name the correlations' criteria in the page's language.
    protocols = {c.config_id: c.protocol for c in human_doc.analysis.criteria} if human_doc else {}
    return Dashboard(
        state=state,
        progress=campaign_progress(campaign=campaign),
        metrics=metrics_panel(metrics_doc) if metrics_doc else None,
        human=human_panel(human_doc) if human_doc else [],
        correlations=correlation_panel(correlations_doc, protocols) if correlations_doc else [],
        human_version=human_doc.analysis.version if human_doc else "",
        human_settings=human_doc.analysis.settings if human_doc else None,
        correlation_params=correlations_doc.params if correlations_doc else None,
        human_systems_left_out=[s.name for s in correlations_doc.human_systems_left_out]
        if correlations_doc
        else [],
        span_left_out=span_annotators_left_out_of(human_doc.analysis) if human_doc else None,
        plots={
            "heatmaps": significance_heatmaps(metrics_doc) if metrics_doc else [],
            "histograms": histogram_plots(human_doc) if human_doc else [],
            "scatter": scatter_plots(correlations_doc, protocols) if correlations_doc else [],
        },
    )
