"""Organizer downloads of the reports: judgments, systems and annotators, with the analysis page's
settings."""

from __future__ import annotations

import uuid
from typing import TypeVar

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from annotation.analysis.query import analysis_for, settings_from
from annotation.analysis.services import (
    annotator_pseudonyms_ensure,
)
from annotation.analysis.shown import PROVENANCE_HEADER, provenance
from annotation.permissions import campaign_for_organizer, organizer_required
from annotation.reports import annotators, judgments, stream
from annotation.reports import text as report_text
from annotation.reports.registry import REPORT_FORMATS

_Response = TypeVar("_Response", bound=HttpResponseBase)


def _download(response: _Response, disposition: str) -> _Response:
    response["Content-Disposition"] = disposition
    return response


@organizer_required
@require_safe
def campaign_report_judgments(
    request: HttpRequest, campaign_id: uuid.UUID, fmt: str
) -> HttpResponseBase:
    """The normalised judgment report (CSV, TSV or JSONL), streamed."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    chosen = report_text.report_format(REPORT_FORMATS["judgments"], fmt)
    if chosen is None:
        return HttpResponse(_("Unknown format."), status=404)
    _form, settings, real_names = settings_from(request, campaign)
    annotator_pseudonyms_ensure(campaign=campaign)
    response = StreamingHttpResponse(
        stream.judgment_report_stream(
            campaign=campaign, file_format=fmt, settings=settings, real_names=real_names
        ),
        content_type=chosen.content_type,
    )
    return _download(response, report_text.download_disposition(campaign.name, "judgments", fmt))


@organizer_required
@require_safe
def campaign_report_systems(request: HttpRequest, campaign_id: uuid.UUID, fmt: str) -> HttpResponse:
    """The system report (CSV, JSON or LaTeX)."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    chosen = report_text.report_format(REPORT_FORMATS["systems"], fmt)
    if chosen is None:
        return HttpResponse(_("Unknown format."), status=404)
    _form, settings, _real = settings_from(request, campaign)
    shown = analysis_for(campaign, settings)
    response = HttpResponse(chosen.write(shown), content_type=chosen.content_type)
    response[PROVENANCE_HEADER] = provenance(shown)
    return _download(response, report_text.download_disposition(campaign.name, "systems", fmt))


@organizer_required
@require_safe
def campaign_report_spans(request: HttpRequest, campaign_id: uuid.UUID, fmt: str) -> HttpResponse:
    """The error-span report (CSV, TSV, JSONL) or Google's MQM TSV."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    chosen = report_text.report_format(REPORT_FORMATS["spans"], fmt)
    if chosen is None:
        return HttpResponse(_("Unknown format."), status=404)
    _form, settings, real_names = settings_from(request, campaign)
    annotator_pseudonyms_ensure(campaign=campaign)
    labels = judgments.annotator_labels(campaign=campaign, real_names=real_names)
    response = HttpResponse(
        chosen.write(campaign=campaign, labels=labels, settings=settings),
        content_type=chosen.content_type,
    )
    return _download(response, report_text.download_disposition(campaign.name, "spans", fmt))


@organizer_required
@require_safe
def campaign_report_annotators(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """The annotator report (CSV)."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    _form, settings, real_names = settings_from(request, campaign)
    shown = analysis_for(campaign, settings)
    assert shown.analysis is not None
    labels = judgments.annotator_labels(campaign=campaign, real_names=real_names)
    response = HttpResponse(
        annotators.annotator_report_csv(shown.analysis, labels),
        content_type=report_text.CSV_TYPE,
    )
    response[PROVENANCE_HEADER] = provenance(shown)
    return _download(response, report_text.download_disposition(campaign.name, "annotators", "csv"))
