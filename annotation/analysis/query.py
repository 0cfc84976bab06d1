"""What a request of the analysis pages and of the report downloads asks for: the analysis
settings of its query string over the campaign's setting, and the analysis a download uses.
The analysis pages and the reports share them."""

from __future__ import annotations

from django.http import HttpRequest

from annotation.analysis.forms import AnalysisSettingsForm
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.shown import ShownAnalysis, campaign_analysis_shown
from annotation.models import Campaign


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
