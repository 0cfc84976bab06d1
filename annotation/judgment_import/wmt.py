"""WMT's direct-assessment judgments (ad-good-raw.csv, ad-latest.csv): a header with HITId,
WorkerId, sys_id, type, sid and score, tab- or space-separated (WMT21's rows mix the two). A sid
is a line number or WMT21's ``<pair>-<batch>-<document>-<id>.<segment>_<segment>``; which
segment it names is the import's segment numbering (annotation/judgment_import/wmt_segments.py).
"""

from __future__ import annotations

import re
import sys
from itertools import islice

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.layout import JudgmentFormat
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
from annotation.judgment_import.wmt_segments import STRUCTURED_SID, wmt_segments_apply

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


# A standardized file fails the scale's range when imported as raw scores: its rows are z-scores.
SCALE_HINT = (
    " (a *-good-stnd* file holds z-scores: import it with scores=standardised, or import the "
    "raw scores, ad-good-raw.csv)"
)


def looks_like_wmt(name: str, lines: list[str], first: int) -> bool:
    """A header with WorkerId and sys_id. WMT's segment scores (a header with SYS and SID) are
    refused: they hold one mean per system and segment, no annotators."""
    line = lines[first]
    fields = {f.strip().strip('"').lower() for f in re.split(r"[\t,]", line)}
    if {"workerid", "sys_id"} <= fields:
        return True
    tokens = line.split()
    if "SYS" in tokens and "SID" in tokens:
        raise UploadError(
            [
                UploadProblem(
                    name,
                    first + 1,
                    "this looks like WMT's segment scores (ad-seg-scores: one mean per system and "
                    "segment, no annotators), which cannot be re-analysed; import the judgments "
                    "(ad-good-raw.csv or ad-latest.csv) instead",
                )
            ]
        )
    return False


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
        if len(values) != len(header) and len(" ".join(values).split()) == len(header):
            # WMT21's rows: tabs between some fields, spaces between others.
            values = " ".join(values).split()
        if len(values) < len(header):
            problems.add(number, f"{len(values)} fields, the header has {len(header)}")
            continue

        def get(key: str, values: list[str] = values) -> str:
            return values[column[key]].strip().strip('"') if key in column else ""

        row = _row(problems, number, get, get("type").upper(), TYPES)
        if row is None:
            continue
        if not is_line_number(get("segment")) and not STRUCTURED_SID.match(get("segment")):
            problems.add(number, f"sid {get('segment')!r} is not a line number")
            continue
        hit = sys.intern(get("hit"))
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
        rows.append(ImportRow(**row, hit=hit, language_pair=sys.intern(pair)))
    problems.raise_if_any()
    return ParsedJudgments(
        name,
        FORMAT_WMT,
        rows,
        has_items=False,
        hit_seconds=hit_seconds,
        scale_hint=SCALE_HINT,
    )


FORMAT = JudgmentFormat(
    key=FORMAT_WMT,
    label=_("WMT direct assessment (ad-good-raw.csv, ad-latest.csv)"),
    looks_like=looks_like_wmt,
    parse=_parse_wmt,
    segments=wmt_segments_apply,
)
