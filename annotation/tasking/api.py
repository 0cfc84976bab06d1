"""REST API of a campaign's roster: who may pull its tasks; add and remove them by username.
Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Campaign
from annotation.permissions import IsOrganizer, campaign_for_organizer
from annotation.tasking.roster import (
    campaign_annotator_remove,
    campaign_annotators_add,
    campaign_roster,
    usernames_parse,
)
from evalsite.parsers import JSONParser


class RosterAddSerializer(serializers.Serializer):
    usernames = serializers.ListField(
        child=serializers.CharField(max_length=150),
        allow_empty=False,
        max_length=5000,
        help_text="Usernames of existing users to make annotators of the campaign.",
    )


def roster_json(campaign: Campaign) -> dict[str, Any]:
    return {
        "annotators": [
            {
                "username": entry.username,
                "tasks_in_progress": entry.held,
                "tasks_done": entry.done,
                "judgments": entry.judgments,
            }
            for entry in campaign_roster(campaign=campaign)
        ]
    }


class RosterView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]
    # JSON only: a list of thousands of usernames as form fields would exceed Django's limit
    # on form fields (a 400 page that is not JSON).
    parser_classes = [JSONParser]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The campaign's annotators (who may pull its tasks), with the tasks they "
        "hold and have done and their judgments.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        return Response(roster_json(campaign_for_organizer(request.user, campaign_id)))

    @extend_schema(
        request=RosterAddSerializer,
        responses=OpenApiTypes.OBJECT,
        description="Make existing users annotators of the campaign: which were added, which "
        "were annotators already and which usernames no user has.",
    )
    def post(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        serializer = RosterAddSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        names = usernames_parse(" ".join(serializer.validated_data["usernames"]))
        change = campaign_annotators_add(campaign=campaign, usernames=names)
        return Response(
            {"added": change.added, "already": change.already, "unknown": change.unknown}
        )


class RosterMemberView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="Take an annotator off the roster: the tasks they hold go back to the "
        "pool (their answers stay).",
    )
    def delete(self, request: Request, campaign_id: Any, username: str) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        field = get_user_model().USERNAME_FIELD
        annotator = get_object_or_404(campaign.annotators, **{field: username})
        released = campaign_annotator_remove(campaign=campaign, annotator=annotator)
        return Response({"removed": username, "released_tasks": released})
