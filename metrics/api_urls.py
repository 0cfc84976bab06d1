from __future__ import annotations

from django.urls import path

from metrics import api

urlpatterns = [
    path("campaigns/<uuid:campaign_id>/analysis/", api.AnalysisView.as_view(), name="api-analysis"),
    path(
        "campaigns/<uuid:campaign_id>/results/segments/",
        api.SegmentScoresView.as_view(),
        name="api-segment-scores",
    ),
    path(
        "campaigns/<uuid:campaign_id>/results/<str:kind>/",
        api.ResultView.as_view(),
        name="api-analysis-result",
    ),
]
