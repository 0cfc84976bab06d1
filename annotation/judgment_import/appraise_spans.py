"""Appraise's ESA and MQM score export: the CSV that ``ExportSystemScoresToCSV`` writes for a
campaign of document-level error-span tasks (WMT's human evaluation since 2024).

Its rows come from ``DirectAssessmentDocumentResult.get_system_data(campaign,
extended_csv=True, add_batch_info=…)``, without a header, one row per system (``A+B`` items are
split): username, system (``item__targetID``), item id, item type (TGT, BAD, REF, CHK), source
and target language, score, document id (``document#system`` in WMT's batches), whether the item
is a whole document (``True``/``False``), the ``mqm`` field — a JSON list of spans
``{"start_i", "end_i", "severity", "error_type"}`` — start and end time (Unix seconds) and, with
``--batch-info``, the batch number and Appraise's item id: 12 or 14 fields (AppraiseDev/Appraise
``EvalData/models/direct_assessment_document.py``, commit 054e27cb).

The spans are set by Appraise's annotation page
(``EvalView/static/EvalView/js/direct-assessment-document-mqm-esa.js``, commit 17c319c0): it
splits the trimmed target text with JavaScript's ``split("")`` — **UTF-16 code units** — and a
span covers ``start_i`` to ``end_i`` **inclusive** (it colours ``start_i <= i <= end_i``);
``"missing"`` for both marks the missing-content marker after the text (an omission).
Severities are ``minor``, ``major`` and, in MQM, ``neutral``; a span left ``undecided`` is no
error and is left out. ``error_type`` is null in ESA and the path in Appraise's MQM typology
(``["Accuracy", "Mistranslation"]``) in MQM.

Here a span becomes EvalSite's: code points of the campaign's text of the output, end
exclusive, the marker ``[len, len + 1)``; the conversion needs that text, so it is done when
the rows are matched with the campaign
(:func:`annotation.judgment_import.text_spans.spans_on_text`). A file whose spans carry error
types is MQM, else ESA (the import's protocol option, when it names one of the two, decides);
a file with neither error types nor a score other than 0 — an MQM campaign without errors
exports as such, and would read back as ESA scores of 0 — is refused until the option chooses.
ESA rows keep the published score; an MQM row's value is the negated sum of the imported
config's weights: the batches' ``_mqmWeights`` when EvalSite's export wrote them (the imported
config keeps them), else Google's (Appraise's own page counts major 5, minor 1, neutral 0 too,
but a minor punctuation error 1 where Google counts 0.1); Appraise's ``score`` of an MQM row is its
hidden slider's and is not read. Two paths are EvalSite's own, for MQM's categories
outside Appraise's typology: ``["Non-translation"]`` and ``["Source error"]``. EvalSite
writes the layout too (``annotation/reports/appraise.py``, the span report's ``appraise.csv``,
with its batches in ``appraise-batches.json``), its names formula-safe: a leading apostrophe
before a formula character is dropped from usernames, systems and document ids.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.appraise_batches import (
    BATCHES,
    MQM_WEIGHTS,
    appraise_batch_texts,
)
from annotation.judgment_import.documents import documents_refused
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.mqm_tsv import google_cell_read
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import (
    _EARLIEST_SECONDS,
    _LATEST_SECONDS,
    APPRAISE_TYPES,
    ImportRow,
    ParsedJudgments,
    Problems,
    _csv_rows,
    _number,
    _row,
    clip,
)
from annotation.protocols.esa import ESA
from annotation.protocols.mqm import MQM, MQM_SCORE, Weights

FORMAT_APPRAISE_SPANS = "appraise-spans"

FIELDS = (12, 14)
SEVERITIES = ("minor", "major", "neutral")
ESA_SEVERITIES = ("minor", "major")
UNDECIDED = "undecided"
MISSING = "missing"

# Appraise's MQM typology (its page's ERROR_TYPES) onto MQM's, by "parent/child" in lower case;
# a path not listed is read by its parent, else as "other".
CATEGORY = {
    "accuracy/mistranslation": "accuracy/mistranslation",
    "accuracy/overtranslation": "accuracy/mistranslation",
    "accuracy/undertranslation": "accuracy/mistranslation",
    "accuracy/addition": "accuracy/addition",
    "accuracy/omission": "accuracy/omission",
    "accuracy/untranslated": "accuracy/untranslated",
    "accuracy/do not translate": "accuracy/untranslated",
    "accuracy": "accuracy/mistranslation",
    "linguistic conventions/grammar": "fluency/grammar",
    "linguistic conventions/punctuation": "fluency/punctuation",
    "linguistic conventions/spelling": "fluency/spelling",
    "linguistic conventions/character encoding": "fluency/character-encoding",
    "linguistic conventions": "fluency/grammar",
    "style/language register": "fluency/register",
    "style/inconsistent style": "fluency/inconsistency",
    "style": "style",
    "terminology": "terminology",
    "locale convention": "locale-convention",
    # MQM's own categories outside Appraise's typology, as EvalSite's export writes them.
    "non-translation": "non-translation",
    "source error": "source-error",
}

# Each MQM category as EvalSite's export writes it: an Appraise path that reads back as it.
ERROR_TYPE = {
    "accuracy/mistranslation": ["Accuracy", "Mistranslation"],
    "accuracy/omission": ["Accuracy", "Omission"],
    "accuracy/addition": ["Accuracy", "Addition"],
    "accuracy/untranslated": ["Accuracy", "Untranslated"],
    "fluency/grammar": ["Linguistic conventions", "Grammar"],
    "fluency/spelling": ["Linguistic conventions", "Spelling"],
    "fluency/punctuation": ["Linguistic conventions", "Punctuation"],
    "fluency/register": ["Style", "Language register"],
    "fluency/inconsistency": ["Style", "Inconsistent style"],
    "fluency/character-encoding": ["Linguistic conventions", "Character encoding"],
    "terminology": ["Terminology"],
    "style": ["Style"],
    "locale-convention": ["Locale convention"],
    "non-translation": ["Non-translation"],
    "source-error": ["Source error"],
    "other": ["Other"],
}


def looks_like_appraise_spans(first_line: str) -> bool:
    """12 or 14 fields, an Appraise item type in the fourth, True/False in the ninth and a
    JSON list in the tenth."""
    try:
        values = next(csv.reader([first_line]), [])
    except csv.Error:  # the parser that reads the file names the line
        return False
    return (
        len(values) in FIELDS
        and values[3].strip() in APPRAISE_TYPES
        and values[8].strip() in ("True", "False")
        and values[9].strip().startswith("[")
    )


def parse_appraise_spans(name: str, lines: list[str], first: int) -> ParsedJudgments:
    """The judgments of an Appraise ESA/MQM export (see the module), one row per output."""
    problems = Problems(name)
    rows: list[ImportRow] = []
    documents: list[ImportRow] = []
    for number, values in _csv_rows(name, lines, first, strict=True):
        if not any(v.strip() for v in values):
            continue
        row = _parsed_row(problems, number, values)
        if row is not None:
            (documents if row.document else rows).append(row)
    problems.raise_if_any()
    return ParsedJudgments(name, FORMAT_APPRAISE_SPANS, rows, has_items=False, documents=documents)


def _parsed_row(problems: Problems, number: int, values: list[str]) -> ImportRow | None:
    if len(values) not in FIELDS:
        problems.add(
            number,
            f"{len(values)} fields; Appraise's ESA/MQM export has 12 (username, system, item id, "
            "type, source and target language, score, document, whole document, spans, start, "
            "end) or 14 (with batch number and item id)",
        )
        return None
    whole = values[8].strip()
    if whole not in ("True", "False"):
        problems.add(number, f"field 9 (whole document) is {whole!r}, not True or False")
        return None
    # A whole-document row: its score is the document's (a document judgment), its id the
    # document part of ``document#system``.
    item_document = google_cell_read(values[7].strip())
    document = item_document.split("#", 1)[0] if whole == "True" else ""
    if whole == "True" and not document:
        problems.add(number, "a whole-document item without a document id (field 8)")
        return None
    # Names as EvalSite's download writes them: a leading apostrophe that kept a spreadsheet
    # from running a formula is dropped (``google_cell_read``).
    fields = {
        "annotator": google_cell_read(values[0].strip()),
        "system": google_cell_read(values[1].strip()),
        "segment": values[2],
    }
    fields["score"] = values[6]
    row = _row(problems, number, lambda key: fields[key].strip(), values[3].strip(), APPRAISE_TYPES)
    if row is None:
        return None
    start, end = _number(values[10]), _number(values[11])
    if start is None or end is None or not _EARLIEST_SECONDS <= start <= end <= _LATEST_SECONDS:
        problems.add(number, f"start and end {values[10]!r}, {values[11]!r} are not Unix seconds")
        return None
    spans = _spans(problems, number, values[9])
    if spans is None:
        return None
    return ImportRow(
        **row,
        hit=values[12].strip() if len(values) == 14 else "",
        seconds=end - start,
        started=start,
        submitted=end,
        language_pair=f"{values[4].strip()}-{values[5].strip()}",
        text_spans=spans,
        document=document,
        item_document=item_document,
    )


def _spans(problems: Problems, number: int, text: str) -> tuple[tuple[Any, ...], ...] | None:
    """The spans field as (start_i, end_i, severity, category) — offsets as Appraise gives
    them, None for the missing-content marker; undecided spans left out."""
    try:
        given = json.loads(text)
    except ValueError as exc:
        problems.add(number, f"the spans (field 10) are not JSON: {exc}")
        return None
    except RecursionError:
        # json.loads recurses once per level: a cell of "[[[[…" thousands deep ends it.
        problems.add(
            number, "the spans (field 10) are nested too deeply: a list of spans is expected"
        )
        return None
    if not isinstance(given, list):
        problems.add(number, "the spans (field 10) are not a JSON list")
        return None
    spans = []
    for k, span in enumerate(given, start=1):
        if not isinstance(span, dict) or not {"start_i", "end_i", "severity"} <= set(span):
            problems.add(number, f"span {k} is not an object with start_i, end_i and severity")
            return None
        severity, start, end = span["severity"], span["start_i"], span["end_i"]
        if severity == UNDECIDED:
            continue
        if severity not in SEVERITIES:
            problems.add(number, f"span {k}: severity {_clip(severity)} is not one of {SEVERITIES}")
            return None
        error_type = span.get("error_type")
        if not _is_error_type(error_type):
            problems.add(
                number,
                f"span {k}: error_type {_clip(error_type)} is not a text or a list of texts "
                '(Appraise writes e.g. ["Accuracy", "Mistranslation"], or null)',
            )
            return None
        if (start == MISSING) != (end == MISSING) or (
            start != MISSING and not _offsets(start, end)
        ):
            problems.add(
                number,
                f"span {k}: start_i {_clip(start)} and end_i {_clip(end)} are not offsets "
                '0 ≤ start_i ≤ end_i, nor both "missing"',
            )
            return None
        offsets = (None, None) if start == MISSING else (start, end)
        spans.append((*offsets, severity, _category(error_type)))
    return tuple(spans)


def _is_error_type(value: Any) -> bool:
    """Null, a text, or a list of texts (Appraise's path in its typology)."""
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, list) and all(isinstance(part, str) for part in value)


