from __future__ import annotations

from django.urls import path

from annotation.campaigns import views
from annotation.crowd import views as crowd_views
from annotation.judging import views as annotate_views
from annotation.judgment_import import views as release_views
from annotation.tasking import views as setup_views
from annotation.tutorial import views as tutorial_views

urlpatterns = [
    path("", views.home, name="home"),
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/new/", views.campaign_create, name="campaign_create"),
    path(
        "campaigns/from-release/",
        release_views.campaign_from_release_view,
        name="campaign_from_release",
    ),
    path("campaigns/<uuid:campaign_id>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<uuid:campaign_id>/edit/", views.campaign_edit, name="campaign_edit"),
    path("campaigns/<uuid:campaign_id>/upload/", views.campaign_upload, name="campaign_upload"),
    path(
        "campaigns/<uuid:campaign_id>/annotation/",
        setup_views.annotation_setup,
        name="annotation_setup",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotation/<int:config_id>/",
        setup_views.config_tasks,
        name="config_tasks",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotation/<int:config_id>/build/",
        setup_views.config_build,
        name="config_build",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotation/builds.json",
        setup_views.config_builds_status,
        name="config_builds_status",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotation/<int:config_id>/assign/",
        setup_views.config_assign,
        name="config_assign",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotators/",
        setup_views.roster_add,
        name="roster_add",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotators/<int:user_id>/remove/",
        setup_views.roster_remove,
        name="roster_remove",
    ),
    path(
        "campaigns/<uuid:campaign_id>/invites/",
        setup_views.invites_create,
        name="invites_create",
    ),
    path(
        "campaigns/<uuid:campaign_id>/invites/<int:invite_id>/revoke/",
        setup_views.invite_revoke,
        name="invite_revoke",
    ),
    path("campaigns/<uuid:campaign_id>/crowd/", crowd_views.crowd_setup, name="crowd_setup"),
    path(
        "campaigns/<uuid:campaign_id>/crowd/links/<int:link_id>/protocol/",
        crowd_views.crowd_link_protocol,
        name="crowd_link_protocol",
    ),
    path(
        "campaigns/<uuid:campaign_id>/crowd/roster/",
        crowd_views.crowd_roster_offer,
        name="crowd_roster_offer",
    ),
    path(
        "campaigns/<uuid:campaign_id>/annotation/<int:config_id>/tutorial/",
        tutorial_views.config_tutorial,
        name="config_tutorial",
    ),
    path(
        "campaigns/<uuid:campaign_id>/tutorial-items/<int:item_id>/remove/",
        tutorial_views.tutorial_item_delete,
        name="tutorial_item_delete",
    ),
    path("my/tasks/", annotate_views.my_tasks, name="my_tasks"),
    path("my/tasks/take/<int:config_id>/", annotate_views.task_take, name="task_take"),
    path("annotate/<uuid:assignment_id>/", annotate_views.annotate, name="annotate"),
    path(
        "annotate/<uuid:assignment_id>/<int:position>/",
        annotate_views.annotate,
        name="annotate_item",
    ),
    path("annotate/<uuid:assignment_id>/tutorial/", tutorial_views.tutorial, name="tutorial"),
    path("invite/<str:token>/", annotate_views.invite, name="invite"),
    path("study/<str:study_token>/", crowd_views.crowd_study, name="crowd_study"),
    path(
        "crowd/done/<uuid:assignment_id>/",
        crowd_views.crowd_completion,
        name="crowd_completion",
    ),
]
