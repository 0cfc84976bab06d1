"""URLs of the reports: the organizer's downloads and the REST API's."""

from __future__ import annotations

from django.urls import path

from annotation.reports import api, views

urlpatterns = [
    path(
        "campaigns/<uuid:campaign_id>/analysis/reports/judgments.<str:fmt>",
        views.campaign_report_judgments,
        name="campaign_report_judgments",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/reports/systems.<str:fmt>",
        views.campaign_report_systems,
        name="campaign_report_systems",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/reports/spans.<str:fmt>",
        views.campaign_report_spans,
        name="campaign_report_spans",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/reports/spans.<str:fmt>",
        api.SpanReportView.as_view(),
        name="api-campaign-report-spans",
    ),
    path(
        "campaigns/<uuid:campaign_id>/analysis/reports/annotators.csv",
        views.campaign_report_annotators,
        name="campaign_report_annotators",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/reports/judgments.<str:fmt>",
        api.JudgmentReportView.as_view(),
        name="api-campaign-report-judgments",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/reports/systems.<str:fmt>",
        api.SystemReportView.as_view(),
        name="api-campaign-report-systems",
    ),
    path(
        "api/campaigns/<uuid:campaign_id>/reports/annotators.csv",
        api.AnnotatorReportView.as_view(),
        name="api-campaign-report-annotators",
    ),
]
