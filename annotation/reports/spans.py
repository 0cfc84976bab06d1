"""The error-span report: one row per span of the campaign's span protocols (ESA, MQM), as CSV,
TSV or JSONL, and Google's MQM TSV (the layout of Freitag et al.'s released MQM annotations).

Rows come from ``JudgmentSpan`` in one query (and the judgments' stored answers in one more,
for the weight each span's score counted: MQM's); offsets are code points of the shown text, and
``[length, length + 1)`` is the missing-content marker (``text`` "[missing]"). Annotators are
named by pseudonym unless the organizer asks for usernames. A span names its output as the
judgment report names it (``task``, ``item``, ``output``, ``item_type``, ``merged``), so the two
downloads join on those columns; a span of a merged identical output is listed under every
system credited with it, as the judgment report lists the answer (``annotation.reports.merged``).
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.analysis.documents import ITEM_TYPES
from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.span_rule import span_annotators_left_out, span_counts
from annotation.analysis.tables import ITEM_TYPE_NAMES
from annotation.judgment_import.mqm_tsv import (
    MQM_COLUMNS,
    campaign_keeps_google_ids,
    google_category,
    google_cell,
)
from annotation.models import (
    Campaign,
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    Judgment,
    JudgmentSpan,
    ProtocolConfig,
)
from annotation.protocols import PROTOCOLS, Protocol
from annotation.protocols.mqm import MQM
from annotation.reports.appraise import appraise_esa_csv
from annotation.reports.appraise_batches import appraise_batches_json
from annotation.reports.merged import campaign_credits, is_real_kind
from annotation.reports.span_cells import MISSING
from annotation.reports.text import (
    CSV_TYPE,
    JSON_TYPE,
    JSONL_TYPE,
    TSV_TYPE,
    ReportFormat,
    cell_text,
)
from evalsite.formatting import FORMULA_STARTS, formula_safe

SPAN_COLUMNS = (
    "protocol",
    "task",
    "item",
    "output",
    "document",
    "segment",
    "system",
    "run",
    "merged",
    "annotator",
    "item_type",
    "start",
    "end",
    "severity",
    "category",
    "weight",
    "included",
    "text",
)

# Google's MQM TSV: one row per error, a judged output without errors as one "No-error" row;
# the error's span marked with <v>…</v> in the target.
MQM_TSV_COLUMNS = MQM_COLUMNS
NO_ERROR = "No-error"


def _span_configs(campaign: Campaign) -> dict[int, Protocol]:
    """The campaign's configs of span kinds, each with its kind as the config runs it."""
    return {
        c.pk: c.definition
        for c in ProtocolConfig.objects.filter(campaign=campaign)
        if c.protocol in PROTOCOLS and PROTOCOLS[c.protocol].marks_spans
    }


def _stored_answers(configs: dict[int, Protocol]) -> dict[int, tuple[Protocol, dict[str, Any]]]:
    """Per judgment of the configs: its kind and its stored answer (with MQM's weights)."""
    return {
        judgment: (configs[config], answer)
        for judgment, config, answer in Judgment.objects.filter(
            item__task__config__in=list(configs)
        ).values_list("pk", "item__task__config_id", "answer")
    }


# The span rows' fields, by the names the loop below reads, in the judgment report's order.
_SPAN_FIELDS = {
    "config": "judgment__item__task__config__name",
    "judgment": "judgment_id",
    "task": "judgment__item__task__position",
    "item": "judgment__item__position",
    "position": "output__position",
    "document": "output__item__segment__document__external_id",
    "segment": "output__item__segment__external_id",
    "system": "output__system__name",
    "run": "output__run__name",
    "annotator": "judgment__annotator_id",
    "config_id": "judgment__item__task__config_id",
    "kind": "output__kind",
    "output": "output_id",
    "start": "start",
    "end": "end",
    "severity": "severity",
    "category": "category",
    "text": "output__text",
    "length": "text_length",
}
_SPAN_ORDER = (
    "judgment__item__task__config__created",
    "judgment__item__task__config_id",
    "judgment__item__task__position",
    "judgment__item__position",
    "output__position",
    "judgment__annotator_id",
    "judgment_id",
    "start",
    "id",
)