def _clip(value: Any, length: int = 60) -> str:
    """A value of the file as a message shows it: its repr, cut to ``length`` characters."""
    try:
        shown = repr(value)
    except RecursionError:  # a list nested almost as deep as json.loads allows
        return "(a value nested too deeply)"
    return clip(shown, length)


def _offsets(start: Any, end: Any) -> bool:
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
    return whole and 0 <= start <= end


def _category(error_type: Any) -> str:
    """An Appraise error type path as MQM's category ("" for none: ESA)."""
    if not error_type:
        return ""
    path = [error_type] if isinstance(error_type, str) else list(error_type)
    key = "/".join(p.strip().lower() for p in path[:2])
    return CATEGORY.get(key) or CATEGORY.get(key.split("/", 1)[0]) or "other"


def appraise_options(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """ESA or MQM, as the option says or else the file (error types: MQM); MQM rows get the
    negated weighted sum of their spans as their value. Rows placed on their batches ask for
    document scores when they have whole-document rows."""
    protocol = options.protocol
    if protocol not in (ESA, MQM):
        protocol = _protocol_of(parsed)
    options = replace(options, protocol=protocol, criterion="")
    if parsed.documents and parsed.summary.get(BATCHES):
        # The batches say which items were whole documents: their scores are the documents'.
        options = replace(options, document_score=True)
    documents_refused(parsed, options)
    if protocol == ESA:
        return options, _as_esa(parsed)
    # Google's weights, unless the batches carry the ones the scores were computed with.
    given = parsed.summary.get(MQM_WEIGHTS)
    weights = Weights.from_json(given)
    if given:
        options = replace(options, weights=weights.as_json())
    rows = [
        replace(
            row,
            score=-sum(weights.of(s[2], s[3] or "other") for s in row.text_spans or ()) or 0.0,
            criterion=MQM_SCORE.key,
            text_spans=tuple((*s[:3], s[3] or "other") for s in row.text_spans or ()),
        )
        for row in parsed.rows
    ]
    return options, replace(parsed, rows=rows)


def _protocol_of(parsed: ParsedJudgments) -> str:
    """MQM when a span has an error type, ESA when a score is not 0; refused otherwise."""
    if any(s[3] for row in parsed.rows for s in row.text_spans or ()):
        return MQM
    if any(row.score for row in parsed.rows):
        return ESA
    line = parsed.rows[0].line if parsed.rows else None
    message = (
        "no span has an error type and every score is 0: an MQM file without errors and an ESA "
        "file of zeros look alike; choose the protocol (ESA or MQM) to import it"
    )
    raise UploadError([UploadProblem(parsed.file, line, message)])


def _as_esa(parsed: ParsedJudgments) -> ParsedJudgments:
    """ESA's spans carry no category and are minor or major: a neutral one is refused."""
    problems = Problems(parsed.file)
    for row in parsed.rows:
        if any(s[2] not in ESA_SEVERITIES for s in row.text_spans or ()):
            problems.add(row.line, "a neutral span: ESA's spans are minor or major (import as MQM)")
    problems.raise_if_any()
    rows = [
        replace(row, text_spans=tuple((*s[:3], "") for s in row.text_spans or ()))
        for row in parsed.rows
    ]
    return replace(parsed, rows=rows)


FORMAT = JudgmentFormat(
    key=FORMAT_APPRAISE_SPANS,
    label=_("Appraise ESA/MQM export (error spans; imported as ESA or MQM)"),
    looks_like=lambda _name, lines, first: looks_like_appraise_spans(lines[first]),
    parse=parse_appraise_spans,
    options=appraise_options,
    texts=appraise_batch_texts,
)
