"""REST API of the reports: the judgment, system and annotator files, with the analysis API's
settings."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.plumbing import build_array_type, build_basic_type
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
from annotation.reports import annotators, judgments, stream
from annotation.reports import text as report_text
from annotation.reports.registry import REPORT_FORMATS
from annotation.reports.text import ReportFormat


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


def _format_parameter(report: str) -> OpenApiParameter:
    extensions = [f.extension for f in REPORT_FORMATS[report]]
    return OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=extensions)


def _file_responses(report: str) -> dict[Any, Any]:
    """A report file in each of its formats' media types (without charset, as OpenAPI keys)."""
    types = {f.content_type.split(";")[0] for f in REPORT_FORMATS[report]}
    arrays = any(f.json_array for f in REPORT_FORMATS[report])
    an_object = build_basic_type(OpenApiTypes.OBJECT)
    assert an_object is not None
    return {
        (200, media_type): (build_array_type(an_object) if arrays else OpenApiTypes.OBJECT)
        if media_type == "application/json"
        else OpenApiTypes.BINARY
        for media_type in sorted(types)
    }


def _chosen(report: str, extension: str) -> ReportFormat:
    """The report's format with that extension; 404 naming the report's formats for another."""
    chosen = report_text.report_format(REPORT_FORMATS[report], extension)
    if chosen is None:
        raise NotFound(
            f"Unknown format: use {report_text.extensions_text(REPORT_FORMATS[report])}."
        )
    return chosen


class JudgmentReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter("judgments")],
        responses=_file_responses("judgments"),
        description="The normalised judgment report, streamed: fmt is csv, tsv or jsonl.",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponseBase:
        campaign = self.campaign(request, campaign_id)
        chosen = _chosen("judgments", fmt)
        settings, serializer = self.chosen_settings(request, campaign)
        annotator_pseudonyms_ensure(campaign=campaign)
        response = StreamingHttpResponse(
            stream.judgment_report_stream(
                campaign=campaign,
                file_format=fmt,
                settings=settings,
                real_names=serializer.real_names,
            ),
            content_type=chosen.content_type,
        )
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "judgments", fmt
        )
        return response


class SystemReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter("systems")],
        responses=_file_responses("systems"),
        description="The system report: fmt is csv, json or tex (LaTeX tables).",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        chosen = _chosen("systems", fmt)
        shown = self.analysis(campaign, self.chosen_settings(request, campaign)[0])
        response = HttpResponse(chosen.write(shown), content_type=chosen.content_type)
        response[PROVENANCE_HEADER] = provenance(shown)
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "systems", fmt
        )
        return response


class SpanReportView(CampaignAPIView):
    renderer_classes = [DownloadRenderer, JSONRenderer]

    @extend_schema(
        parameters=[*SETTINGS_PARAMETERS, _format_parameter("spans")],
        responses=_file_responses("spans"),
        description="The error spans of the campaign's ESA and MQM protocols, one row per span: "
        "fmt is csv, tsv or jsonl; mqm.tsv is Google's MQM TSV (system, doc, doc_id, seg_id, "
        "rater, source, target with the span marked <v>…</v>, category, severity; a judged "
        "output without errors is one No-error row); appraise.csv is Appraise's ESA/MQM score "
        "export and appraise-batches.json its batches (together they build a campaign again).",
    )
    def get(self, request: Request, campaign_id: Any, fmt: str) -> HttpResponse:
        campaign = self.campaign(request, campaign_id)
        chosen = _chosen("spans", fmt)
        settings, serializer = self.chosen_settings(request, campaign)
        annotator_pseudonyms_ensure(campaign=campaign)
        labels = judgments.annotator_labels(campaign=campaign, real_names=serializer.real_names)
        response = HttpResponse(
            chosen.write(campaign=campaign, labels=labels, settings=settings),
            content_type=chosen.content_type,
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
            content_type=report_text.CSV_TYPE,
        )
        response[PROVENANCE_HEADER] = provenance(shown)
        response["Content-Disposition"] = report_text.download_disposition(
            campaign.name, "annotators", "csv"
        )
        return response
