from __future__ import annotations

from django.urls import path
from rest_framework.routers import DefaultRouter

from annotation.campaigns.api import CampaignViewSet
from annotation.judging import api as annotate_api

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")

urlpatterns = [
    path("my/tasks/", annotate_api.my_tasks, name="api-my-tasks"),
    path("protocols/<int:config_id>/take/", annotate_api.config_take, name="api-config-take"),
    path(
        "assignments/<uuid:assignment_id>/current/",
        annotate_api.assignment_current,
        name="api-assignment-current",
    ),
    path(
        "assignments/<uuid:assignment_id>/submit/",
        annotate_api.assignment_submit,
        name="api-assignment-submit",
    ),
    *router.urls,
]
