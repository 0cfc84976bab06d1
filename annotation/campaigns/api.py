"""REST API for campaigns: list/create/read/update, upload (multipart) and contents."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.campaigns import selectors, services
from annotation.campaigns.forms import upload_files_from
from annotation.campaigns.uploads import UploadError
from annotation.models import Campaign, Segment, Upload
from annotation.permissions import (
    IsOrganizer,
    campaigns_managed_by,
    signed_in,
    user_is_organizer,
)


class Pagination(LimitOffsetPagination):
    """``?limit=&offset=`` pages of at most 1,000 rows: an unbounded limit reached the database
    as a LIMIT beyond bigint (a 500) or, within it, a whole campaign in one response."""

    max_limit = 1000


class CampaignSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    organizers = serializers.SlugRelatedField(
        many=True,
        slug_field="username",
        queryset=get_user_model().objects.all(),
        required=False,
        help_text="Usernames of co-organizers.",
    )
    url = serializers.HyperlinkedIdentityField(view_name="api-campaign-detail")
    confirm_close = serializers.BooleanField(
        write_only=True,
        required=False,
        help_text="Close the campaign even though annotators hold unfinished tasks of it.",
    )

    class Meta:
        model = Campaign
        fields = [
            "id",
            "url",
            "name",
            "source_language",
            "target_language",
            "description",
            "status",
            "owner",
            "organizers",
            "crowd_tasks_to_roster",
            "created",
            "updated",
            "confirm_close",
        ]
        read_only_fields = ["id", "created", "updated"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Closing a campaign whose tasks annotators hold needs ``confirm_close``: the refusal
        lists them."""
        confirmed = attrs.pop("confirm_close", False)
        campaign = self.instance
        holds = (
            selectors.campaign_open_holds(campaign=campaign)
            if campaign is not None
            and attrs.get("status") == Campaign.Status.CLOSED
            and campaign.status != Campaign.Status.CLOSED
            else []
        )
        if holds and not confirmed:
            raise serializers.ValidationError(
                {
                    "confirm_close": [
                        f"{len(holds)} unfinished task(s) of this campaign are held by "
                        "annotators; closing ends them where they are. Send confirm_close: "
                        "true to close it anyway.",
                        *(
                            f"{h.username}: {h.config_name}, task {h.task} "
                            f"({h.items_done} of {h.size} done)"
                            for h in holds
                        ),
                    ]
                }
            )
        return attrs

    def validate_organizers(self, users: list[Any]) -> list[Any]:
        not_organizers = [u.username for u in users if not user_is_organizer(u)]
        if not_organizers:
            raise serializers.ValidationError(f"not an organizer: {', '.join(not_organizers)}")
        return users


