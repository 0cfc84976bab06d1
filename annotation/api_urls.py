from __future__ import annotations

from django.urls import path
from rest_framework.routers import DefaultRouter

from annotation.campaigns.api import CampaignViewSet
from annotation.crowd import api as crowd_api
from annotation.judging import api as annotate_api
from annotation.judging import document_api, screen_api
from annotation.judgment_import.api import CampaignFromReleaseView
from annotation.tasking import api as roster_api
from annotation.tasking import builds_api, configs_api, pull_api
from annotation.tutorial import api as tutorial_api

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")

urlpatterns = [
    # Before the router's campaigns/<pk>/, which would take "from-release" for an id.
    path(
        "campaigns/from-release/",
        CampaignFromReleaseView.as_view(),
        name="api-campaign-from-release",
    ),
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
    path(
        "assignments/<uuid:assignment_id>/screen/",
        screen_api.assignment_screen_submit,
        name="api-assignment-screen-submit",
    ),
    path(
        "assignments/<uuid:assignment_id>/document-score/",
        document_api.assignment_document_score,
        name="api-assignment-document-score",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotators/",
        roster_api.RosterView.as_view(),
        name="api-campaign-annotators",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotators/<str:username>/",
        roster_api.RosterMemberView.as_view(),
        name="api-campaign-annotator",
    ),
    path(
        "campaigns/<uuid:campaign_id>/protocols/",
        configs_api.ProtocolsView.as_view(),
        name="api-campaign-protocols",
    ),
    path(
        "campaigns/<uuid:campaign_id>/protocols/<int:config_id>/allocation/",
        pull_api.AllocationView.as_view(),
        name="api-config-allocation",
    ),
    path(
        "campaigns/<uuid:campaign_id>/completions/",
        crowd_api.CompletionsView.as_view(),
        name="api-campaign-completions",
    ),
    path(
        "campaigns/<uuid:campaign_id>/crowd-links/",
        crowd_api.CrowdLinksView.as_view(),
        name="api-campaign-crowd-links",
    ),
    path(
        "campaigns/<uuid:campaign_id>/protocols/<int:config_id>/tutorial/",
        tutorial_api.TutorialView.as_view(),
        name="api-config-tutorial",
    ),
    path(
        "assignments/<uuid:assignment_id>/tutorial/",
        tutorial_api.tutorial_current,
        name="api-assignment-tutorial",
    ),
    path(
        "assignments/<uuid:assignment_id>/tutorial/submit/",
        tutorial_api.tutorial_submit,
        name="api-assignment-tutorial-submit",
    ),
    path(
        "campaigns/<uuid:campaign_id>/builds/",
        builds_api.BuildsView.as_view(),
        name="api-campaign-builds",
    ),
    *router.urls,
]
