"""WMT DA segment ids placed on the campaign's segments, by a numbering convention that the
import checks against what the file carries.

A WMT DA file carries no text, so nothing shows a misplaced row: every system mean stays right
while each judgment sits on another segment. Two conventions are known:

- ``upload``: the line number in the test set as the campaign uploaded it (from ``line_base``);
  a structured sid's document is the n-th document of the upload.
- ``sorted``: the position after sorting the documents by id (as strings, ``doc_10`` before
  ``doc_2``), the segments of a document in their order. The WMT21 Flores release numbers so:
  its sids read ``<pair>-<batch>-<document>-<id>.<segment>_<segment>``, the document counted
  from 1 in that order, the segment from 1 within it.

The convention is applied here (the rows' segments become lines of the uploaded test set), so the
test set need not be uploaded in any order. Checks: every sid must fall inside the test set (a
structured one inside its document); and a file whose workers judged whole documents shows it
under the right convention (a system's judged segments of a document cover it exactly), which
the wrong one breaks. ``auto`` applies a convention only when the evidence singles it out.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import MAX_PROBLEMS, UploadError, UploadProblem
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import (
    MAX_LINE_NUMBER_DIGITS,
    SYSTEM,
    ImportRow,
    ParsedJudgments,
    is_line_number,
)
from annotation.models import Campaign, JudgmentImport, Segment

NUMBERING_AUTO = "auto"

NUMBERING_UPLOAD = "upload"

NUMBERING_SORTED = "sorted"

CONVENTIONS = (NUMBERING_UPLOAD, NUMBERING_SORTED)

SEGMENT_NUMBERINGS = (NUMBERING_AUTO, *CONVENTIONS)

NUMBERING_LABELS = {
    NUMBERING_AUTO: _("Detect (refused when the file does not single one out)"),
    NUMBERING_UPLOAD: _("Line number in the test set as uploaded"),
    NUMBERING_SORTED: _("Position after sorting the documents by id (WMT21 DA)"),
}

# WMT21's sids: <pair>-<batch>-<document>-<unique id>.<segment>_<segment>, both counted from 1.
STRUCTURED_SID = re.compile(r"^[A-Za-z]+-[A-Za-z]+-\d+-(\d{1,9})-\d+\.(\d{1,9})_\d+$")

# Whole documents judged: the share of (worker, HIT, system, document) groups whose segments
# cover their document exactly. At least CONFIRMED confirms a convention; under REFUTED, with
# the other convention confirmed, refutes it.
CONFIRMED = 0.9

REFUTED = 0.5


def segment_numbering_choices() -> list[tuple[str, Any]]:
    return [(key, NUMBERING_LABELS[key]) for key in SEGMENT_NUMBERINGS]


@dataclass
class _Reading:
    """The rows read under one convention: each row's segment position (None: outside)."""

    key: str
    positions: list[int | None]
    whole: int  # groups covering their document exactly
    groups: int

    @property
    def outside(self) -> int:
        return sum(p is None for p in self.positions)

    @property
    def whole_share(self) -> float:
        return self.whole / self.groups if self.groups else 0.0

    def describe(self) -> str:
        return (
            f"{self.key}: {self.outside} rows outside the test set, {self.whole} of "
            f"{self.groups} judged documents covered exactly"
        )


