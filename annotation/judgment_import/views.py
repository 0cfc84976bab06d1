"""The page that builds a campaign from a release of judgments in one step."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.forms import ReleaseForm
from annotation.judgment_import.release import (
    campaign_from_release,
    release_fields,
    release_preview,
)
from annotation.permissions import organizer_required, signed_in


@organizer_required
@require_http_methods(["GET", "POST"])
def campaign_from_release_view(request: HttpRequest) -> HttpResponse:
    """A new campaign from a release's texts with its judgments imported, all or nothing (in
    the request: the page waits for it); then the new campaign's analysis."""
    form = ReleaseForm(request.POST or None, request.FILES or None)
    problems: list[UploadProblem] = []
    status = 400 if request.method == "POST" else 200
    preview = None
    if request.method == "POST" and form.is_valid():
        fields = release_fields(signed_in(request), form.cleaned_data)
        try:
            if "preview" in request.POST:
                # Built and rolled back: what it would store, nothing kept.
                preview = release_preview(**fields)
                status = 200
            else:
                record = campaign_from_release(**fields)
        except UploadError as exc:
            problems = exc.problems
        except ValidationError as exc:
            form.add_error(None, exc.messages)
        else:
            if preview is not None:
                return render(
                    request,
                    "annotation/campaign_from_release.html",
                    {"form": form, "problems": [], "preview": preview},
                )
            messages.success(
                request,
                _("Campaign created from the release, with %(n)d judgments imported.")
                % {"n": record.summary["judgments"]},
            )
            return redirect("campaign_analysis", campaign_id=record.campaign_id)
    return render(
        request,
        "annotation/campaign_from_release.html",
        {"form": form, "problems": problems},
        status=status,
    )
