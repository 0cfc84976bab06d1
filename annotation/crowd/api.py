"""REST API of a campaign's crowd workers: their completions, and the verification of a code a
worker sent in. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.campaigns.api import IsOrganizer
from annotation.crowd.selectors import crowd_verify
from annotation.permissions import campaign_for_organizer


class CompletionQuerySerializer(serializers.Serializer):
    worker = serializers.CharField(max_length=64, required=False)
    code = serializers.CharField(max_length=40, required=False, allow_blank=True)


class CompletionsView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "worker", str, description="Only this platform worker id (on any platform)."
            ),
            OpenApiParameter(
                "code",
                str,
                description="A code a worker sent in: each row then says whether it is the "
                "code that worker was shown (`code_matches`; case and spaces ignored).",
            ),
        ],
        responses=OpenApiTypes.OBJECT,
        description="The campaign's crowd workers, finished ones first: worker id, platform, "
        "account, when they started and finished, their completion code, whether it is the "
        "pass code (`passed`), and the quality test it was decided on (`qc`: test, space, "
        "threshold, status, and per criterion the bad-reference pairs and the p-value).",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        query = CompletionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = crowd_verify(
            campaign=campaign,
            worker_id=query.validated_data.get("worker"),
            code=query.validated_data.get("code", ""),
        )
        return Response({"completions": [row.to_json() for row in rows]})
