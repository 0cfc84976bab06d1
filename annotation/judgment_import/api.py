"""REST API of a release of judgments that builds its own campaign (``POST
/api/campaigns/from-release/``); imports onto an existing campaign are the analysis API's."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.campaigns.uploads import UploadError
from annotation.judgment_import.release import (
    campaign_from_release,
    release_fields,
    release_format_keys,
    release_preview,
)
from annotation.judgment_import.serializers import ReleaseRequestSerializer, problems_response
from annotation.permissions import IsOrganizer, signed_in


class CampaignFromReleaseView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": ReleaseRequestSerializer},
        responses={
            200: inline_serializer(
                "CampaignFromReleasePreview",
                {
                    "documents": serializers.IntegerField(),
                    "segments": serializers.IntegerField(),
                    "systems": serializers.ListField(child=serializers.DictField()),
                    "judgments": serializers.DictField(),
                },
            ),
            201: inline_serializer(
                "CampaignFromRelease",
                {"id": serializers.UUIDField(), "summary": serializers.DictField()},
            ),
        },
        description="Create a campaign owned by the caller from a release of judgments that "
        f"carries its texts (formats: {', '.join(release_format_keys())}) and import the "
        "judgments onto it, all or nothing, in the request; 201 with the new campaign's id and "
        "the import's summary, 400 with a refused file's problems (file and line). With dry_run, "
        "200 with what it would build and store (built and rolled back: nothing is kept).",
    )
    def post(self, request: Request) -> Response:
        serializer = ReleaseRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        fields = release_fields(signed_in(request), data, serializer.options())
        try:
            if data["dry_run"]:
                return Response(release_preview(**fields).as_json())
            record = campaign_from_release(**fields)
        except UploadError as exc:
            return problems_response(exc)
        except ValidationError as exc:
            return Response({"detail": "; ".join(exc.messages)}, status.HTTP_400_BAD_REQUEST)
        return Response(
            {"id": record.campaign_id, "summary": record.summary}, status=status.HTTP_201_CREATED
        )