def wmt_segments_apply(
    *, campaign: Campaign, parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ParsedJudgments, dict[str, Any] | None]:
    """The rows of a WMT file with their sids as lines of the uploaded test set, and the report
    (convention applied, checks, warnings): the WMT layout's segment hook.

    Raises:
        UploadError: a sid outside the test set under the chosen convention, a convention the
            file's documents refute, or ``auto`` without a convention singled out.
    """
    chosen = options.segment_numbering
    if chosen not in SEGMENT_NUMBERINGS:
        known = ", ".join(SEGMENT_NUMBERINGS)
        raise UploadError(
            [UploadProblem(parsed.file, None, f"unknown segment numbering {chosen!r}; use {known}")]
        )
    documents = _documents(campaign)
    readings = {
        key: _read(key, parsed.rows, documents[key], options.line_base) for key in CONVENTIONS
    }
    checks = [readings[key].describe() for key in CONVENTIONS]
    agree = readings[NUMBERING_UPLOAD].positions == readings[NUMBERING_SORTED].positions
    warnings: list[str] = []
    if agree:
        applied = NUMBERING_UPLOAD if chosen == NUMBERING_AUTO else chosen
        checks.append("both conventions name the same segment for every row")
    elif chosen == NUMBERING_AUTO:
        applied = _singled_out(parsed, readings)
    else:
        applied = chosen
        warnings = _confirmed(parsed, readings, chosen)
    reading = readings[applied]
    _refuse_outside(parsed, reading, readings)
    rows = [
        dataclasses.replace(row, segment=str(position + options.line_base))
        for row, position in zip(parsed.rows, reading.positions, strict=True)
        if position is not None
    ]
    report = {"applied": applied, "chosen": chosen, "checks": checks, "warnings": warnings}
    return dataclasses.replace(parsed, rows=rows), report


def segment_numbering_record(record: JudgmentImport, options: ImportOptions, report: Any) -> None:
    """Keep the chosen convention with the import's options and the report in its summary
    (nothing for a layout without segment numbering: report None)."""
    if report is None:
        return
    record.options["segment_numbering"] = options.segment_numbering
    record.summary["segment_numbering"] = report
    record.save(update_fields=["options", "summary"])


def _documents(campaign: Campaign) -> dict[str, list[tuple[str, list[int]]]]:
    """Each convention's documents in order: (id, its segments' positions in order)."""
    found: dict[str, list[int]] = {}
    for position, document in (
        Segment.objects.filter(campaign=campaign)
        .order_by("position")
        .values_list("position", "document__external_id")
    ):
        found.setdefault(document, []).append(position)
    uploaded = list(found.items())
    return {NUMBERING_UPLOAD: uploaded, NUMBERING_SORTED: sorted(uploaded)}


def _read(
    key: str, rows: list[ImportRow], documents: list[tuple[str, list[int]]], line_base: int
) -> _Reading:
    """The rows' positions under one convention, and how many of the documents judged for
    a system (by a worker in a HIT) are covered exactly: every segment, none outside. A
    structured sid names its document; a line number's is the one it falls in."""
    flat = [position for _, positions in documents for position in positions]
    document_of = {p: (d, i) for d, (_, ps) in enumerate(documents) for i, p in enumerate(ps)}
    positions: list[int | None] = []
    covered: dict[tuple[str, str, str, str], set[int]] = defaultdict(set)
    broken: set[tuple[str, str, str, str]] = set()
    sizes: dict[tuple[str, str, str, str], int] = {}
    for row in rows:
        position = _position(row.segment, documents, flat, line_base)
        positions.append(position)
        if row.type != SYSTEM:
            continue
        match = STRUCTURED_SID.match(row.segment)
        document, index = document_of[position] if position is not None else (-1, -1)
        named = match[1] if match is not None else str(document)
        group = (row.annotator, row.hit, row.system, named)
        if position is None:
            broken.add(group)
            continue
        covered[group].add(index)
        sizes[group] = len(documents[document][1])
    groups = covered.keys() | broken
    whole = sum(g not in broken and len(covered[g]) == sizes[g] for g in groups)
    return _Reading(key, positions, whole, len(groups))


def _position(
    sid: str, documents: list[tuple[str, list[int]]], flat: list[int], line_base: int
) -> int | None:
    match = STRUCTURED_SID.match(sid)
    if match is not None:
        document, segment = int(match[1]) - 1, int(match[2]) - 1
        if not 0 <= document < len(documents):
            return None
        positions = documents[document][1]
        return positions[segment] if 0 <= segment < len(positions) else None
    readable = is_line_number(sid) and len(sid.lstrip("0")) <= MAX_LINE_NUMBER_DIGITS
    index = int(sid) - line_base if readable else -1
    return flat[index] if 0 <= index < len(flat) else None


