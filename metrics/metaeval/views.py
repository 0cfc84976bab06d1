"""The meta-evaluation page of a campaign: organizers upload score files and see the table (or
download it as CSV). Computed on each request from the files; nothing is stored."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.permissions import campaign_for_organizer, organizer_required
from evalsite.csp import csp_additions
from metrics.metaeval.forms import MetaEvaluationForm
from metrics.metaeval.presenters import (
    CLUSTER_TEST_LABELS,
    CSV_DOWNLOADS,
    meta_evaluation_download,
    meta_evaluation_plot,
    meta_evaluation_rows,
    meta_evaluation_segment_rows,
    meta_evaluation_test_rows,
)
from metrics.metaeval.sources import campaign_human_sources


@organizer_required
@require_http_methods(["GET", "HEAD", "POST"])
@csp_additions("EVALSITE_CSP_DASHBOARD")  # the style attributes plotly sets, as on the dashboard
def campaign_meta_evaluation(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """The upload form; after a valid upload, the system-level table, the tests between
    metrics and one scatter plot per metric, and the segment-level table; or a CSV when a
    download button sent the form."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = MetaEvaluationForm(
        request.POST if request.method == "POST" else None,
        request.FILES if request.method == "POST" else None,
        sources=campaign_human_sources(campaign=campaign),
    )
    context: dict[str, object] = {"campaign": campaign, "form": form}
    if request.method == "POST" and form.is_valid():
        result = form.evaluation()
        download = request.POST.get("download")
        if download in CSV_DOWNLOADS:
            return meta_evaluation_download(result, campaign_name=campaign.name, which=download)
        context |= {
            "result": result,
            "rows": meta_evaluation_rows(result),
            "segment_rows": meta_evaluation_segment_rows(result),
            "cluster_test": CLUSTER_TEST_LABELS.get(form.cleaned_data["cluster_test"]),
            "tests": meta_evaluation_test_rows(result),
            "segment_tests": meta_evaluation_test_rows(result, level="segment"),
            "plot": meta_evaluation_plot(result),
        }
    # A refused upload answers 400 with its problems, as every form of the app does.
    refused = request.method == "POST" and "result" not in context
    return render(request, "metrics/meta_evaluation.html", context, status=400 if refused else 200)
