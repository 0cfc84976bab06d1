"""WMT's direct-assessment judgments (ad-good-raw.csv, ad-latest.csv): a header with HITId,
WorkerId, sys_id, type, sid and score, tab- or space-separated."""

from __future__ import annotations

from itertools import islice

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.rows import (
    TYPES,
    ImportRow,
    ParsedJudgments,
    Problems,
    _csv_rows,
    _number,
    _row,
    is_line_number,
)

FORMAT_WMT = "wmt"

# Graham's Direct-Assessment scripts (proc-hits/hits2r.pl) write this header; R's read.table
# and later releases keep the names, some with and some without the "Input." prefix.
WMT_COLUMNS = {
    "hit": ("HITId",),
    "annotator": ("WorkerId",),
    "source_language": ("Input.src", "src"),
    "target_language": ("Input.trg", "trg"),
    "system": ("sys_id",),
    "type": ("type",),
    "segment": ("sid",),
    "score": ("score",),
    "time": ("time",),
}


def _parse_wmt(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    table = (
        _csv_rows(name, lines, first, "\t")
        if "\t" in lines[first]
        else (  # R's write.table with spaces
            (number, line.split())
            for number, line in enumerate(islice(lines, first, None), start=first + 1)
        )
    )
    header_line, header_values = next(table)
    header = [h.strip().strip('"') for h in header_values]
    column: dict[str, int] = {}
    for key, names in WMT_COLUMNS.items():
        for candidate in names:
            if candidate in header:
                column[key] = header.index(candidate)
                break
    missing = [
        WMT_COLUMNS[k][0]
        for k in ("annotator", "system", "type", "segment", "score")
        if k not in column
    ]
    if missing:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    header_line,
                    f"the WMT header lacks the column(s) {', '.join(missing)}",
                )
            ]
        )
    rows: list[ImportRow] = []
    hit_seconds: dict[tuple[str, str], float] = {}
    for number, values in table:
        if not any(v.strip() for v in values):
            continue
        if len(values) < len(header):
            problems.add(number, f"{len(values)} fields, the header has {len(header)}")
            continue

        def get(key: str, values: list[str] = values) -> str:
            return values[column[key]].strip().strip('"') if key in column else ""

        row = _row(problems, number, get, get("type").upper(), TYPES)
        if row is None:
            continue
        if not is_line_number(get("segment")):
            problems.add(number, f"sid {get('segment')!r} is not a line number")
            continue
        hit = get("hit")
        time_text = get("time")
        if time_text:
            seconds = _number(time_text)
            if seconds is None or seconds < 0:
                problems.add(number, f"time {time_text!r} is not a number of seconds")
                continue
            hit_seconds[(row["annotator"], hit)] = seconds
        pair = (
            f"{get('source_language')}-{get('target_language')}"
            if "source_language" in column
            else ""
        )
        rows.append(ImportRow(**row, hit=hit, language_pair=pair))
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_WMT, rows, has_items=False, hit_seconds=hit_seconds)
