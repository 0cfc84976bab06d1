"""REST API of a campaign's task builds: the newest build of every protocol, with what it
wrote and what merging identical outputs saved. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.permissions import IsOrganizer, campaign_for_organizer
from annotation.tasking.selectors import task_builds_latest


class BuildsView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The newest task build of every protocol config of the campaign: status, "
        "stage and rows written while running, the tasks and items written, and what merging "
        "identical outputs saved (`saved_screens`, `saved_judgments`: the items and shown "
        "outputs a build without merging would have had, minus those written, times the "
        "annotators per task), with the setup page's message.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        builds = task_builds_latest(campaign=campaign)
        return Response({"builds": list(builds.values())})
