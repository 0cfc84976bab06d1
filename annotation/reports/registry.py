"""The reports that come in several file formats, by the name their URLs and files carry: the
one list the views, the API and the pages' download buttons read. A report's formats are its
own module's tuple of :class:`~annotation.reports.text.ReportFormat`: a new format is one
entry there."""

from __future__ import annotations

from annotation.reports import spans, stream, systems
from annotation.reports.text import ReportFormat

REPORT_FORMATS: dict[str, tuple[ReportFormat, ...]] = {
    "judgments": stream.JUDGMENT_FORMATS,
    "systems": systems.SYSTEM_FORMATS,
    "spans": spans.SPAN_FORMATS,
}
