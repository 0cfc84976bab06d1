from __future__ import annotations

from django.urls import path

from annotation import views

urlpatterns = [
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/new/", views.campaign_create, name="campaign_create"),
    path("campaigns/<uuid:campaign_id>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<uuid:campaign_id>/edit/", views.campaign_edit, name="campaign_edit"),
    path("campaigns/<uuid:campaign_id>/upload/", views.campaign_upload, name="campaign_upload"),
    path("my/tasks/", views.my_tasks, name="my_tasks"),
]
