"""The reports' file formats for the pages' download buttons: ``{% load report_formats %}``
then ``{% report_formats "systems" kinds as formats %}`` (``kinds`` may be empty;
annotation/reports/registry.py lists them); ``templates/annotation/_report_buttons.html``
draws one report's buttons."""

from __future__ import annotations

from collections.abc import Collection

from django import template

from annotation.reports import registry
from annotation.reports.text import ReportFormat

register = template.Library()


@register.simple_tag
def report_formats(report: str, kinds: Collection[str] = ()) -> tuple[ReportFormat, ...]:
    """``report``'s formats; with ``kinds`` (the campaign's protocol kinds), only those
    that a kind among them writes (Google's MQM TSV only for MQM)."""
    formats = registry.REPORT_FORMATS[report]
    if not kinds:
        return formats
    return tuple(f for f in formats if not f.only_for or set(f.only_for) & set(kinds))
