"""The meta-evaluation page of a campaign: organizers upload score files and see the table (or
download it as CSV). Computed on each request from the files; nothing is stored."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.permissions import campaign_for_organizer, organizer_required
from annotation.reports.text import download_disposition
from evalsite.csp import csp_additions
from metrics.metaeval.forms import MetaEvaluationForm
from metrics.metaeval.presenters import (
    meta_evaluation_csv,
    meta_evaluation_plot,
    meta_evaluation_rows,
    meta_evaluation_test_rows,
)
from metrics.metaeval.sources import campaign_human_sources


@organizer_required
@require_http_methods(["GET", "HEAD", "POST"])
@csp_additions("EVALSITE_CSP_DASHBOARD")  # the style attributes plotly sets, as on the dashboard
def campaign_meta_evaluation(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """The upload form; after a valid upload, the table, the tests between metrics and one
    scatter plot per metric, or the CSV when the "Download CSV" button sent the form."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = MetaEvaluationForm(
        request.POST if request.method == "POST" else None,
        request.FILES if request.method == "POST" else None,
        sources=campaign_human_sources(campaign=campaign),
    )
    context: dict[str, object] = {"campaign": campaign, "form": form}
    if request.method == "POST" and form.is_valid():
        result = form.evaluation()
        if request.POST.get("download") == "csv":
            response = HttpResponse(meta_evaluation_csv(result), content_type="text/csv")
            response["Content-Disposition"] = download_disposition(
                campaign.name, "meta-evaluation", "csv"
            )
            return response
        context |= {
            "result": result,
            "rows": meta_evaluation_rows(result),
            "tests": meta_evaluation_test_rows(result),
            "plot": meta_evaluation_plot(result),
        }
    # A refused upload answers 400 with its problems, as every form of the app does.
    refused = request.method == "POST" and "result" not in context
    return render(request, "metrics/meta_evaluation.html", context, status=400 if refused else 200)
