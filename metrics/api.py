"""REST API of the background analysis: job status, "recompute now" and the stored results."""

from __future__ import annotations

import csv
import uuid
from typing import Any

import numpy as np
from django.http import Http404, StreamingHttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.analysis.serializers import NAMES, NamesSerializer
from annotation.models import Segment
from annotation.permissions import IsOrganizer, campaign_for_organizer
from evalsite.formatting import formula_safe
from metrics.models import AnalysisJob, AnalysisResult, SegmentScores
from metrics.pipeline import load_array
from metrics.queries import result_json
from metrics.services import analysis_request, jobs_dispatch_pending


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    result_kinds = serializers.SerializerMethodField()

    class Meta:
        model = AnalysisJob
        fields = [
            "id",
            "status",
            "stage",
            "progress_done",
            "progress_total",
            "percent",
            "error",
            "dispatched",
            "fingerprint",
            "params",
            "created",
            "started",
            "finished",
            "result_kinds",
        ]

    def get_result_kinds(self, job: AnalysisJob) -> list[str]:
        return sorted(job.results.values_list("kind", flat=True))


# Lazy: translated when a response is built, in the language of that request (not once, in
# whatever language was active when the module was imported).
QUEUE_DOWN = gettext_lazy(
    "The background queue is unreachable right now. The recomputation is recorded and starts "
    "as soon as the queue is back."
)


class AnalysisView(APIView):
    """The campaign's latest analysis job (GET) and "recompute now" (POST)."""

    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(responses={200: JobSerializer, 204: None})
    def get(self, request: Request, campaign_id: uuid.UUID) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        # A status poll also sends jobs recorded while the broker was down (never raises).
        jobs_dispatch_pending()
        job = AnalysisJob.objects.filter(campaign=campaign).first()
        if job is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(JobSerializer(job).data)

    @extend_schema(
        request=None,
        responses={
            202: inline_serializer(
                "RecomputeResult",
                {
                    "job": JobSerializer(),
                    "reused": serializers.BooleanField(),
                    "queued": serializers.BooleanField(),
                    "detail": serializers.CharField(),
                },
            )
        },
    )
    def post(self, request: Request, campaign_id: uuid.UUID) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        result = analysis_request(campaign=campaign, user=request.user, force=True)
        if not result.queued:
            detail = str(QUEUE_DOWN)
        elif result.reused:  # "Recompute now" (force) never reuses a finished job
            detail = _("An analysis of the same data is already under way.")
        else:
            detail = _("The analysis is queued.")
        return Response(
            {
                "job": JobSerializer(result.job).data,
                "reused": result.reused,
                "queued": result.queued,
                "detail": detail,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class ResultView(APIView):
    """The latest stored result document of a kind: metrics, human or correlations."""

    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind", str, OpenApiParameter.PATH, enum=list(AnalysisResult.Kind.values)
            ),
            OpenApiParameter(
                "names",
                str,
                enum=list(NAMES),
                description="How the human document names annotators: pseudonyms (A001, …, "
                "the default) or usernames (real).",
            ),
        ],
        responses=inline_serializer(
            "AnalysisResultDocument",
            {
                "kind": serializers.CharField(),
                "job": serializers.UUIDField(),
                "fingerprint": serializers.CharField(),
                "created": serializers.DateTimeField(),
                "data": serializers.DictField(),
            },
        ),
    )
    def get(self, request: Request, campaign_id: uuid.UUID, kind: str) -> Response:
        campaign = campaign_for_organizer(request.user, campaign_id)
        if kind not in AnalysisResult.Kind.values:
            raise Http404(_("No such result."))
        result = AnalysisResult.objects.filter(campaign=campaign, kind=kind).first()
        if result is None:
            raise Http404(_("No analysis has finished yet."))
        names = NamesSerializer(data=request.query_params)
        names.is_valid(raise_exception=True)
        data = result_json(campaign=campaign, result=result, real_names=names.real_names)
        body: dict[str, Any] = {
            "kind": result.kind,
            "job": result.job_id,
            "fingerprint": result.fingerprint,
            "created": result.created,
            "data": data,
        }
        return Response(body)


class SegmentScoresView(APIView):
    """Sentence-level scores of one metric for every run, from the latest finished analysis:
    JSON, or CSV (``?output=csv``, one row per segment and run, streamed; ``format`` is DRF's)."""

    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        parameters=[
            OpenApiParameter("metric", str, required=True, description="e.g. bleu"),
            OpenApiParameter("output", str, required=False, enum=["json", "csv"]),
        ],
        responses=inline_serializer(
            "SegmentScores",
            {
                "metric": serializers.CharField(),
                "job": serializers.UUIDField(),
                "segments": serializers.ListField(child=serializers.DictField()),
                "runs": serializers.ListField(child=serializers.DictField()),
            },
        ),
    )
    def get(self, request: Request, campaign_id: uuid.UUID) -> Any:
        campaign = campaign_for_organizer(request.user, campaign_id)
        metric = request.query_params.get("metric", "")
        result = AnalysisResult.objects.filter(campaign=campaign, kind="metrics").first()
        if result is None:
            raise Http404(_("No analysis has finished yet."))
        known = sorted(
            SegmentScores.objects.filter(job_id=result.job_id)
            .values_list("metric", flat=True)
            .distinct()
        )
        # Checked against the stored names before any query uses it: a query-string value may
        # hold what PostgreSQL refuses in a text parameter (a NUL byte answered 500).
        if metric not in known:
            return Response(
                {"detail": _("Choose a metric: %(known)s.") % {"known": ", ".join(known)}},
                status=status.HTTP_400_BAD_REQUEST,
            )
        rows = list(
            SegmentScores.objects.filter(job_id=result.job_id, metric=metric)
            .select_related("run__system")
            .order_by("run__system__name", "run__position")
        )
        segments = list(
            Segment.objects.filter(campaign=campaign)
            .order_by("position")
            .values_list("position", "document__external_id", "external_id")
        )
        runs = [(row.run, load_array(row.data)) for row in rows]
        if request.query_params.get("output") == "csv":
            return _segment_csv(campaign.pk, metric, segments, runs)
        return Response(
            {
                "metric": metric,
                "job": result.job_id,
                "segments": [{"position": p, "document": d, "seg_id": s} for p, d, s in segments],
                "runs": [
                    {
                        "id": run.pk,
                        "system": run.system.name,
                        "run": run.name,
                        "scores": [None if not np.isfinite(v) else float(v) for v in scores],
                    }
                    for run, scores in runs
                ],
            }
        )


def _segment_csv(campaign_id: Any, metric: str, segments: list[Any], runs: list[Any]) -> Any:
    class Echo:
        def write(self, value: str) -> str:
            return value

    writer = csv.writer(Echo())

    def rows() -> Any:
        yield writer.writerow(["position", "doc_id", "seg_id", "system", "run", "metric", "score"])
        for run, scores in runs:
            for (position, doc, seg), value in zip(segments, scores, strict=True):
                yield writer.writerow(
                    [
                        position,
                        *(formula_safe(text) for text in (doc, seg, run.system.name, run.name)),
                        metric,
                        repr(float(value)),
                    ]
                )

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="segment-scores-{metric}-{campaign_id}.csv"'
    )
    return response
