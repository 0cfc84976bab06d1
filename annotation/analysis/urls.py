"""URLs of the human-judgment analysis: organizer pages and the REST API."""

from __future__ import annotations

from django.urls import path

from annotation.analysis import api as analysis_api
from annotation.analysis import views as analysis_views

urlpatterns = [
    path(
        "campaigns/<uuid:campaign_id>/analysis/",
        analysis_views.campaign_analysis,
        name="campaign_analysis",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/explore.json",
        analysis_views.campaign_analysis_explore,
        name="campaign_analysis_explore",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/settings/",
        analysis_views.campaign_analysis_settings_save_view,
        name="campaign_analysis_settings",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/decisions/",
        analysis_views.campaign_analysis_decision,
        name="campaign_analysis_decision",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/import/",
        analysis_views.campaign_judgment_import,
        name="campaign_judgment_import",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/import/<uuid:job_id>/",
        analysis_views.campaign_judgment_import_job,
        name="campaign_judgment_import_job",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/human-analysis/",
        analysis_api.AnalysisView.as_view(),
        name="api-campaign-analysis",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/error-spans/",
        analysis_api.SpanSummaryView.as_view(),
        name="api-campaign-error-spans",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/document-scores/",
        analysis_api.DocumentScoresView.as_view(),
        name="api-campaign-document-scores",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/analysis-settings/",
        analysis_api.AnalysisSettingsView.as_view(),
        name="api-campaign-analysis-settings",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/judgment-imports/",
        analysis_api.JudgmentImportView.as_view(),
        name="api-campaign-judgment-imports",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/judgment-imports/<uuid:job_id>/",
        analysis_api.JudgmentImportJobView.as_view(),
        name="api-campaign-judgment-import-job",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/annotator-decisions/",
        analysis_api.DecisionView.as_view(),
        name="api-campaign-annotator-decisions",
    ),
]
