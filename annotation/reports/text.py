"""Shared pieces of the report files: CSV text, content types and the download file name."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from django.utils.text import slugify

from annotation.reports.judgments import (
    float_text,
)
from evalsite.formatting import formula_safe

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json",
    "tex": "application/x-tex; charset=utf-8",
    "mqm.tsv": "text/tab-separated-values; charset=utf-8",
}


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
