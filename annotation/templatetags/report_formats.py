"""The reports' file formats for the pages' download buttons: ``{% load report_formats %}``
then ``{% report_formats "systems" as formats %}`` (annotation/reports/registry.py lists
them); ``templates/annotation/_report_buttons.html`` draws one report's buttons."""

from __future__ import annotations

from django import template

from annotation.reports import registry
from annotation.reports.text import ReportFormat

register = template.Library()


@register.simple_tag
def report_formats(report: str) -> tuple[ReportFormat, ...]:
    return registry.REPORT_FORMATS[report]
