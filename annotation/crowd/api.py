"""REST API of a campaign's crowd links (list, create) and crowd workers: their completions, and
the verification of a code a worker sent in. Owner and co-organizers only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from annotation.crowd.forms import CrowdLinkForm
from annotation.crowd.selectors import crowd_links, crowd_study_url, crowd_verify, crowd_workers
from annotation.crowd.services import crowd_link_create
from annotation.models import CompletionRule, CrowdPlatform
from annotation.permissions import IsOrganizer, campaign_for_organizer, signed_in

# The most workers one page of completions lists.
COMPLETIONS_PAGE = 1000


class CompletionQuerySerializer(serializers.Serializer):
    worker = serializers.CharField(max_length=64, required=False)
    code = serializers.CharField(max_length=40, required=False, allow_blank=True)
    limit = serializers.IntegerField(
        min_value=1, max_value=COMPLETIONS_PAGE, default=COMPLETIONS_PAGE, required=False
    )
    offset = serializers.IntegerField(min_value=0, default=0, required=False)


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
            OpenApiParameter(
                "limit", int, description=f"Workers per page (1–{COMPLETIONS_PAGE}, the default)."
            ),
            OpenApiParameter("offset", int, description="Workers to skip (default 0)."),
        ],
        responses=OpenApiTypes.OBJECT,
        description="The campaign's crowd workers, finished ones first: worker id, platform, "
        "account, when they started and finished, their completion code, whether it is the "
        "pass code (`passed`), and the quality test it was decided on (`qc`: test, space, "
        "threshold, status, and per criterion the bad-reference pairs and the p-value). "
        "`count` is how many workers there are in all; `next` the URL of the next page, or "
        "null on the last.",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        query = CompletionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        worker_id = query.validated_data.get("worker")
        limit, offset = query.validated_data["limit"], query.validated_data["offset"]
        rows = crowd_verify(
            campaign=campaign,
            worker_id=worker_id,
            code=query.validated_data.get("code", ""),
            offset=offset,
            limit=limit,
        )
        count = crowd_workers(campaign=campaign, worker_id=worker_id).count()
        following = None
        if offset + limit < count:
            following = request.build_absolute_uri(
                replace_query_param(request.get_full_path(), "offset", offset + limit)
            )
        return Response(
            {
                "count": count,
                "next": following,
                "completions": [row.to_json() for row in rows],
            }
        )


class CrowdLinkSerializer(serializers.Serializer):
    """A new crowd link's settings; checked by the crowd page's form (one set of rules)."""

    platform = serializers.ChoiceField(choices=CrowdPlatform.choices)
    config = serializers.IntegerField(help_text="The protocol config whose tasks workers get.")
    id_parameter = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        help_text="The URL parameter with the worker id; empty: PROLIFIC_PID (Prolific), "
        "workerId (Mechanical Turk).",
    )
    rule = serializers.ChoiceField(
        choices=CompletionRule.choices, default=CompletionRule.NOT_FAILED
    )
    pass_code = serializers.CharField(max_length=40, required=False, allow_blank=True)
    fail_code = serializers.CharField(max_length=40, required=False, allow_blank=True)
    return_url = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        help_text="https only; {code} in it becomes the worker's code.",
    )
    # A field named like Field.label: DRF's metaclass takes declared fields off the class, the
    # stubs see a clash (typeddjango/djangorestframework-stubs#78, #158).
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=150, required=False, allow_blank=True
    )
    days = serializers.IntegerField(min_value=1, max_value=365, default=30)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        form = CrowdLinkForm(attrs, campaign=self.context["campaign"])
        if not form.is_valid():
            raise serializers.ValidationError(
                {field: [str(e) for e in errors] for field, errors in form.errors.items()}
            )
        return dict(form.cleaned_data)


def _link_json(row: dict[str, Any]) -> dict[str, Any]:
    link = row["link"]
    return {
        "id": link.invite_id,
        "label": link.invite.label,
        "platform": link.platform,
        "id_parameter": link.id_parameter,
        "config": link.config_id,
        "rule": link.rule,
        "pass_code": link.pass_code or None,
        "fail_code": link.fail_code or None,
        "return_url": link.return_url or None,
        "expires_at": link.invite.expires_at,
        "usable": row["usable"],
        "study_url": row["url"],
    }


class CrowdLinksView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="The campaign's crowd links, newest first, each with the study URL to give "
        "the platform (`study_url`) and whether it still works (not withdrawn or expired).",
    )
    def get(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        rows = crowd_links(request=request, campaign=campaign)
        return Response({"links": [_link_json(row) for row in rows]})

    @extend_schema(
        request=CrowdLinkSerializer,
        responses={201: OpenApiTypes.OBJECT},
        description="Make a crowd link: one invite link for a whole study, each worker bound "
        "by the platform id in the URL. Empty codes give every worker a code of their own.",
    )
    def post(self, request: Request, campaign_id: Any) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        serializer = CrowdLinkSerializer(data=request.data, context={"campaign": campaign})
        serializer.is_valid(raise_exception=True)
        link = crowd_link_create(
            campaign=campaign, created_by=signed_in(request), **serializer.validated_data
        )
        row = {"link": link, "url": crowd_study_url(request=request, link=link), "usable": True}
        return Response(_link_json(row), status=status.HTTP_201_CREATED)