def span_rows(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> list[dict[str, Any]]:
    """Every span of the campaign's span protocols, in the judgment report's order (protocol,
    task, item, output, annotator), with the weight its judgment's score gave it (None for a
    kind without weights) and whether it counts in the span statistics under ``settings``
    (``included``, :mod:`annotation.analysis.span_rule`; the campaign's analysis setting
    unless given); a merged output's span once more
    after it for each credited system, every such row carrying the shown output's id in
    ``merged``."""
    configs = _span_configs(campaign)
    if settings is None:
        settings = campaign_analysis_settings(campaign=campaign)
    left_out = span_annotators_left_out(campaign=campaign, settings=settings)
    answers = _stored_answers(configs)
    credits = campaign_credits(campaign=campaign)
    spans = (
        JudgmentSpan.objects.filter(judgment__item__task__config__in=list(configs))
        .order_by(*_SPAN_ORDER)
        .values_list(*_SPAN_FIELDS.values())
    )
    found = []
    for values in spans:
        span: dict[str, Any] = dict(zip(_SPAN_FIELDS, values, strict=True))
        protocol, answer = answers[span["judgment"]]
        output, start, severity, category = (
            span["output"],
            span["start"],
            span["severity"],
            span["category"],
        )
        shared = credits.get(output, []) if is_real_kind(span["kind"]) else []
        row = {
            "protocol": span["config"],
            "task": span["task"] + 1,
            "item": span["item"] + 1,
            "output": span["position"] + 1,
            "document": span["document"],
            "segment": span["segment"],
            "system": span["system"] or "",
            "run": span["run"] or "",
            "merged": output if shared else None,
            "annotator": labels.get(span["annotator"], str(span["annotator"])),
            "item_type": ITEM_TYPE_NAMES[int(ITEM_TYPES[ItemKind(span["kind"])])],
            "start": start,
            "end": span["end"],
            "severity": severity,
            "category": category,
            "weight": protocol.span_weight(answer.get(str(output), {}), severity, category),
            "included": span_counts(
                kind=span["kind"],
                annotator=span["annotator"],
                left_out=left_out.get(span["config_id"], frozenset()),
            ),
            "text": MISSING if start >= span["length"] else span["text"][start : span["end"]],
        }
        found.append(row)
        found += [{**row, "system": name, "run": run} for name, run in shared]
    return found


def span_report_jsonl(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """The span rows as JSON lines."""
    rows = span_rows(campaign=campaign, labels=labels, settings=settings)
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def span_report_tsv(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """The span rows as TSV: texts made safe for spreadsheets, without tabs or line breaks in
    a field."""
    buffer = io.StringIO()
    buffer.write("\t".join(SPAN_COLUMNS) + "\n")
    for row in span_rows(campaign=campaign, labels=labels, settings=settings):
        buffer.write("\t".join(_tsv(cell_text(row[c])) for c in SPAN_COLUMNS) + "\n")
    return buffer.getvalue()


def span_report_csv(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """The span rows as CSV, texts made safe for spreadsheets."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SPAN_COLUMNS)
    rows = span_rows(campaign=campaign, labels=labels, settings=settings)
    writer.writerows([cell_text(row[c]) for c in SPAN_COLUMNS] for row in rows)
    return buffer.getvalue()


def span_report_mqm_tsv(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """Google's MQM TSV (:func:`mqm_tsv`) in one text: every rater's rows, as Google releases
    them (the analysis settings leave nobody out here)."""
    del settings
    return "".join(mqm_tsv(campaign=campaign, labels=labels))


def _tsv(text: str) -> str:
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _target_cell(text: str, marked: str) -> str:
    """The target with its error marked, behind an apostrophe when the text begins like a
    formula (:func:`formula_safe`), marked at its start or not: every row of one output then
    carries the same text, which the import confirms against the campaign's
    (:func:`annotation.judgment_import.text_spans.texts_unneutralised`)."""
    return "'" + _tsv(marked) if text.startswith(FORMULA_STARTS) else _tsv(marked)


def _judged_outputs(
    campaign: Campaign, configs: list[int], credited: dict[int, list[str]]
) -> dict[int, list[tuple[int, str, str, int, str, str, str]]]:
    """Per item, its real outputs as :func:`mqm_tsv` writes them: (output, system, document,
    place in the document, seg_id, source, text), once for every system credited with it."""
    # seg_id: the line in the test set, or Google's own where the campaign was built from
    # Google's release (so that its files read back onto it).
    google_ids = campaign_keeps_google_ids(campaign)
    outputs: dict[int, list[tuple[int, str, str, int, str, str, str]]] = defaultdict(list)
    for item, pk, system, document, in_document, position, external, source, text in (
        ItemOutput.objects.filter(item__task__config__in=configs, kind="real")
        .order_by("item_id", "position")
        .values_list(
            "item_id",
            "pk",
            "system__name",
            "item__segment__document__external_id",
            "item__segment__position_in_document",
            "item__segment__position",
            "item__segment__external_id",
            "item__segment__source",
            "text",
        )
    ):
        segment = external if google_ids else str(position + 1)
        for name in (system, *credited.get(pk, ())):
            outputs[item].append((pk, name, document, in_document, segment, source, text))
    return outputs


def mqm_tsv(*, campaign: Campaign, labels: dict[int, str]) -> Iterator[str]:
    """Google's MQM TSV of the campaign's MQM protocols' judgments of system outputs (QC copies
    and references left out): per judged output, its errors (severity and category as Google
    writes them) with the span marked in the target, or one "No-error" row."""
    # The layout has one judgment per rater, system and segment: the raters of every MQM config
    # after the first are named apart, so that each judgment reads back as its own.
    names = campaign.protocols.filter(protocol=MQM).order_by("pk").values_list("pk", "name")
    apart = {pk: f"@{name}" if n else "" for n, (pk, name) in enumerate(names)}
    configs = list(apart)
    spans: dict[tuple[int, int], list[tuple[int, int, str, str]]] = defaultdict(list)
    for judgment, output, start, end, severity, category in JudgmentSpan.objects.filter(
        judgment__item__task__config__in=configs
    ).values_list("judgment_id", "output_id", "start", "end", "severity", "category"):
        spans[(judgment, output)].append((start, end, severity, category))
    # Google's rows are per system: a merged output's errors are written for every system
    # that produced its text.
    credited: dict[int, list[str]] = defaultdict(list)
    for output, name in (
        ItemOutputCredit.objects.filter(output__item__task__config__in=configs)
        .order_by("output_id", "system__name")
        .values_list("output_id", "system__name")
    ):
        credited[output].append(name)
    outputs = _judged_outputs(campaign, configs, credited)
    yield "\t".join(MQM_TSV_COLUMNS) + "\n"
    judged = (
        Judgment.objects.filter(item__task__config__in=configs)
        .order_by("item__segment__position", "item_id", "annotator_id")
        .values_list("pk", "item_id", "annotator_id", "item__task__config_id")
    )
    for judgment, item, annotator, config in judged:
        rater = labels.get(annotator, str(annotator)) + apart[config]
        for pk, system, document, in_document, segment, source, text in outputs.get(item, ()):
            base = [
                google_cell(_tsv(system)),
                google_cell(_tsv(document)),
                str(in_document + 1),
                segment,
                google_cell(_tsv(rater)),
                formula_safe(_tsv(source)),
            ]
            errors = sorted(spans.get((judgment, pk), ()))
            if not errors:
                yield "\t".join([*base, formula_safe(_tsv(text)), NO_ERROR, NO_ERROR]) + "\n"
            for start, end, severity, category in errors:
                marked = (
                    text
                    if start >= len(text)
                    else text[:start] + "<v>" + text[start:end] + "</v>" + text[end:]
                )
                yield (
                    "\t".join(
                        [
                            *base,
                            _target_cell(text, marked),
                            google_category(category),
                            severity.capitalize(),
                        ]
                    )
                    + "\n"
                )


# The span report's formats: each writes the body from (campaign, labels) as text.
SPAN_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("csv", "CSV", CSV_TYPE, span_report_csv),
    ReportFormat("tsv", "TSV", TSV_TYPE, span_report_tsv),
    ReportFormat("jsonl", "JSONL", JSONL_TYPE, span_report_jsonl),
    ReportFormat(
        "mqm.tsv",
        "MQM TSV",
        TSV_TYPE,
        span_report_mqm_tsv,
        title=_("Google’s MQM TSV"),
        only_for=(MQM,),
    ),
    # Appraise's ESA/MQM score export (ExportSystemScoresToCSV --batch-info).
    ReportFormat("appraise.csv", "Appraise CSV", CSV_TYPE, appraise_esa_csv),
    # Its batches (the texts shown): with the CSV, a new campaign reads everything back.
    ReportFormat(
        "appraise-batches.json",
        "Appraise batches",
        JSON_TYPE,
        appraise_batches_json,
        title=_("Appraise’s batches: with the Appraise CSV they build a campaign again"),
        json_array=True,
    ),
)
