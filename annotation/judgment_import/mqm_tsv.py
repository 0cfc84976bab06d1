"""Google's MQM TSV (the layout of the MQM annotations of Freitag et al., 2021, released for
WMT 2020 onwards): a header ``system doc doc_id seg_id rater source target category severity``,
one row per error with the error marked ``<v>…</v>`` in the target (or in the source), and one
``No-error`` row per judged output without errors.

The rows of one (rater, system, segment) are one judgment of the MQM protocol: its score the
negated sum of the errors' weights (Google's: major 5, minor 1, neutral 0, a minor punctuation
error 0.1, a non-translation 25), its spans the marked parts of the target in code points of the
target without the markers. An error marked only in the source (or not at all) is stored as the
missing-content marker after the text, once per output (its weight counts every time).
Categories are Google's, mapped onto MQM's typology (``Fluency/Punctuation`` →
``fluency/punctuation``, ``Non-translation!`` → ``non-translation``); a finer one is read as
its parent where MQM has it (``Style/Awkward`` → ``style``), otherwise as ``other``.
``seg_id`` is the segment's line number in the test set.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import (
    SYSTEM,
    ImportRow,
    ParsedJudgments,
    Problems,
    _csv_rows,
    is_line_number,
)
from annotation.protocols.mqm import CATEGORIES, MQM, MQM_SCORE, Weights

FORMAT_MQM = "mqm"

MQM_COLUMNS = (
    "system",
    "doc",
    "doc_id",
    "seg_id",
    "rater",
    "source",
    "target",
    "category",
    "severity",
)

NO_ERROR = "no-error"

_KNOWN = {c.key for c in CATEGORIES}

# Google's names of categories MQM's typology names otherwise.
_GOOGLE = {
    "non-translation!": "non-translation",
    "accuracy/source language fragment": "accuracy/untranslated",
}


def mqm_category(google: str) -> str:
    """A category as Google's files write it, in MQM's typology (see the module)."""
    name = google.strip().lower()
    if name in _GOOGLE:
        return _GOOGLE[name]
    key = "/".join(part.strip().replace(" ", "-") for part in name.split("/"))
    if key in _KNOWN:
        return key
    parent = key.split("/", 1)[0]
    return parent if parent in _KNOWN else "other"


def looks_like_mqm_tsv(first_line: str) -> bool:
    fields = [f.strip().lower() for f in first_line.split("\t")]
    return fields[: len(MQM_COLUMNS)] == list(MQM_COLUMNS)


def _unmarked(text: str) -> tuple[str, tuple[int, int] | None]:
    """The text without its ``<v>``/``</v>`` markers, and the first marked span in it."""
    start = text.find("<v>")
    end = text.find("</v>")
    clean = text.replace("<v>", "").replace("</v>", "")
    if start < 0 or end < start:
        return clean, None
    return clean, (start, end - 3)


def parse_mqm_tsv(name: str, lines: list[str], first: int) -> ParsedJudgments:
    """The judgments of a Google MQM TSV file (see the module), one row per judged output."""
    problems = Problems(name)
    table = _csv_rows(name, lines, first, "\t")
    header_line, header = next(table)
    if not looks_like_mqm_tsv("\t".join(header)):
        raise UploadError(
            [UploadProblem(name, header_line, f"an MQM TSV header is {' '.join(MQM_COLUMNS)}")]
        )
    weights = Weights()
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for number, values in table:
        if not any(v.strip() for v in values):
            continue
        if len(values) < len(MQM_COLUMNS):
            problems.add(number, f"{len(values)} fields, the header has {len(MQM_COLUMNS)}")
            continue
        system, _doc, _doc_id, seg_id, rater, source, target, category, severity = (
            v.strip() for v in values[: len(MQM_COLUMNS)]
        )
        if not is_line_number(seg_id):
            problems.add(number, f"seg_id {seg_id!r} is not a line number")
            continue
        text, span = _unmarked(target)
        group = groups.setdefault(
            (rater, system, seg_id),
            {"line": number, "text": text, "source": _unmarked(source)[0], "errors": []},
        )
        if group["text"] != text:
            problems.add(number, "the target differs from this output's earlier rows")
            continue
        if category.lower() == NO_ERROR or severity.lower() == NO_ERROR:
            continue
        level = severity.lower()
        if level not in ("major", "minor", "neutral"):
            problems.add(number, f"severity {severity!r} is not Major, Minor, Neutral or No-error")
            continue
        group["errors"].append((span, level, mqm_category(category)))
    problems.raise_if_any()
    rows = [_judgment_row(problems, key, group, weights) for key, group in groups.items()]
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_MQM, [r for r in rows if r is not None], has_items=False)


def _judgment_row(
    problems: Problems, key: tuple[str, str, str], group: dict[str, Any], weights: Weights
) -> ImportRow | None:
    rater, system, seg_id = key
    text: str = group["text"]
    spans: list[tuple[int, int, str, str]] = []
    starts: set[int] = set()
    score = 0.0
    for span, severity, category in group["errors"]:
        score += weights.of(severity, category)
        start, end = span if span is not None else (len(text), len(text) + 1)
        if start not in starts and start < end:
            starts.add(start)
            spans.append((start, end, severity, category))
    if -score < MQM_SCORE.minimum:
        problems.add(group["line"], f"an MQM score of {-score:g} is below {MQM_SCORE.minimum}")
        return None
    return ImportRow(
        line=group["line"],
        annotator=rater,
        system=system,
        segment=seg_id,
        type=SYSTEM,
        score=-score or 0.0,
        criterion=MQM_SCORE.key,
        source_text=group["source"],
        output_text=text,
        spans=tuple(sorted(spans)),
    )


def mqm_options(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """An MQM TSV file holds MQM judgments: it is imported under the MQM protocol."""
    if options.protocol != MQM:
        return replace(options, protocol=MQM, criterion=""), parsed
    return options, parsed


FORMAT = JudgmentFormat(
    key=FORMAT_MQM,
    label=_("Google's MQM TSV (error spans; imported as MQM)"),
    looks_like=lambda _name, lines, first: looks_like_mqm_tsv(lines[first]),
    parse=parse_mqm_tsv,
    options=mqm_options,
)
