from __future__ import annotations

from django.urls import path

from metrics import settings_views

urlpatterns = [
    path(
        "campaigns/<uuid:campaign_id>/analysis-settings/",
        settings_views.analysis_settings,
        name="analysis_settings",
    ),
]
