"""Organizer pages of the human-judgment analysis: the analysis page, include/exclude
decisions, the judgment import and the report downloads. Owner and co-organizers only."""

from __future__ import annotations

import uuid

from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.analysis.forms import AnalysisSettingsForm, DecisionForm, JudgmentImportForm
from annotation.analysis.results import CampaignAnalysis
from annotation.analysis.selectors import campaign_analysis_cached
from annotation.analysis.services import (
    annotator_decision_clear,
    annotator_decision_record,
    annotator_pseudonyms_ensure,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.uploads import UploadError, UploadProblem, upload_file_read
from annotation.campaigns.views import organizer_required
from annotation.judgment_import.services import judgments_import
from annotation.models import Campaign, JudgmentImport
from annotation.permissions import campaign_for_organizer


def settings_from(request: HttpRequest) -> tuple[AnalysisSettingsForm, AnalysisSettings, bool]:
    """The settings of the query string; an invalid field falls back to the defaults (the form
    shows its error)."""
    form = AnalysisSettingsForm(request.GET or None)
    if form.is_bound and form.is_valid():
        return form, form.settings(), form.real_names
    return form, AnalysisSettings(), False


def analysis_for(campaign: Campaign, settings: AnalysisSettings) -> CampaignAnalysis:
    annotator_pseudonyms_ensure(campaign=campaign)
    return campaign_analysis_cached(campaign=campaign, settings=settings)


@organizer_required
@require_safe
def campaign_analysis(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Annotator QC with include/exclude, system rankings with intervals and clusters,
    agreement with counts, and the report downloads."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form, settings, _real = settings_from(request)
    analysis = analysis_for(campaign, settings)
    query = request.GET.urlencode()
    return render(
        request,
        "annotation/analysis.html",
        {
            "campaign": campaign,
            "form": form,
            "analysis": analysis,
            "query": query,
            "imports": JudgmentImport.objects.filter(campaign=campaign).select_related(
                "config", "imported_by"
            ),
        },
    )


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
                messages.error(request, error)
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
            decided_by=request.user,
        )
        messages.success(
            request,
            _("Annotator included.") if action == "include" else _("Annotator excluded."),
        )
    return redirect(target)


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_judgment_import(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Upload historical judgments (EvalSite, Appraise or WMT layout) onto the campaign."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = JudgmentImportForm(request.POST or None, request.FILES or None)
    problems: list[UploadProblem] = []
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            record = judgments_import(
                campaign=campaign,
                upload=upload_file_read(
                    upload, max_bytes=django_settings.EVALSITE_UPLOAD_MAX_BYTES
                ),
                user=request.user,
                options=form.options(),
            )
        except UploadError as exc:
            problems = exc.problems
            status = 400
        else:
            messages.success(
                request,
                _("Imported %(judgments)d judgments of %(annotators)d annotators as “%(name)s”.")
                % {
                    "judgments": record.summary["judgments"],
                    "annotators": len(record.summary["annotators"]),
                    "name": record.config.name,
                },
            )
            return redirect("campaign_analysis", campaign_id=campaign.pk)
    elif request.method == "POST":
        status = 400
    return render(
        request,
        "annotation/analysis_import.html",
        {"campaign": campaign, "form": form, "problems": problems},
        status=status,
    )
