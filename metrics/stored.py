"""The stored human analysis as the analysis pages read it (``annotation.analysis.stored``):
the newest ``human`` result of the background analysis, with its freshness. Registered as the
reader when Django starts (``MetricsConfig.ready``)."""

from __future__ import annotations

from annotation.analysis.results import HumanDocument
from annotation.analysis.stored import StoredAnalysis
from annotation.models import Campaign
from metrics.models import AnalysisJob, AnalysisResult
from metrics.queries import analysis_job_latest, campaign_fingerprint_current


def human_analysis_stored(campaign: Campaign) -> StoredAnalysis | None:
    """The newest stored human analysis of ``campaign``, fresh when its fingerprint is the
    campaign's now (same judgments, decisions, uploads and settings); without a stored one,
    whether a job is computing it. A few aggregate queries and the document's."""
    result = (
        AnalysisResult.objects.filter(campaign=campaign, kind=AnalysisResult.Kind.HUMAN)
        .order_by("-created")
        .first()
    )
    fingerprint = campaign_fingerprint_current(campaign=campaign)
    job = analysis_job_latest(campaign=campaign)
    recomputing = (
        job is not None
        and job.status in (AnalysisJob.Status.QUEUED, AnalysisJob.Status.RUNNING)
        and job.fingerprint == fingerprint
    )
    if result is None:
        if not recomputing:
            return None
        return StoredAnalysis(
            analysis=None, computed=None, fresh=False, recomputing=True, job_id=""
        )
    return StoredAnalysis(
        analysis=HumanDocument.from_json(result.data).analysis,
        computed=result.created,
        fresh=result.fingerprint == fingerprint,
        recomputing=recomputing,
        job_id=str(result.job_id),
    )