class NamedFileField(serializers.FileField):
    """A file whose refusal names it ("src.txt: The submitted file is empty."), as every other
    upload error does."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as error:
            name = getattr(data, "name", "")
            if not name:
                raise
            details = error.detail if isinstance(error.detail, list) else [error.detail]
            raise serializers.ValidationError([f"{name}: {d}" for d in details]) from None


class UploadRequestSerializer(serializers.Serializer):
    # Fields named like Field.source and Serializer.data: DRF's metaclass takes declared fields
    # off the class, the stubs see a clash (typeddjango/djangorestframework-stubs#78, #158).
    source = NamedFileField(  # type: ignore[assignment]
        required=False, help_text="Source text, one segment per line."
    )
    references = serializers.ListField(
        child=NamedFileField(), required=False, help_text="Reference files."
    )
    systems = serializers.ListField(
        child=NamedFileField(),
        required=False,
        help_text="System outputs named <system>.txt or <system>.<run>.txt.",
    )
    doc_ids = NamedFileField(required=False, help_text="One document id per line.")
    data = serializers.ListField(  # type: ignore[assignment]
        child=NamedFileField(),
        required=False,
        help_text="One .tsv/.jsonl file or WMT .xml files, instead of plain text.",
    )
    replace = serializers.BooleanField(
        required=False, default=False, help_text="Replace systems that already exist."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not any(attrs.get(f) for f in ("source", "references", "systems", "doc_ids", "data")):
            raise serializers.ValidationError("upload at least one file")
        return attrs


class UploadSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.CharField(source="uploaded_by.username", default=None)

    class Meta:
        model = Upload
        fields = ["id", "form", "files", "summary", "uploaded_by", "created"]


class SegmentSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document.external_id")
    seg_id = serializers.CharField(source="external_id")
    references = serializers.SerializerMethodField()

    class Meta:
        model = Segment
        fields = ["position", "document", "seg_id", "source", "references"]

    def get_references(self, segment: Segment) -> list[str]:
        return [ref.text for ref in segment.references.all()]


class CampaignViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Campaigns the caller owns or co-organizes."""

    serializer_class = CampaignSerializer
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]
    pagination_class = Pagination

    def get_queryset(self) -> QuerySet[Campaign]:
        return (
            campaigns_managed_by(self.request.user)
            .select_related("owner")
            .prefetch_related("organizers")
            .order_by("-created")
        )

    def perform_create(self, serializer: serializers.BaseSerializer[Campaign]) -> None:
        data = dict(serializer.validated_data)
        serializer.instance = services.campaign_create(owner=signed_in(self.request), **data)

    def perform_update(self, serializer: serializers.BaseSerializer[Campaign]) -> None:
        campaign = serializer.instance
        assert campaign is not None  # UpdateModelMixin.update serializes the campaign it updates
        serializer.instance = services.campaign_update(
            campaign=campaign, **serializer.validated_data
        )

    @extend_schema(
        request={"multipart/form-data": UploadRequestSerializer},
        responses={201: UploadSerializer},
        description="Upload campaign data: plain text (source, references, systems, doc_ids) or "
        "one TSV/JSONL file or WMT XML files (data). All or nothing; errors name file and line.",
    )
    @action(detail=True, methods=["post"], parser_classes=[MultiPartParser, FormParser])
    def upload(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        campaign = self.get_object()
        serializer = UploadRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            upload = services.campaign_data_import(
                campaign=campaign,
                files=upload_files_from(serializer.validated_data),
                user=signed_in(request),
                replace_systems=serializer.validated_data["replace"],
            )
        except UploadError as exc:
            return Response(
                {
                    "detail": str(exc.problems[0]),
                    "problems": [
                        {"file": p.file, "line": p.line, "message": p.message} for p in exc.problems
                    ],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(UploadSerializer(upload).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        responses=inline_serializer(
            "CampaignContents",
            {
                "counts": serializers.DictField(child=serializers.IntegerField()),
                "documents": serializers.ListField(child=serializers.DictField()),
                "systems": serializers.ListField(child=serializers.DictField()),
                "uploads": UploadSerializer(many=True),
            },
        )
    )
    @action(detail=True, methods=["get"])
    def contents(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """Counts, documents, systems with their runs, and the upload history."""
        campaign = self.get_object()
        counts = selectors.campaign_counts(campaign=campaign)
        return Response(
            {
                "counts": counts.__dict__,
                "documents": [
                    {"id": d.external_id, "position": d.position, "segments": d.n_segments}
                    for d in selectors.campaign_documents(campaign=campaign)
                ],
                "systems": [
                    {
                        "name": s.name,
                        "human": s.human,
                        "runs": [
                            {
                                "name": r.name,
                                # Counted by campaign_systems' Prefetch, which mypy cannot see.
                                "translations": r.n_translations,  # type: ignore[attr-defined]
                            }
                            for r in s.runs.all()
                        ],
                    }
                    for s in selectors.campaign_systems(campaign=campaign)
                ],
                "uploads": UploadSerializer(
                    selectors.campaign_uploads(campaign=campaign), many=True
                ).data,
            }
        )

    @extend_schema(responses=SegmentSerializer(many=True))
    @action(detail=True, methods=["get"])
    def segments(
        self, request: Request, pk: str | None = None, format: str | None = None
    ) -> Response:
        """Segments in test-set order with document, id, source and references (paginated)."""
        campaign = self.get_object()
        page = self.paginate_queryset(selectors.campaign_segments(campaign=campaign))
        return self.get_paginated_response(SegmentSerializer(page, many=True).data)
