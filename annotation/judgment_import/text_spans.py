"""Spans of an imported file that carries no texts (Appraise's ESA/MQM export), placed on the
campaign's text of their output when the rows are matched with the campaign: Appraise counts
UTF-16 units of the trimmed text with the end inclusive and marks an omission ``"missing"``
(see :mod:`annotation.judgment_import.appraise_spans`); EvalSite counts code points of the
whole text with the end exclusive, the missing-content marker ``[len, len + 1)``. Texts that a
spreadsheet-safe download wrote with a leading apostrophe get it removed where the campaign's
text confirms it (:func:`texts_unneutralised`)."""

from __future__ import annotations

import bisect
import itertools
from dataclasses import replace

from annotation.judgment_import.rows import ImportRow, Problems
from evalsite.formatting import FORMULA_STARTS


def spans_on_text(problems: Problems, row: ImportRow, text: str) -> ImportRow | None:
    """``row`` with its Appraise spans as EvalSite's on ``text``, the campaign's text of the
    output (None, with a problem naming the line, when a span does not fit the text). Appraise
    counted UTF-16 units of the trimmed text, the end inclusive; a span that cuts a character
    in two (half of a surrogate pair) is widened to the whole character."""
    if row.text_spans is None:
        return row
    shown = text.strip()
    lead = len(text) - len(text.lstrip())
    # UTF-16 offset where each code point of the shown text starts, and where it ends.
    units = [0]
    for character in shown:
        units.append(units[-1] + (2 if ord(character) > 0xFFFF else 1))
    spans = []
    for start, end, severity, category in row.text_spans:
        if start is None:
            spans.append((len(text), len(text) + 1, severity, category))
            continue
        if end >= units[-1]:
            problems.add(
                row.line,
                f"the span {start}–{end} (UTF-16 units, end inclusive) is not within the output "
                f"of {units[-1]} UTF-16 units: {shown[:60]!r}",
            )
            return None
        first = bisect.bisect_right(units, start) - 1
        after = bisect.bisect_left(units, end + 1)
        spans.append((lead + first, lead + after, severity, category))
    spans.sort()
    for before, later in itertools.pairwise(spans):
        if later[0] < before[1]:
            problems.add(
                row.line,
                f"the spans at characters {before[0]}–{before[1]} and {later[0]}–{later[1]} "
                "overlap",
            )
            return None
    return replace(row, spans=tuple(spans), text_spans=None)


def texts_unneutralised(row: ImportRow, source: str, text: str) -> ImportRow:
    """``row`` without the apostrophe that a download put before its source or output text to
    keep spreadsheets from running it (:func:`evalsite.formatting.formula_safe`), where the
    campaign's text confirms it: the campaign's text begins with a formula character and the
    row's with an apostrophe and that character. The output's spans move with its text."""
    if row.output_text[:1] != "'" and row.source_text[:1] != "'":
        return row
    if _neutralised(row.source_text, source):
        row = replace(row, source_text=row.source_text[1:])
    if _neutralised(row.output_text, text):
        spans = row.spans and tuple((s - 1, e - 1, sev, cat) for s, e, sev, cat in row.spans)
        row = replace(row, output_text=row.output_text[1:], spans=spans)
    return row


def _neutralised(given: str, campaign: str) -> bool:
    return given[:1] == "'" and campaign[:1] in FORMULA_STARTS and given[1:2] == campaign[:1]


def spans_fit_text(problems: Problems, row: ImportRow, text: str) -> bool:
    """Whether ``row``'s spans, counted in the output text the row carries, count the same
    characters of ``text``, the campaign's: the texts are the same but for whitespace of one
    kind for another (a TSV download writes tabs and line breaks as spaces). The text check
    forgives runs of whitespace and Unicode normalisation, which move every later offset: such
    a row is refused, naming its line, rather than its spans put on other characters."""
    given = row.output_text
    if not row.spans or not given or given == text:
        return True
    if len(given) == len(text) and all(
        a == b or (a.isspace() and b.isspace()) for a, b in zip(given, text, strict=True)
    ):
        return True
    problems.add(
        row.line,
        "the output's error spans are counted in a text that differs from the campaign's in "
        f"whitespace or Unicode normalisation ({given[:60]!r} in the file, {text[:60]!r} in "
        "the campaign): they would mark other characters",
    )
    return False
