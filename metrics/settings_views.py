"""The organizer's settings of a campaign's background analysis."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotation.permissions import campaign_for_organizer, organizer_required
from metrics.forms import MetricSettingsForm
from metrics.pipeline import metric_settings


@organizer_required
@require_http_methods(["GET", "POST"])
def analysis_settings(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = MetricSettingsForm(request.POST or None, instance=metric_settings(campaign.pk))
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Analysis settings saved; the next analysis uses them."))
        return redirect("analysis_settings", campaign_id=campaign.pk)
    return render(
        request,
        "metrics/settings.html",
        {"campaign": campaign, "form": form},
        status=400 if form.errors else 200,
    )
