"""The campaign dashboard: organizers of the campaign (owner and co-organizers) only.

The page reads stored results (``metrics.selectors.dashboard_data``); a small JSON endpoint
answers its polls for live progress; "recompute now" asks for a fresh analysis.
"""

from __future__ import annotations

import json
import uuid

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from annotation.analysis.documents import campaign_document_scores
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.spans import campaign_span_summaries
from annotation.permissions import campaign_for_organizer, organizer_required
from annotation.reports.text import download_disposition
from evalsite.csp import csp_additions
from metrics.models import AnalysisJob, AnalysisResult
from metrics.queries import analysis_result_document, dashboard_status, result_json
from metrics.selectors import dashboard_data
from metrics.services import analysis_request, jobs_dispatch_pending


@organizer_required
@require_safe
@csp_additions("EVALSITE_CSP_DASHBOARD")  # two style attributes plotly sets
def campaign_dashboard(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Job status, annotation progress, QC, human rankings, metrics, significance and
    metric–human correlations, from the stored results."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    dashboard = dashboard_data(campaign=campaign)
    # Document-level scores are read live (one query when there are none), as the analysis
    # page reads them, with the campaign's analysis setting.
    settings = campaign_analysis_settings(campaign=campaign)
    documents = campaign_document_scores(campaign=campaign, settings=settings)
    # So are the error spans (five queries, whatever the campaign), counted by the rule of the
    # analysis page with the stored analysis' QC verdicts, which the page's QC table shows.
    spans = campaign_span_summaries(campaign=campaign, left_out=dashboard.span_left_out or {})
    if dashboard.span_left_out is None:
        spans = []  # no stored human analysis: nobody's QC verdict is known yet
    return render(
        request,
        "metrics/dashboard.html",
        {
            "campaign": campaign,
            "dashboard": dashboard,
            "result_kinds": AnalysisResult.Kind,
            "document_scores": documents,
            "span_summaries": spans,
            "span_kinds": {s.protocol for s in spans},
        },
    )


@organizer_required
@require_safe
def campaign_dashboard_status(request: HttpRequest, campaign_id: uuid.UUID) -> JsonResponse:
    """The latest job's progress, the stale flag and annotation progress, for the page's polls.

    Each poll also sends the analyses that were recorded while the broker was down, so they
    start as soon as it is back.
    """
    campaign = campaign_for_organizer(request.user, campaign_id)
    jobs_dispatch_pending()
    return JsonResponse(dashboard_status(campaign=campaign))


@organizer_required
@require_POST
def campaign_dashboard_recompute(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Recompute now, and say what happened: queued, an identical job reused, or saved until
    the queue is reachable again."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    outcome = analysis_request(campaign=campaign, user=request.user, force=True)
    if not outcome.queued:
        messages.warning(
            request,
            _(
                "The task queue cannot be reached right now. Your request is saved and will "
                "start when the queue is back."
            ),
        )
    elif outcome.reused and outcome.job.status == AnalysisJob.Status.RUNNING:
        messages.info(
            request,
            _("An analysis of exactly this data is already running; no second one was started."),
        )
    elif outcome.reused:
        messages.info(
            request,
            _("An analysis of exactly this data is already queued; no second one was started."),
        )
    else:
        messages.success(
            request,
            _("Recomputation queued. The numbers below update when it has finished."),
        )
    return redirect("campaign_dashboard", campaign_id=campaign.pk)


@organizer_required
@require_safe
def campaign_dashboard_result(
    request: HttpRequest, campaign_id: uuid.UUID, kind: str
) -> HttpResponse:
    """The newest stored result document of one kind (metrics, human, correlations) as JSON,
    with the parameters, seed and version that produced it."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    if kind not in AnalysisResult.Kind.values:
        raise Http404(_("Unknown result."))
    result = analysis_result_document(campaign=campaign, kind=kind)
    if result is None:
        raise Http404(_("No stored result yet."))
    # Annotators by pseudonym, as in every report; usernames with ?names=real.
    data = result_json(
        campaign=campaign, result=result, real_names=request.GET.get("names") == "real"
    )
    body = {
        "kind": result.kind,
        "campaign": str(campaign.pk),
        "job": str(result.job_id),
        "fingerprint": result.fingerprint,
        "created": result.created.isoformat(),
        "data": data,
    }
    response = HttpResponse(
        json.dumps(body, indent=1, ensure_ascii=False), content_type="application/json"
    )
    response["Content-Disposition"] = download_disposition(campaign.name, kind, "json")
    return response
