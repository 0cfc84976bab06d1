"""Appraise's CSV export (ExportSystemScoresToCSV): no header, nine or eleven fields per row
(username, system, segment id, item type, source and target language, score, start, end, and
batch number and item id)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.rows import (
    _EARLIEST_SECONDS,
    _LATEST_SECONDS,
    APPRAISE_TYPES,
    EARLIEST_TIME,
    LATEST_TIME,
    ImportRow,
    ParsedJudgments,
    Problems,
    _csv_rows,
    _number,
    _row,
)

FORMAT_APPRAISE = "appraise"


def looks_like_appraise(name: str, lines: list[str], first: int) -> bool:
    """No header: nine or eleven comma-separated fields with an Appraise item type in the
    fourth."""
    _, values = next(_csv_rows(name, lines, first))
    return len(values) in (9, 11) and values[3].strip() in APPRAISE_TYPES


def _parse_appraise(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    rows: list[ImportRow] = []
    for number, values in _csv_rows(name, lines, first, strict=True):
        if not any(v.strip() for v in values):
            continue
        if len(values) not in (9, 11):
            problems.add(
                number,
                f"{len(values)} fields; Appraise's export has 9 (username, system, segment, "
                "type, source and target language, score, start, end) or 11 (with batch "
                "number and item id)",
            )
            continue
        fields = {
            "annotator": values[0],
            "system": values[1],
            "segment": values[2],
            "score": values[6],
        }

        def get(key: str, fields: dict[str, str] = fields) -> str:
            return fields[key].strip()

        row = _row(problems, number, get, values[3].strip(), tuple(APPRAISE_TYPES))
        if row is None:
            continue
        start, end = _number(values[7]), _number(values[8])
        if start is None or end is None or end < start:
            problems.add(
                number, f"start and end times {values[7]!r}, {values[8]!r} are not Unix seconds"
            )
            continue
        # The times become the judgment's date-times: one outside datetime's years is refused
        # here, with its field, rather than failing the store.
        out_of_range = next(
            (
                f"{label} time (field {index + 1}) {values[index]!r}"
                for label, index, seconds in (("start", 7, start), ("end", 8, end))
                if not _EARLIEST_SECONDS <= seconds <= _LATEST_SECONDS
            ),
            None,
        )
        if out_of_range:
            problems.add(
                number,
                f"{out_of_range} is out of range: Unix seconds from "
                f"{EARLIEST_TIME.date().isoformat()} to {LATEST_TIME.date().isoformat()}",
            )
            continue
        rows.append(
            ImportRow(
                **row,
                hit=values[9].strip() if len(values) == 11 else "",
                seconds=end - start,
                started=start,
                submitted=end,
                language_pair=f"{values[4].strip()}-{values[5].strip()}",
            )
        )
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_APPRAISE, rows, has_items=False)


FORMAT = JudgmentFormat(
    key=FORMAT_APPRAISE,
    label=_("Appraise CSV export (ExportSystemScoresToCSV)"),
    looks_like=looks_like_appraise,
    parse=_parse_appraise,
)
