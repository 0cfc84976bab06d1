"""REST API of the reports: the judgment, system and annotator files, with the analysis API's
settings."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from annotation.analysis.query import CampaignAPIView
from annotation.analysis.serializers import SETTINGS_PARAMETERS
from annotation.analysis.services import (
    annotator_pseudonyms_ensure,
)
from annotation.analysis.shown import PROVENANCE_HEADER, provenance
from annotation.reports import annotators, judgments, spans, stream, systems
from annotation.reports import text as report_text


class DownloadRenderer(BaseRenderer):
    """Lets any Accept header through to views that answer with a file of their own."""

    media_type = "*/*"
    format = "download"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        # Only error responses reach a renderer (files are HttpResponses): send them as JSON,
        # and say so (DRF would name this renderer's "*/*").
        if renderer_context is not None and "response" in renderer_context:
            renderer_context["response"]["Content-Type"] = "application/json"
        return json.dumps(data).encode()


def _format_parameter(formats: tuple[str, ...]) -> OpenApiParameter:
    return OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(formats))


def _file_responses(formats: tuple[str, ...]) -> dict[Any, Any]:
    """A report file in each of its formats' media types (without charset, as OpenAPI keys)."""
    types = {report_text.CONTENT_TYPES[f].split(";")[0] for f in formats}
    return {
        (200, media_type): OpenApiTypes.OBJECT
        if media_type == "application/json"
        else OpenApiTypes.BINARY
        for media_type in sorted(types)
    }


class JudgmentReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter(stream.JUDGMENT_FORMATS)],
        responses=_file_responses(stream.JUDGMENT_FORMATS),
        description="The normalised judgment report, streamed: fmt is csv, tsv or jsonl.",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        if fmt not in stream.JUDGMENT_FORMATS:
            raise NotFound("Unknown format: use csv, tsv or jsonl.")
        settings, serializer = self.chosen_settings(request, campaign)
        annotator_pseudonyms_ensure(campaign=campaign)
        response = StreamingHttpResponse(
            stream.judgment_report_stream(
                campaign=campaign,
                file_format=fmt,
                settings=settings,
                real_names=serializer.real_names,
            ),
            content_type=report_text.CONTENT_TYPES[fmt],
        )
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "judgments", fmt
        )
        return response


class SystemReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter(systems.SYSTEM_FORMATS)],
        responses=_file_responses(systems.SYSTEM_FORMATS),
        description="The system report: fmt is csv, json or tex (LaTeX tables).",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        if fmt not in systems.SYSTEM_FORMATS:
            raise NotFound("Unknown format: use csv, json or tex.")
        shown = self.analysis(campaign, self.chosen_settings(request, campaign)[0])
        response = HttpResponse(
            systems.system_report_body(shown, fmt), content_type=report_text.CONTENT_TYPES[fmt]
        )
        response[PROVENANCE_HEADER] = provenance(shown)
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "systems", fmt
        )
        return response


class SpanReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter(spans.SPAN_FORMATS)],
        responses=_file_responses(spans.SPAN_FORMATS),
        description="The error spans of the campaign's ESA and MQM protocols, one row per span: "
        "fmt is csv, tsv or jsonl; mqm.tsv is Google's MQM TSV (system, doc, doc_id, seg_id, "
        "rater, source, target with the span marked <v>…</v>, category, severity; a judged "
        "output without errors is one No-error row).",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        if fmt not in spans.SPAN_FORMATS:
            raise NotFound("Unknown format: use csv, tsv, jsonl or mqm.tsv.")
        serializer = self.read_settings(request)
        annotator_pseudonyms_ensure(campaign=campaign)
        labels = judgments.annotator_labels(campaign=campaign, real_names=serializer.real_names)
        response = HttpResponse(
            spans.span_report_body(campaign=campaign, labels=labels, file_format=fmt),
            content_type=report_text.CONTENT_TYPES[fmt],
        )
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "spans", fmt
        )
        return response


class AnnotatorReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=SETTINGS_PARAMETERS,
        responses={(200, "text/csv"): OpenApiTypes.BINARY},
        description="The annotator report (QC, repeats, time on task) as CSV.",
    )
    def get(self, request: Request, campaign_id: Any) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        settings, serializer = self.chosen_settings(request, campaign)
        shown = self.analysis(campaign, settings)
        assert shown.analysis is not None
        labels = judgments.annotator_labels(campaign=campaign, real_names=serializer.real_names)
        response = HttpResponse(
            annotators.annotator_report_csv(shown.analysis, labels),
            content_type=report_text.CONTENT_TYPES["csv"],
        )
        response[PROVENANCE_HEADER] = provenance(shown)
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "annotators", "csv"
        )
        return response
