"""Imported error spans: a planned judgment's spans added to its stored answer and written as
``JudgmentSpan`` rows (the shown text's length with each, as the database check wants)."""

from __future__ import annotations

from typing import Any

from annotation.judgment_import.planned import _PlannedItem, _PlannedJudgment
from annotation.models import JudgmentSpan
from evalsite.db.bulk import insert_rows

SPAN_COLUMNS = ("judgment", "output", "start", "end", "text_length", "severity", "category")


def planned_spans(
    judgment_id: int,
    planned: _PlannedJudgment,
    item: _PlannedItem,
    answer: dict[str, dict[str, Any]],
) -> list[tuple[Any, ...]]:
    """Put the judgment's spans on ``item`` (stored) in its ``answer`` (by output id) and
    return their rows."""
    rows: list[tuple[Any, ...]] = []
    for slot, spans in (planned.spans or {}).items():
        output = item.outputs[slot].id
        length = len(item.outputs[slot].text)
        answer.setdefault(str(output), {})["spans"] = [
            {"start": s, "end": e, "severity": severity, "category": category}
            for s, e, severity, category in spans
        ]
        rows += [(judgment_id, output, s, e, length, sev, cat) for s, e, sev, cat in spans]
    return rows


def spans_insert(rows: list[tuple[Any, ...]]) -> None:
    if rows:
        insert_rows(JudgmentSpan, SPAN_COLUMNS, rows)
