"""EvalSite's own table: a header naming the columns (annotator, system, segment, type, score
and the optional ones), tab- or comma-separated."""

from __future__ import annotations

import re
import sys
from collections import Counter

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
    tsv_rows,
)

FORMAT_EVALSITE = "evalsite"

EVALSITE_REQUIRED = ("annotator", "system", "segment", "type", "score")

EVALSITE_OPTIONAL = ("hit", "item", "seconds", "criterion", "run", "source", "output")


def looks_like_evalsite(name: str, lines: list[str], first: int) -> bool:
    """A header with annotator, system, segment, type and score (tab- or comma-separated)."""
    fields = {f.strip().strip('"').lower() for f in re.split(r"[\t,]", lines[first])}
    return set(EVALSITE_REQUIRED) <= fields


def _parse_evalsite(name: str, lines: list[str], first: int) -> ParsedJudgments:
    problems = Problems(name)
    table = (
        tsv_rows(name, lines, first)
        if "\t" in lines[first]
        else _csv_rows(name, lines, first, strict=True)
    )
    header_line, header_values = next(table)
    header = [h.strip().lower() for h in header_values]
    missing = [c for c in EVALSITE_REQUIRED if c not in header]
    if missing:
        raise UploadError(
            [
                UploadProblem(
                    name, header_line, f"the header lacks the column(s) {', '.join(missing)}"
                )
            ]
        )
    unknown = [h for h in header if h not in EVALSITE_REQUIRED + EVALSITE_OPTIONAL]
    if unknown:
        problems.add(
            header_line,
            f"unknown column(s) {', '.join(unknown)}; the columns are "
            f"{', '.join(EVALSITE_REQUIRED + EVALSITE_OPTIONAL)}",
        )
    duplicated = [h for h, n in Counter(header).items() if n > 1]
    if duplicated:
        problems.add(header_line, f"the column(s) {', '.join(duplicated)} appear twice")
    problems.raise_if_any()
    column = {h: i for i, h in enumerate(header)}
    rows: list[ImportRow] = []
    for number, values in table:
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            problems.add(number, f"{len(values)} fields, the header has {len(header)}")
            continue

        def get(key: str, values: list[str] = values) -> str:
            return values[column[key]].strip() if key in column else ""

        row = _row(problems, number, get, get("type").upper(), TYPES)
        if row is not None:
            seconds_text = get("seconds")
            seconds = None
            if seconds_text:
                seconds = _number(seconds_text)
                if seconds is None or seconds < 0:
                    problems.add(number, f"seconds {seconds_text!r} is not a non-negative number")
                    continue
            rows.append(
                ImportRow(
                    **row,
                    run=sys.intern(get("run")),
                    hit=sys.intern(get("hit")),
                    item=sys.intern(get("item")),
                    criterion=sys.intern(get("criterion")),
                    seconds=seconds,
                    source_text=get("source"),
                    output_text=get("output"),
                )
            )
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_EVALSITE, rows, has_items="item" in column)


FORMAT = JudgmentFormat(
    key=FORMAT_EVALSITE,
    label=_("EvalSite table (TSV or CSV with a header)"),
    looks_like=looks_like_evalsite,
    parse=_parse_evalsite,
)