def _singled_out(parsed: ParsedJudgments, readings: dict[str, _Reading]) -> str:
    """The convention that ``auto`` applies; refused when the evidence names none."""
    inside = [key for key in CONVENTIONS if readings[key].outside == 0]
    if not inside:  # the rows outside under the convention that places the most
        _refuse_outside(parsed, min(readings.values(), key=lambda r: r.outside), readings)
    if len(inside) == 1:
        return inside[0]
    confirmed = [key for key in inside if readings[key].whole_share >= CONFIRMED]
    refuted = [key for key in inside if readings[key].whole_share < REFUTED]
    if len(confirmed) == 1 and len(refuted) == 1:
        return confirmed[0]
    evidence = "; ".join(readings[key].describe() for key in CONVENTIONS)
    raise UploadError(
        [
            UploadProblem(
                parsed.file,
                None,
                "the file's segment ids fit both numbering conventions, which place its "
                f"judgments on different segments, and its documents single out neither "
                f"({evidence}); choose the segment "
                "numbering (upload: line in the test set as uploaded; sorted: position after "
                "sorting the documents by id)",
            )
        ]
    )


def _confirmed(parsed: ParsedJudgments, readings: dict[str, _Reading], chosen: str) -> list[str]:
    """Refuse a chosen convention that the file's documents refute; a warning when they
    cannot confirm it."""
    other = next(key for key in CONVENTIONS if key != chosen)
    mine, theirs = readings[chosen], readings[other]
    if (
        mine.outside == 0
        and theirs.outside == 0
        and theirs.whole_share >= CONFIRMED
        and mine.whole_share < REFUTED
    ):
        raise UploadError(
            [
                UploadProblem(
                    parsed.file,
                    None,
                    f"the segment numbering {chosen} does not fit the file: its workers judged "
                    f"whole documents, and only {mine.whole} of {mine.groups} judged documents "
                    f"are whole under {chosen} against {theirs.whole} of {theirs.groups} under "
                    f"{other}; import with the segment numbering {other}",
                )
            ]
        )
    if mine.whole_share >= CONFIRMED:
        return []
    return [
        f"NOT CONFIRMED: the file carries no text and its judged documents are not whole under "
        f"the chosen numbering ({chosen}), so nothing confirms that each judgment sits on the "
        f"segment its worker saw; the other numbering ({other}) would place them elsewhere"
    ]


def _refuse_outside(
    parsed: ParsedJudgments, reading: _Reading, readings: dict[str, _Reading]
) -> None:
    """A sid outside the test set (or its document) under the applied convention."""
    if reading.outside == 0:
        return
    fits = [key for key, r in readings.items() if r.outside == 0]
    hint = f"; the segment numbering {fits[0]} places every row" if fits else ""
    problems = [
        UploadProblem(
            parsed.file,
            row.line,
            f"sid {row.segment} is outside the campaign's test set under the segment numbering "
            f"{reading.key} ({reading.outside} such rows){hint}",
        )
        for row, position in zip(parsed.rows, reading.positions, strict=True)
        if position is None
    ]
    raise UploadError(problems[:MAX_PROBLEMS])


def segment_numbering_text(summary: dict[str, Any]) -> str:
    """The numbering an import applied, its checks and warnings, for its page and command
    ("" for an import without one)."""
    report = summary.get("segment_numbering")
    if not report:
        return ""
    text = _("Segment ids read as: %(numbering)s (chosen: %(chosen)s). Checks: %(checks)s.") % {
        "numbering": NUMBERING_LABELS[report["applied"]],
        "chosen": report["chosen"],
        "checks": "; ".join(report["checks"]),
    }
    return " ".join([str(text), *report["warnings"]])
