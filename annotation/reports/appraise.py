"""Appraise's ESA/MQM score export written from a campaign: the CSV of Appraise's
``ExportSystemScoresToCSV --batch-info`` for document-level ESA and MQM campaigns, which WMT's
tools read and :mod:`annotation.judgment_import.appraise_spans` imports, so that a campaign's
ESA and MQM judgments read back into EvalSite as they are (``docs/reports.md`` §4a).

One row per judged output of the campaign's ESA and MQM protocols, no header: annotator,
system (``REF`` for a reference), the segment's line (Appraise's item id, from 1), item type
(TGT, CHK, BAD, REF), source and target language, score (MQM's: the negated weighted sum),
``document#system``, ``False`` (not a whole document), the spans as Appraise's page writes
them — UTF-16 units of the trimmed text, the end inclusive, ``"missing"`` for the
missing-content marker, ``error_type`` null in ESA and in MQM the Appraise path the import
reads back as the span's category (``appraise_spans.ERROR_TYPE``) — the start and end of the
screen (Unix seconds), the batch number (:func:`appraise_shown`; the batches are
``appraise_batches.py``) and the item's id in the campaign. A merged identical output has a row
per system credited with it (Appraise's rows are per system). The layout has no runs, and the
import reads every row as the system's first run: rows of later runs are left out. Names are
written formula-safe and reversibly (``google_cell``), as in Google's MQM TSV. After the
segment rows, one whole-document row (``True``, no spans) per document score
(``appraise_documents.py``).
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db.models import Q

from annotation.analysis.settings import AnalysisSettings
from annotation.judgment_import.appraise_spans import ERROR_TYPE
from annotation.judgment_import.mqm_tsv import google_cell
from annotation.models import (
    Campaign,
    ItemKind,
    JudgmentSpan,
    JudgmentValue,
)
from annotation.protocols.esa import ESA, ESA_SCORE
from annotation.protocols.mqm import MQM, MQM_SCORE
from annotation.reports.appraise_documents import appraise_document_rows
from annotation.reports.appraise_shown import (
    APPRAISE_TYPE,
    Shown,
    appraise_configs,
    appraise_shown,
    screen_start,
)
from annotation.reports.judgments import float_text

MISSING = "missing"

_VALUE_FIELDS = (
    "judgment_id",
    "judgment__item_id",
    "judgment__item__task__config_id",
    "output_id",
    "value",
    "judgment__annotator_id",
    "output__kind",
    "judgment__item__segment__position",
    "judgment__item__segment__document__external_id",
    "judgment__shown_at",
    "judgment__submitted_at",
    "judgment__seconds",
    "output__text",
)


def appraise_spans(text: str, spans: list[tuple[int, int, str, str]]) -> list[dict[str, Any]]:
    """EvalSite's spans on ``text`` (code points, end exclusive, ``[len, len + 1)`` the
    marker; severity and MQM category, "" in ESA) as Appraise writes them: UTF-16 units of the
    trimmed text, the end inclusive, the category as Appraise's ``error_type`` path (null in
    ESA). A span on whitespace around the text, which Appraise's page cannot mark, is written
    on the nearest characters of the trimmed text."""
    shown = text.strip()
    lead = len(text) - len(text.lstrip())
    units = [0]
    for character in shown:
        units.append(units[-1] + (2 if ord(character) > 0xFFFF else 1))
    written = []
    for start, end, severity, category in spans:
        if start >= len(text) or not shown:
            offsets: tuple[Any, Any] = (MISSING, MISSING)
        else:
            first = min(max(start - lead, 0), len(shown) - 1)
            after = min(max(end - lead, first + 1), len(shown))
            offsets = (units[first], units[after] - 1)
        written.append(
            {
                "start_i": offsets[0],
                "end_i": offsets[1],
                "severity": severity,
                "error_type": ERROR_TYPE[category] if category else None,
            }
        )
    return written


def _unix(moment: datetime) -> str:
    return repr(moment.timestamp())


def _spans(configs: list[int]) -> dict[tuple[int, int], list[tuple[int, int, str, str]]]:
    """Per (judgment, output) of the configs: its spans, in order of their start."""
    spans: dict[tuple[int, int], list[tuple[int, int, str, str]]] = defaultdict(list)
    for judgment, output, start, end, severity, category in (
        JudgmentSpan.objects.filter(judgment__item__task__config__in=configs)
        .order_by("start", "end", "id")
        .values_list("judgment_id", "output_id", "start", "end", "severity", "category")
    ):
        spans[(judgment, output)].append((start, end, severity, category))
    return spans


def _document_rows(
    campaign: Campaign,
    configs: list[int],
    shown: list[Shown],
    labels: dict[int, str],
    apart: dict[int, str],
    languages: list[str],
) -> list[list[str]]:
    """The whole-document rows: one per document judgment (``appraise_documents.py``)."""
    rows = []
    for document in appraise_document_rows(campaign=campaign, configs=configs, shown=shown):
        name = labels.get(document.annotator, str(document.annotator)) + apart[document.config]
        whole = document.shown
        rows.append(
            [
                google_cell(name),
                google_cell(whole.system),
                str(whole.item_id),
                APPRAISE_TYPE[whole.kind],
                *languages,
                str(document.score),
                google_cell(f"{whole.document}#{whole.system}"),
                "True",
                "[]",
                _unix(document.start),
                _unix(document.end),
                str(whole.batch),
                str(document.screen),
            ]
        )
    return rows


def appraise_rows(*, campaign: Campaign, labels: dict[int, str]) -> list[list[str]]:
    """The export's rows (see the module), in protocol, task, item and output order."""
    names = appraise_configs(campaign)
    # The layout has one judgment per annotator, system and item: the annotators of every ESA
    # config after the first are named apart, so that each judgment reads back as its own.
    apart = {pk: f"@{name}" if n else "" for n, (pk, name) in enumerate(names)}
    configs = list(apart)
    spans = _spans(configs)
    shown_of: dict[int, list[Shown]] = defaultdict(list)
    every_shown = appraise_shown(campaign=campaign, configs=configs)
    for shown in every_shown:
        shown_of[shown.output].append(shown)
    languages = [google_cell(campaign.source_language), google_cell(campaign.target_language)]
    values = (
        JudgmentValue.objects.filter(
            Q(judgment__item__task__config__protocol=ESA, criterion=ESA_SCORE.key)
            | Q(judgment__item__task__config__protocol=MQM, criterion=MQM_SCORE.key),
            judgment__item__task__config__in=configs,
        )
        .order_by(
            "judgment__item__task__config_id",
            "judgment__item__task__position",
            "judgment__item__position",
            "output__position",
            "judgment__annotator_id",
        )
        .values_list(*_VALUE_FIELDS)
    )
    rows = []
    for values_row in values:
        row = dict(zip(_VALUE_FIELDS, values_row, strict=True))
        end = row["judgment__submitted_at"]
        start = screen_start(row["judgment__shown_at"], end, row["judgment__seconds"])
        key = (row["judgment_id"], row["output_id"])
        marked = json.dumps(appraise_spans(row["output__text"], spans.get(key, [])))
        annotator = row["judgment__annotator_id"]
        name = labels.get(annotator, str(annotator)) + apart[row["judgment__item__task__config_id"]]
        kind = ItemKind(row["output__kind"])
        document = row["judgment__item__segment__document__external_id"]
        rows += [
            [
                google_cell(name),
                google_cell(shown.system),
                str(row["judgment__item__segment__position"] + 1),
                APPRAISE_TYPE[kind],
                *languages,
                float_text(row["value"]),
                google_cell(f"{document}#{shown.system}"),
                "False",
                marked,
                _unix(start),
                _unix(end),
                str(shown.batch),
                str(row["judgment__item_id"]),
            ]
            for shown in shown_of[row["output_id"]]
        ]
    rows += _document_rows(campaign, configs, every_shown, labels, apart, languages)
    return rows


def appraise_esa_csv(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """The export as one CSV text (``csv.writer``, as Appraise writes it)."""
    del settings  # every judgment, as Appraise exports them
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(
        appraise_rows(campaign=campaign, labels=labels)
    )
    return buffer.getvalue()
