"""Organizer pages: campaign list, create/edit, upload, and the campaign page; and the landing
redirect of every user."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from annotation.campaigns import selectors, services
from annotation.campaigns.forms import CampaignForm, UploadForm
from annotation.campaigns.uploads import UploadError
from annotation.permissions import (
    campaign_for_organizer,
    campaigns_managed_by,
    organizer_required,
    signed_in,
    user_is_organizer,
)
from evalsite.formatting import count_text


@login_required
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """Organizers land on their campaigns, annotators on their tasks."""
    if user_is_organizer(request.user):
        return redirect("campaign_list")
    return redirect("my_tasks")


@organizer_required
@require_safe
def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = (
        campaigns_managed_by(request.user)
        .select_related("owner")
        .annotate(
            n_segments=Count("segments", distinct=True), n_systems=Count("systems", distinct=True)
        )
        .order_by("-created")
    )
    return render(request, "annotation/campaign_list.html", {"campaigns": campaigns})


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = {
            k: v
            for k, v in form.cleaned_data.items()
            if k not in ("co_organizers", "confirm_close")
        }
        campaign = services.campaign_create(
            owner=signed_in(request), organizers=form.cleaned_data["co_organizers"], **data
        )
        messages.success(request, _("Campaign created. Upload its data next."))
        return redirect("campaign_upload", campaign_id=campaign.id)
    context = {"form": form, "campaign": None}
    return render(request, "annotation/campaign_form.html", context, status=_form_status(form))


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_edit(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = CampaignForm(request.POST or None, instance=campaign)
    if request.method == "POST" and form.is_valid():
        data = {
            k: v
            for k, v in form.cleaned_data.items()
            if k not in ("co_organizers", "confirm_close")
        }
        services.campaign_update(
            campaign=campaign, organizers=form.cleaned_data["co_organizers"], **data
        )
        messages.success(request, _("Campaign saved."))
        return redirect(campaign)
    context = {"form": form, "campaign": campaign}
    return render(request, "annotation/campaign_form.html", context, status=_form_status(form))


def _form_status(form: CampaignForm) -> int:
    """400 for a refused form (as the setup page answers), 200 for a blank one."""
    return 400 if form.is_bound and form.errors else 200


@organizer_required
@require_safe
def campaign_detail(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    context = {
        "campaign": campaign,
        "counts": selectors.campaign_counts(campaign=campaign),
        "documents": selectors.campaign_documents(campaign=campaign)[:20],
        "systems": selectors.campaign_systems(campaign=campaign),
        "samples": selectors.campaign_sample_rows(campaign=campaign, limit=5),
        "uploads": selectors.campaign_uploads(campaign=campaign)[:10],
    }
    return render(request, "annotation/campaign_detail.html", context)


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_upload(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = UploadForm(request.POST or None, request.FILES or None)
    problems = []
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            upload = services.campaign_data_import(
                campaign=campaign,
                files=form.upload_files(),
                user=signed_in(request),
                replace_systems=form.cleaned_data["replace"],
            )
        except UploadError as exc:
            problems = exc.problems
            status = 400
        else:
            summary = upload.summary
            messages.success(
                request,
                _(
                    "Upload stored: %(segments)d segments, %(systems)d systems, "
                    "%(translations)d translations added."
                )
                % {
                    "segments": summary.get("segments_added", 0),
                    "systems": len(summary.get("systems_added", []))
                    + len(summary.get("systems_replaced", [])),
                    "translations": summary.get("translations_added", 0),
                },
            )
            if summary.get("no_document_ids"):
                messages.warning(
                    request,
                    _(
                        "No document ids: the %(n)s segments were put in one document, so "
                        "document context on the annotation page shows neighbouring lines that "
                        "may not belong together. Upload a doc_ids file (one id per line) or a "
                        "TSV, JSONL or WMT XML file with documents."
                    )
                    % {"n": count_text(summary["no_document_ids"])},
                )
            return redirect(campaign)
    elif request.method == "POST":
        status = 400
    return render(
        request,
        "annotation/campaign_upload.html",
        {"campaign": campaign, "form": form, "problems": problems},
        status=status,
    )
