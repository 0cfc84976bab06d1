"""A planned import checked as the annotation screens check what an annotator submits: each value
against its screen (a rank no larger than the outputs shown), and each error span as the submit
API checks it (annotation/protocols/spans.py): within its output's text or on the
missing-content marker, with a severity and category of the kind, the spans of one output of one
judgment not overlapping — also when several rows give them —, except in a layout whose raters
may mark several errors on the same words (``ParsedJudgments.spans_may_overlap``: Google's MQM
TSV). A layout may read its spans in its own way; none is stored that an annotator of that
layout's tool could not have given. Every problem names the row (or rows) in the file's terms."""

from __future__ import annotations

from typing import Any

from annotation.judgment_import.planned import _PlannedItem, _PlannedJudgment
from annotation.judgment_import.rows import BAD_REF, ImportRow, Problems
from annotation.protocols import Protocol
from annotation.protocols.spans import SpanProtocol, overlapping

PlannedJudgments = dict[tuple[str, str, Any], _PlannedJudgment]
PlannedTasks = dict[str, dict[Any, _PlannedItem]]


def bad_reference_spans_problem(row: ImportRow) -> str | None:
    """Why a bad reference's spans cannot be imported (None: it has none but an omission, or
    the row carries the degraded text it was shown — Appraise's batches give it —). Without
    that text its spans have nothing to sit on."""
    if row.type != BAD_REF or row.output_text:
        return None
    placed = any(start is not None for start, *_ in row.text_spans or ())
    if not placed and not any((start, end) != (0, 1) for start, end, *_ in row.spans or ()):
        return None
    return (
        "a BAD item (a bad reference) with error spans: its degraded text is not in the file, "
        "so the spans cannot be placed on it; leave the row, or its spans, out"
    )


def screen_values_refused(
    problems: Problems, protocol: Protocol, judgments: PlannedJudgments, tasks: PlannedTasks
) -> None:
    """Every value checked against its screen, as the kind sees it (a rank no larger than the
    number of outputs shown); the first problem is reported."""
    for judgment in judgments.values():
        n = len(tasks[judgment.task][judgment.item].outputs)
        for (_, criterion), value in judgment.values:
            problem = protocol.screen_value_problem(criterion, value, n)
            if problem is not None:
                problems.add(
                    None,
                    f"annotator {judgment.annotator} gave {problem} on item {judgment.item} "
                    f"of HIT {judgment.task}, which shows {n} outputs",
                )
                return


def spans_refused(
    problems: Problems,
    protocol: Protocol,
    judgments: PlannedJudgments,
    tasks: PlannedTasks,
    *,
    overlaps: bool = False,
) -> None:
    """Every output's spans checked as the submit API checks them (see the module); with
    ``overlaps``, spans of one output may overlap (a layout whose raters may mark several
    errors on the same words: Google's MQM TSV)."""
    for judgment in judgments.values():
        outputs = tasks[judgment.task][judgment.item].outputs
        for slot, spans in (judgment.spans or {}).items():
            lines = (judgment.span_lines or {})[slot]
            if not isinstance(protocol, SpanProtocol):
                problems.add(lines[0], f"error spans, but {protocol.key} judgments have none")
                continue
            _output_spans_refused(
                problems, protocol, spans, lines, len(outputs[slot].text), overlaps=overlaps
            )


def _output_spans_refused(
    problems: Problems,
    protocol: SpanProtocol,
    spans: tuple[tuple[int, int, str, str], ...],
    lines: tuple[int, ...],
    length: int,
    *,
    overlaps: bool,
) -> None:
    given: list[dict[str, Any]] = [
        {"start": start, "end": end, "severity": severity, "category": category, "line": line}
        for (start, end, severity, category), line in zip(spans, lines, strict=True)
    ]
    fine = True
    for span in given:
        as_submitted = {k: v for k, v in span.items() if k != "line" and (k != "category" or v)}
        problem = protocol.span_problem(as_submitted, length)
        if problem is not None:
            problems.add(span["line"], f"an error span: {problem}")
            fine = False
    if not fine or overlaps:
        return
    given.sort(key=lambda s: (s["start"], s["end"]))
    for before, after in overlapping(given):
        rows = (
            "both on this line"
            if before["line"] == after["line"]
            else f"lines {before['line']} and {after['line']}"
        )
        problems.add(
            after["line"],
            f"the spans at characters {before['start']}–{before['end']} and "
            f"{after['start']}–{after['end']} of one output overlap ({rows}); the spans of one "
            "output may not overlap",
        )
