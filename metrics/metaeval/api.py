"""REST API of the meta-evaluation: POST the score files, get the table as JSON or CSV."""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.permissions import IsOrganizer, campaign_for_organizer
from metrics.metaeval.forms import MetaEvaluationForm
from metrics.metaeval.presenters import (
    CSV_DOWNLOADS,
    meta_evaluation_download,
    meta_evaluation_json,
)
from metrics.metaeval.sources import campaign_human_sources


class MetaEvaluationView(APIView):
    """Multipart fields as the page's form: ``human_source`` (``file`` or a criterion of the
    campaign's stored human analysis), ``human`` (one .sys.score file), ``metrics`` (one
    file per metric), ``human_segments`` (one .seg.score file), ``metric_segments`` (one file
    per metric), ``human_systems``, ``include_human``, ``exclude_outliers``,
    ``lower_is_better``, ``cluster_test``, ``seed``. ``?output=csv`` answers the system-level
    table as CSV, ``?output=segment-csv`` the segment-level one."""

    permission_classes = [permissions.IsAuthenticated, IsOrganizer]
    parser_classes = [MultiPartParser]

    @extend_schema(
        parameters=[OpenApiParameter("output", str, required=False, enum=["json", *CSV_DOWNLOADS])],
        request={
            "multipart/form-data": inline_serializer(
                "MetaEvaluationUpload",
                {
                    "human_source": serializers.CharField(
                        required=False,
                        help_text="'file' (the default) or '<config id>:<criterion>' of the "
                        "campaign's stored human analysis",
                    ),
                    "human": serializers.FileField(required=False),
                    "metrics": serializers.ListField(child=serializers.FileField(), required=False),
                    "human_segments": serializers.FileField(required=False),
                    "metric_segments": serializers.ListField(
                        child=serializers.FileField(), required=False
                    ),
                    "human_systems": serializers.CharField(required=False),
                    "include_human": serializers.BooleanField(required=False),
                    "exclude_outliers": serializers.BooleanField(required=False),
                    "lower_is_better": serializers.CharField(required=False),
                    "cluster_test": serializers.ChoiceField(["williams", "permutation"]),
                    "seed": serializers.IntegerField(required=False),
                },
            )
        },
        responses={
            200: inline_serializer(
                "MetaEvaluation",
                {
                    "rows": serializers.ListField(child=serializers.DictField()),
                    "tests": serializers.ListField(child=serializers.DictField()),
                    "systems": serializers.ListField(child=serializers.CharField()),
                    "excluded_human": serializers.ListField(child=serializers.CharField()),
                    "excluded_outliers": serializers.ListField(child=serializers.CharField()),
                    "metric_only": serializers.DictField(),
                    "negated": serializers.ListField(child=serializers.CharField()),
                    "human_only": serializers.ListField(child=serializers.CharField()),
                    "renamed": serializers.DictField(child=serializers.CharField()),
                    "cluster_test": serializers.CharField(),
                    "alpha": serializers.FloatField(),
                    "n_trials": serializers.IntegerField(),
                    "seed": serializers.IntegerField(allow_null=True),
                    "outlier_cutoff": serializers.FloatField(allow_null=True),
                    "outlier_scale": serializers.FloatField(allow_null=True),
                    "segments": serializers.DictField(allow_null=True),
                    "segment_human_only": serializers.ListField(child=serializers.CharField()),
                },
            )
        },
    )
    def post(self, request: Request, campaign_id: uuid.UUID) -> Any:
        campaign = campaign_for_organizer(request.user, campaign_id)
        # The page's form validates the API's multipart fields too: one set of rules and messages.
        form = MetaEvaluationForm(
            request.POST, request.FILES, sources=campaign_human_sources(campaign=campaign)
        )
        if not form.is_valid():
            errors = {
                "non_field_errors" if field == "__all__" else field: [e["message"] for e in found]
                for field, found in form.errors.get_json_data().items()
            }
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        result = form.evaluation()
        output = request.query_params.get("output")
        if output in CSV_DOWNLOADS:
            return meta_evaluation_download(result, campaign_name=campaign.name, which=output)
        return Response(meta_evaluation_json(result))
