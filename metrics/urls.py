"""URLs of the metrics app: the campaign dashboard."""

from __future__ import annotations

from django.urls import path

from metrics import views
from metrics.metaeval import views as metaeval_views

urlpatterns = [
    path(
        "campaigns/<uuid:campaign_id>/dashboard/",
        views.campaign_dashboard,
        name="campaign_dashboard",
    ),
    path(
        "campaigns/<uuid:campaign_id>/dashboard/status.json",
        views.campaign_dashboard_status,
        name="campaign_dashboard_status",
    ),
    path(
        "campaigns/<uuid:campaign_id>/dashboard/recompute/",
        views.campaign_dashboard_recompute,
        name="campaign_dashboard_recompute",
    ),
    path(
        "campaigns/<uuid:campaign_id>/dashboard/results/<str:kind>.json",
        views.campaign_dashboard_result,
        name="campaign_dashboard_result",
    ),
    path(
        "campaigns/<uuid:campaign_id>/meta-evaluation/",
        metaeval_views.campaign_meta_evaluation,
        name="campaign_meta_evaluation",
    ),
]
