"""What a request of the analysis pages and of the report downloads asks for: the analysis
settings of its query string over the campaign's setting, and the analysis a download uses.
The analysis pages and the reports share them, and their APIs the base view
:class:`CampaignAPIView`."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.views import APIView

from annotation.analysis.forms import AnalysisSettingsForm
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.serializers import SettingsSerializer
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.shown import ShownAnalysis, campaign_analysis_shown
from annotation.models import Campaign
from annotation.permissions import IsCampaignOrganizer, campaign_for_organizer


def settings_from(
    request: HttpRequest, campaign: Campaign
) -> tuple[AnalysisSettingsForm, AnalysisSettings, bool]:
    """The settings of the query string over the campaign's setting; without a query, or with
    an invalid field (the form shows its error), the campaign's setting."""
    base = campaign_analysis_settings(campaign=campaign)
    if not request.GET:
        return AnalysisSettingsForm.for_settings(base), base, False
    form = AnalysisSettingsForm(request.GET)
    if form.is_valid():
        settings = form.settings(base)
        # The form shows the settings that apply, whatever the query left out or a preset set.
        shown = AnalysisSettingsForm.for_settings(settings, form.cleaned_data.get("names") or "")
        return shown, settings, form.real_names
    return form, base, False


def analysis_for(campaign: Campaign, settings: AnalysisSettings) -> ShownAnalysis:
    """The analysis a download uses: the stored one while it is fresh, else computed now
    (``analysis`` is never None)."""
    annotator_pseudonyms_ensure(campaign=campaign)
    shown = campaign_analysis_shown(campaign=campaign, settings=settings, wait=True)
    assert shown.analysis is not None  # with wait, always
    return shown


class CampaignAPIView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsCampaignOrganizer]

    def campaign(self, request: Request, campaign_id: Any) -> Campaign:
        return campaign_for_organizer(request.user, campaign_id)

    def read_settings(self, request: Request) -> SettingsSerializer:
        serializer = SettingsSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        return serializer

    def chosen_settings(
        self, request: Request, campaign: Campaign
    ) -> tuple[AnalysisSettings, SettingsSerializer]:
        """The query's settings over the campaign's setting, and the query read."""
        serializer = self.read_settings(request)
        return serializer.settings(campaign_analysis_settings(campaign=campaign)), serializer

    def analysis(self, campaign: Campaign, settings: AnalysisSettings) -> ShownAnalysis:
        """The stored analysis while it is fresh, else computed for the request (``analysis``
        is never None)."""
        return analysis_for(campaign, settings)
