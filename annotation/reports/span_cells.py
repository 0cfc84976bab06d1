"""The error spans of the judgment report's rows: a ``spans`` list per row of a span kind (ESA,
MQM) in JSONL, one compact cell in CSV and TSV. A report reads them in bulk, one query per chunk
of rows that has rows of a span kind (never one per row), inside the report's snapshot.

The compact cell lists an output's spans in order of their start, separated by ``;``, each as
``start-end:severity`` with ``/category`` after it where the span has one:
``0-3:major/accuracy/mistranslation;29-30:minor/non-translation``. Offsets are code points of
the shown text, ``end`` exclusive, ``[length, length + 1)`` the missing-content marker. No key
holds ``;``, ``:``, ``,``, a quote or a tab, and a cell begins with a digit, so it is never
quoted nor taken for a spreadsheet formula. Empty: no spans, or a kind that has none (the row's
``protocol_type`` says which).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from django.db.models import F
from django.db.models.functions import Substr

from annotation.models import JudgmentSpan
from annotation.protocols import PROTOCOLS

# The marked text of a span over the missing-content marker (as the span report writes it).
MISSING = "[missing]"

# The spans of a chunk's judgments and the ids of the span configs.
Configured = tuple[Mapping[tuple[int, int], list[dict[str, Any]]], frozenset[int]]


def span_config_ids(configs: Mapping[int, tuple[str, str]]) -> frozenset[int]:
    """The ids of the configs (``{id: (name, protocol)}``) whose kind marks spans."""
    return frozenset(
        pk
        for pk, (_name, protocol) in configs.items()
        if protocol in PROTOCOLS and PROTOCOLS[protocol].marks_spans
    )


def spans_by_output(
    judgment_ids: Collection[int], *, with_text: bool
) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """The spans of these judgments by (judgment id, output id), in order of their start:
    ``{"start", "end", "severity", "category"}`` and, ``with_text``, the marked ``text`` (cut
    by the database, so that no whole output text travels; :data:`MISSING` for the marker)."""
    found: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    if not judgment_ids:
        return found
    rows = JudgmentSpan.objects.filter(judgment_id__in=list(judgment_ids)).order_by(
        "judgment_id", "output_id", "start"
    )
    columns = ["judgment_id", "output_id", "start", "end", "severity", "category"]
    if with_text:
        rows = rows.annotate(
            marked=Substr("output__text", F("start") + 1, F("end") - F("start")),
            beyond=F("text_length"),
        )
        columns += ["marked", "beyond"]
    for row in rows.values_list(*columns):
        span = {"start": row[2], "end": row[3], "severity": row[4], "category": row[5]}
        if with_text:
            span["text"] = MISSING if row[2] >= row[7] else row[6]
        found[(row[0], row[1])].append(span)
    return found


def row_spans(
    configs: Iterable[int],
    judgments: Iterable[int],
    outputs: Iterable[int],
    spans_of: Configured,
) -> list[list[dict[str, Any]] | None]:
    """Per row (its config, judgment and output): its spans, None for a kind without spans."""
    spans, with_spans = spans_of
    return [
        spans.get((judgment, output), []) if config in with_spans else None
        for config, judgment, output in zip(configs, judgments, outputs, strict=True)
    ]


def chunk_spans(
    configs: list[int], judgments: list[int], with_spans: frozenset[int], *, with_text: bool
) -> Configured:
    """The spans of a chunk's rows of span configs (no query when it has none)."""
    if not with_spans:
        return {}, with_spans
    ids = {j for c, j in zip(configs, judgments, strict=True) if c in with_spans}
    return spans_by_output(ids, with_text=with_text), with_spans


def span_cell(spans: list[dict[str, Any]] | None) -> str:
    """A row's spans as the compact cell of the module's docstring ("" for none)."""
    if not spans:
        return ""
    return ";".join(
        f"{s['start']}-{s['end']}:{s['severity']}" + (f"/{s['category']}" if s["category"] else "")
        for s in spans
    )
