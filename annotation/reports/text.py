"""Shared pieces of the report files: what a report's file format is, CSV text, content types
and the download file name."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.utils.functional import Promise
from django.utils.text import slugify

from annotation.reports.judgments import (
    float_text,
)
from evalsite.formatting import formula_safe

CSV_TYPE = "text/csv; charset=utf-8"
TSV_TYPE = "text/tab-separated-values; charset=utf-8"
JSONL_TYPE = "application/x-ndjson; charset=utf-8"
JSON_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class ReportFormat:
    """One file format of a report. A report lists its formats in one tuple beside its writers
    (``stream.JUDGMENT_FORMATS``, ``systems.SYSTEM_FORMATS``, ``spans.SPAN_FORMATS``); the
    pages' buttons, the URLs, the views and the API read them from
    annotation/reports/registry.py."""

    extension: str  # in the URL and the file's name
    label: str | Promise  # the download button's text
    content_type: str
    # The body: the report's own arguments → text or byte chunks (each report's tuple says).
    write: Callable[..., Any]
    title: str | Promise = ""  # the button's tooltip
    # A JSON body that is a list (Appraise's batches) rather than an object: the API's schema.
    json_array: bool = False
    # The protocol kinds whose judgments the format writes (empty: any): the pages offer it
    # only to a campaign with one of them.
    only_for: tuple[str, ...] = ()


def report_format(formats: Sequence[ReportFormat], extension: str) -> ReportFormat | None:
    """The format of ``formats`` with that extension; None for another."""
    return next((f for f in formats if f.extension == extension), None)


def extensions_text(formats: Sequence[ReportFormat]) -> str:
    """The extensions as a message lists them: "csv, tsv or jsonl"."""
    names = [f.extension for f in formats]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def csv_text(columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([cell_text(v) for v in row] for row in rows)
    return buffer.getvalue()


def download_disposition(campaign_name: str, report: str, extension: str) -> str:
    """The ``Content-Disposition`` of a download named ``<campaign>-<report>.<ext>``: the
    campaign's name as a slug of at most 40 characters, in ASCII for every client
    (``filename``, accents dropped: "Ärger" → "arger") and, when that lost letters, as written
    (``filename*``, RFC 6266: "ärger", "日本語")."""
    ascii_slug = slugify(campaign_name)[:40].strip("-_") or "campaign"
    unicode_slug = slugify(campaign_name, allow_unicode=True)[:40].strip("-_") or "campaign"
    disposition = f'attachment; filename="{ascii_slug}-{report}.{extension}"'
    if unicode_slug != ascii_slug:
        disposition += f"; filename*=utf-8''{quote(f'{unicode_slug}-{report}.{extension}')}"
    return disposition


def cell_text(value: Any) -> str:
    """One field of the small reports as text (same conventions as the judgment report: a text
    that begins like a spreadsheet formula is made safe, :func:`formula_safe`)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, str):
        return formula_safe(value)
    return str(value)
