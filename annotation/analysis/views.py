"""Organizer pages of the human-judgment analysis: the analysis page, include/exclude
decisions, the judgment import and the report downloads. Owner and co-organizers only."""

from __future__ import annotations

import uuid

from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.analysis.documents import campaign_document_scores
from annotation.analysis.explore import analysis_explore_state
from annotation.analysis.forms import DecisionForm, JudgmentImportForm
from annotation.analysis.query import settings_from
from annotation.analysis.services import (
    annotator_decision_clear,
    annotator_decision_record,
    annotator_pseudonyms_ensure,
    campaign_analysis_settings_save,
)
from annotation.analysis.shown import campaign_analysis_shown
from annotation.analysis.spans import campaign_span_summaries
from annotation.campaigns.uploads import UploadError, UploadProblem, upload_file_read
from annotation.judgment_import.background import (
    judgment_import_request,
    judgment_import_state,
    judgment_imports_abandon_stale,
)
from annotation.judgment_import.formats import judgment_file_refuse_empty
from annotation.judgment_import.services import judgments_preview
from annotation.models import JudgmentImport, JudgmentImportJob, System
from annotation.permissions import campaign_for_organizer, organizer_required, signed_in

# The imports listed on the import page, newest first.
RECENT_IMPORTS = 10


@organizer_required
@require_safe
def campaign_analysis(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Annotator QC with include/exclude, system rankings with intervals and clusters,
    agreement with counts, and the report downloads."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form, settings, _real = settings_from(request, campaign)
    annotator_pseudonyms_ensure(campaign=campaign)
    shown = campaign_analysis_shown(campaign=campaign, settings=settings)
    query = request.GET.urlencode()
    spans = campaign_span_summaries(campaign=campaign, settings=settings)
    return render(
        request,
        "annotation/analysis.html",
        {
            "campaign": campaign,
            "form": form,
            "analysis": shown.analysis,
            "shown": shown,
            "query": query,
            "exploring": not shown.campaign_setting,
            "span_summaries": spans,
            "span_kinds": {s.protocol for s in spans},
            "document_scores": campaign_document_scores(campaign=campaign, settings=settings),
            # Human translations rated as systems, marked in the system tables.
            "human_systems": set(
                System.objects.filter(campaign=campaign, human=True).values_list("pk", flat=True)
            ),
            "imports": JudgmentImport.objects.filter(campaign=campaign).select_related(
                "config", "imported_by"
            ),
        },
    )


@organizer_required
@require_safe
def campaign_analysis_explore(request: HttpRequest, campaign_id: uuid.UUID) -> JsonResponse:
    """Where the background analysis of the query's settings stands (the page polls it)."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    _form, settings, _real = settings_from(request, campaign)
    state = analysis_explore_state(campaign=campaign, settings=settings)
    return JsonResponse(state.as_json())


@organizer_required
@require_POST
def campaign_analysis_settings_save_view(
    request: HttpRequest, campaign_id: uuid.UUID
) -> HttpResponse:
    """Make the settings the page was showing (its query string) the campaign's setting."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form, settings, _real = settings_from(request, campaign)
    if form.errors:
        messages.error(request, _("These settings are not valid; nothing was changed."))
        return redirect(
            reverse("campaign_analysis", args=[campaign.pk]) + "?" + request.GET.urlencode()
        )
    if campaign_analysis_settings_save(campaign=campaign, settings=settings):
        messages.success(
            request,
            _(
                "These are now the campaign's analysis setting. The dashboard, the reports and "
                "the API use them; the campaign's results are being recomputed."
            ),
        )
    else:
        messages.info(request, _("These were the campaign's analysis setting already."))
    return redirect("campaign_analysis", campaign_id=campaign.pk)


@organizer_required
@require_POST
def campaign_analysis_decision(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Record an include/exclude decision with its reason, or clear one."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    judged = set(annotator_pseudonyms_ensure(campaign=campaign))
    form = DecisionForm(request.POST, annotator_ids=judged)
    # The form posts to a URL that carries the page's settings; go back to the same view.
    target = reverse("campaign_analysis", args=[campaign.pk])
    if request.GET:
        target += "?" + request.GET.urlencode()
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect(target)
    annotator = get_user_model().objects.get(pk=form.cleaned_data["annotator"])
    action = form.cleaned_data["action"]
    if action == "clear":
        annotator_decision_clear(campaign=campaign, annotator=annotator)
        messages.success(request, _("Decision cleared: the QC verdict applies again."))
    else:
        annotator_decision_record(
            campaign=campaign,
            annotator=annotator,
            included=action == "include",
            reason=form.cleaned_data["reason"],
            decided_by=signed_in(request),
        )
        messages.success(
            request,
            _("Annotator included.") if action == "include" else _("Annotator excluded."),
        )
    return redirect(target)


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_judgment_import(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Upload historical judgments (EvalSite, Appraise, WMT or MQM layout) onto the campaign:
    a preview is answered at once; an import is queued for a worker and followed on its own
    page."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = JudgmentImportForm(request.POST or None, request.FILES or None)
    problems: list[UploadProblem] = []
    preview = None
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            upload = upload_file_read(
                form.cleaned_data["file"], max_bytes=django_settings.EVALSITE_UPLOAD_MAX_BYTES
            )
            judgment_file_refuse_empty(upload)
            if "preview" not in request.POST:
                job = judgment_import_request(
                    campaign=campaign,
                    upload=upload,
                    options=form.options(),
                    user=signed_in(request),
                )
                return redirect(
                    "campaign_judgment_import_job", campaign_id=campaign.pk, job_id=job.pk
                )
            # Check the file and show how its system names map, storing nothing.
            preview = judgments_preview(campaign=campaign, upload=upload, options=form.options())
        except UploadError as exc:
            problems = exc.problems
            status = 400
    elif request.method == "POST":
        status = 400
    judgment_imports_abandon_stale(campaign=campaign)
    return render(
        request,
        "annotation/analysis_import.html",
        {
            "campaign": campaign,
            "form": form,
            "problems": problems,
            "preview": preview,
            "jobs": [
                (job, judgment_import_state(job))
                for job in JudgmentImportJob.objects.filter(campaign=campaign)
                .select_related("result__config")
                .defer("content")[:RECENT_IMPORTS]
            ],
        },
        status=status,
    )


@organizer_required
@require_safe
def campaign_judgment_import_job(
    request: HttpRequest, campaign_id: uuid.UUID, job_id: uuid.UUID
) -> HttpResponse:
    """One import sent to the workers: queued, its step while it runs, what it stored, or the
    problems of a refused file."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    judgment_imports_abandon_stale(campaign=campaign)
    job = get_object_or_404(
        JudgmentImportJob.objects.select_related("result__config").defer("content"),
        campaign=campaign,
        pk=job_id,
    )
    return render(
        request,
        "annotation/analysis_import_job.html",
        {"campaign": campaign, "job": judgment_import_state(job)},
    )
