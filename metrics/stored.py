"""The stored human analysis as the analysis pages read it (``annotation.analysis.stored``):
the newest ``human`` result of the background analysis, with its freshness. Registered as the
reader when Django starts (``MetricsConfig.ready``)."""

from __future__ import annotations

from annotation.analysis.results import HumanDocument
from annotation.analysis.stored import StoredAnalysis
from annotation.models import Campaign
from metrics.models import AnalysisResult
from metrics.queries import analysis_state


def human_analysis_stored(campaign: Campaign) -> StoredAnalysis | None:
    """The newest stored human analysis of ``campaign``, fresh when its fingerprint is the
    campaign's now (same judgments, decisions, uploads and settings); without a stored one,
    whether a job is computing it. The dashboard's state (:func:`analysis_state`: the latest
    job, the results without their documents, the fingerprint) and the human document."""
    state = analysis_state(campaign=campaign, with_data=False)
    result = state.results.get(AnalysisResult.Kind.HUMAN)
    if result is None:
        if not state.recomputing:
            return None
        return StoredAnalysis(
            analysis=None, computed=None, fresh=False, recomputing=True, job_id=""
        )
    data = AnalysisResult.objects.values_list("data", flat=True).get(pk=result.pk)
    return StoredAnalysis(
        analysis=HumanDocument.from_json(data).analysis,
        computed=result.created,
        fresh=result.fingerprint == state.fingerprint,
        recomputing=state.recomputing,
        job_id=str(result.job_id),
    )
