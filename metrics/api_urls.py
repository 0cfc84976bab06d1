from __future__ import annotations

from django.urls import path

from metrics import api
from metrics.metaeval import api as metaeval_api

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
    path(
        "campaigns/<uuid:campaign_id>/meta-evaluation/",
        metaeval_api.MetaEvaluationView.as_view(),
        name="api-meta-evaluation",
    ),
]
