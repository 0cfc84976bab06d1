"""Google's MQM TSV (the layout of the MQM annotations of Freitag et al., 2021, released for
WMT 2020 onwards): a header ``system doc doc_id seg_id rater source target category severity``,
one row per error with the error marked ``<v>…</v>`` in the target (or in the source), and one
``No-error`` row per judged output without errors.

The rows of one (rater, system, segment) are one judgment of the MQM protocol: its score the
negated sum of the errors' weights (Google's: major 5, minor 1, neutral 0, a minor punctuation
error 0.1, a non-translation 25), and every error one of its spans, so that the spans give the
score again: the marked part of the target in code points of the target without the markers,
or, for an error marked only in the source (or not at all), the missing-content marker after
the text. Errors may share words or a start (Google's raters mark several errors on the same
words). A row whose markers do not pair up, nest or mark two parts is refused, naming its line.
Categories are Google's, mapped onto MQM's typology by ``GOOGLE_CATEGORIES`` both ways; a finer
one is read as its parent where MQM has it (``Style/Awkward`` → ``style``), otherwise as
``other``, except a punctuation or non-translation one, whose weight would be a guess (refused).
``seg_id`` is the segment's line number in the test set.

A release builds its own campaign (``FORMAT.texts``, :func:`mqm_texts`): the documents are the
``doc`` column's in order of first appearance, the segments Google's ``seg_id``s (gaps and all:
Google's TED file leaves out whole talks) in their order within each document, the sources and
every system's outputs the rows' texts without the markers. Such a campaign's segments keep
Google's ids, so a later file of the release is read against them (``FORMAT.segments``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import (
    DEFAULT_RUN,
    ParsedOutput,
    ParsedSegment,
    ParsedUpload,
    UploadError,
    UploadFile,
    UploadProblem,
)
from annotation.judgment_import.alignment import same_text
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import (
    SYSTEM,
    ImportRow,
    ParsedJudgments,
    Problems,
    _csv_rows,
    clip,
    is_line_number,
)
from annotation.models import Campaign, Upload
from annotation.protocols.mqm import (
    CATEGORIES,
    MQM,
    MQM_SCORE,
    NON_TRANSLATION,
    PUNCTUATION,
    Weights,
)
from evalsite.formatting import FORMULA_STARTS

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

# EvalSite's MQM categories as Google's files name them: the export writes these names and the
# import reads them back to the same key (a bijection, pinned by test_mqm_tsv_import.py).
GOOGLE_CATEGORIES = {
    "accuracy/mistranslation": "Accuracy/Mistranslation",
    "accuracy/omission": "Accuracy/Omission",
    "accuracy/addition": "Accuracy/Addition",
    "accuracy/untranslated": "Accuracy/Untranslated text",
    "fluency/grammar": "Fluency/Grammar",
    "fluency/spelling": "Fluency/Spelling",
    PUNCTUATION: "Fluency/Punctuation",
    "fluency/register": "Fluency/Register",
    "fluency/inconsistency": "Fluency/Inconsistency",
    "fluency/character-encoding": "Fluency/Character encoding",
    "terminology": "Terminology",
    "style": "Style",
    "locale-convention": "Locale convention",
    NON_TRANSLATION: "Non-translation!",
    "source-error": "Source error",
    "other": "Other",
}
_KEYS = {c.key for c in CATEGORIES}
# Google's names read as a key: the export's, the keys themselves, and the other names of
# Google's releases (WMT 2022 on name an untranslated part a source language fragment).
_FROM_GOOGLE = {
    **{key: key for key in _KEYS},
    **{name.lower(): key for key, name in GOOGLE_CATEGORIES.items()},
    "non-translation": NON_TRANSLATION,
    "accuracy/source language fragment": "accuracy/untranslated",
}


def mqm_category(google: str) -> str | None:
    """A category as Google's files write it, in MQM's typology (see the module): one finer
    than the typology (``Style/Awkward``) is read as its parent, one the typology lacks as
    ``other``; but a punctuation or non-translation category the typology does not know is
    None (refused), as its weight would be a guess."""
    name = " ".join(google.lower().split())
    known = _FROM_GOOGLE.get(name)
    if known is not None:
        return known
    key = "/".join(part.strip().replace(" ", "-") for part in name.split("/"))
    if key in _KEYS:
        return key
    if "punctuation" in key or "non-translation" in key:
        return None
    parent = key.split("/", 1)[0]
    return parent if parent in _KEYS else "other"


def google_category(key: str) -> str:
    """Our category key as Google's files write it (``GOOGLE_CATEGORIES``); a key of no MQM
    category (none is stored) in Google's spelling."""
    if key in GOOGLE_CATEGORIES:
        return GOOGLE_CATEGORIES[key]
    return "/".join(part[:1].upper() + part[1:].replace("-", " ") for part in key.split("/"))


# A cell the export wrote with a leading apostrophe so that spreadsheets show it as text
# (evalsite.formatting.formula_safe): one that began with a formula character, or with
# apostrophes before one, which makes the rule reversible (see google_cell).
def google_cell(text: str) -> str:
    """A text cell of Google's TSV as the export writes it: safe from spreadsheets' formulas,
    and read back to ``text`` by :func:`google_cell_read`."""
    return "'" + text if text.lstrip("'").startswith(FORMULA_STARTS) else text


def google_cell_read(cell: str) -> str:
    """A text cell as :func:`google_cell` wrote it, without the apostrophe it added."""
    if cell.startswith("'") and cell.lstrip("'").startswith(FORMULA_STARTS):
        return cell[1:]
    return cell


def looks_like_mqm_tsv(first_line: str) -> bool:
    fields = [f.strip().lower() for f in first_line.split("\t")]
    return fields[: len(MQM_COLUMNS)] == list(MQM_COLUMNS)


_MARKER = re.compile(r"(</?v>)")


def _unmarked(text: str) -> tuple[str, tuple[int, int] | None, str]:
    """The text without its ``<v>``/``</v>`` markers, the part they mark (None when nothing
    or nothing but an empty part is marked) and what is wrong with the markers ("" when
    nothing is): a row marks one error, so one part, with markers that pair up and do not
    nest."""
    if "<v>" not in text and "</v>" not in text:
        return text, None, ""
    pieces: list[str] = []
    position = 0
    opened: int | None = None
    span: tuple[int, int] | None = None
    for piece in _MARKER.split(text):
        if piece == "<v>":
            if opened is not None:
                return text, None, "has a <v> inside a part already marked (markers do not nest)"
            if span is not None:
                return text, None, "marks a second part (a row is one error, marked once)"
            opened = position
        elif piece == "</v>":
            if opened is None:
                return text, None, "has a </v> without a <v> before it"
            span, opened = (opened, position), None
        else:
            pieces.append(piece)
            position += len(piece)
    if opened is not None:
        return text, None, "has a <v> without its </v>"
    return "".join(pieces), span if span and span[0] < span[1] else None, ""


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
        _read_row(problems, groups, number, [v.strip() for v in values[: len(MQM_COLUMNS)]])
    problems.raise_if_any()
    rows = [_judgment_row(problems, key, group, weights) for key, group in groups.items()]
    problems.raise_if_any()
    return ParsedJudgments(
        name,
        FORMAT_MQM,
        [r for r in rows if r is not None],
        has_items=False,
        spans_may_overlap=True,
    )


def _read_row(
    problems: Problems,
    groups: dict[tuple[str, str, str], dict[str, Any]],
    number: int,
    values: list[str],
) -> None:
    """One row into the group of its (rater, system, segment): its error, if it has one and
    nothing is wrong with it (else a problem naming the line)."""
    system, doc, _doc_id, seg_id, rater, source, target, category, severity = values
    if not is_line_number(seg_id):
        problems.add(number, f"seg_id {seg_id!r} is not a line number")
        return
    # Texts keep a leading apostrophe: the campaign's text tells whether the export put it
    # there (annotation/judgment_import/text_spans.py); names are read by google_cell_read.
    source, _in_source, source_problem = _unmarked(source)
    text, span, target_problem = _unmarked(target)
    for column, problem, cell in (
        ("source", source_problem, source),
        ("target", target_problem, text),
    ):
        if problem:
            problems.add(number, f"the {column} {problem}: {clip(cell, 80)!r}")
            return
    group = groups.setdefault(
        (google_cell_read(rater), google_cell_read(system), seg_id),
        {"line": number, "text": text, "source": source, "doc": doc, "errors": []},
    )
    if group["text"] != text:
        problems.add(number, "the target differs from this output's earlier rows")
        return
    # A source is checked as the campaign's is (alignment.same_text); an output exactly, as
    # its spans count its characters.
    if not same_text(group["source"], source):
        problems.add(number, "the source differs from this output's earlier rows")
        return
    if category.lower() == NO_ERROR or severity.lower() == NO_ERROR:
        return
    level = severity.lower()
    if level not in ("major", "minor", "neutral"):
        problems.add(number, f"severity {severity!r} is not Major, Minor, Neutral or No-error")
        return
    key = mqm_category(category)
    if key is None:
        problems.add(
            number,
            f"category {category!r} is not one of Google's (its weight depends on it): "
            f"{', '.join(GOOGLE_CATEGORIES.values())}",
        )
        return
    group["errors"].append((span, level, key))


def _judgment_row(
    problems: Problems, key: tuple[str, str, str], group: dict[str, Any], weights: Weights
) -> ImportRow | None:
    """The judgment of one (rater, system, segment): every error a span (one marked nowhere
    in the target on the missing-content marker), its score the negated sum of their weights."""
    rater, system, seg_id = key
    text: str = group["text"]
    missing = (len(text), len(text) + 1)
    spans = sorted(
        (*(span if span is not None else missing), severity, category)
        for span, severity, category in group["errors"]
    )
    score = sum(weights.of(severity, category) for _s, _e, severity, category in spans)
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
        spans=tuple(spans),
        segment_document=google_cell_read(group["doc"]),
    )


def mqm_options(
    parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ImportOptions, ParsedJudgments]:
    """An MQM TSV file holds MQM judgments: it is imported under the MQM protocol."""
    if options.protocol != MQM:
        return replace(options, protocol=MQM, criterion=""), parsed
    return options, parsed


def mqm_texts(
    parsed: ParsedJudgments, companions: Sequence[UploadFile]
) -> tuple[ParsedUpload, ParsedJudgments]:
    """The texts of a release (see the module) as an upload of a new campaign brings them, and
    the rows with their segments as ``doc:seg_id``. Refused, naming the line: a ``seg_id`` under
    two documents, an empty source, a source or a system's output that differs between rows."""
    problems = Problems(parsed.file)
    if companions:
        names = ", ".join(c.name for c in companions)
        problems.add(None, f"Google's MQM TSV carries its texts; it takes no other file ({names})")
    documents: dict[str, dict[str, ParsedSegment]] = {}
    document_of: dict[str, str] = {}
    outputs: dict[str, ParsedOutput] = {}
    for row in parsed.rows:
        doc, seg_id = row.segment_document, row.segment
        source, output = google_cell_read(row.source_text), google_cell_read(row.output_text)
        if document_of.setdefault(seg_id, doc) != doc:
            problems.add(
                row.line,
                f"seg_id {seg_id} is in doc {doc!r} here and in doc {document_of[seg_id]!r} "
                "on an earlier line (a seg_id numbers one segment of the whole test set)",
            )
            continue
        if not doc or not source.strip():
            problems.add(row.line, "the doc or the source is empty (a campaign needs both)")
            continue
        segment = documents.setdefault(doc, {}).setdefault(
            seg_id, ParsedSegment(doc, seg_id, source, [], row.line, parsed.file)
        )
        if not same_text(segment.source, source):
            problems.add(
                row.line, f"the source differs from line {segment.line}'s of seg_id {seg_id}"
            )
            continue
        out = outputs.setdefault(
            row.system, ParsedOutput(system=row.system, run=DEFAULT_RUN, file=parsed.file)
        )
        text, line = out.by_key.setdefault((doc, seg_id), (output, row.line))
        if text != output:
            problems.add(
                row.line, f"{row.system}'s output differs from line {line}'s of seg_id {seg_id}"
            )
    problems.raise_if_any()
    segments = [
        segment
        for by_id in documents.values()
        for _id, segment in sorted(by_id.items(), key=lambda item: int(item[0]))
    ]
    upload = ParsedUpload(
        form=FORMAT_MQM,
        files=[parsed.file],
        segments=segments,
        reference_labels=[],
        outputs=list(outputs.values()),
    )
    return upload, _rows_by_document(parsed)


def _rows_by_document(parsed: ParsedJudgments) -> ParsedJudgments:
    """The rows with their segments as ``doc:seg_id`` (rows already so are left alone)."""
    rows = [
        replace(row, segment=f"{row.segment_document}:{row.segment}")
        if row.segment_document and is_line_number(row.segment)
        else row
        for row in parsed.rows
    ]
    return replace(parsed, rows=rows)


def campaign_keeps_google_ids(campaign: Campaign) -> bool:
    """Whether the campaign was built from a release of this layout (its texts an upload of
    this form): its segments' ids are Google's ``seg_id``s, which its files read and write."""
    return Upload.objects.filter(campaign=campaign, form=FORMAT_MQM).exists()


def mqm_segments(
    *, campaign: Campaign, parsed: ParsedJudgments, options: ImportOptions
) -> tuple[ParsedJudgments, dict[str, Any] | None]:
    """A campaign built from a release numbers segments by Google's ``seg_id`` within ``doc``:
    the rows are read so. Any other campaign reads ``seg_id`` as a line of its test set, as
    the rows give it."""
    if not campaign_keeps_google_ids(campaign):
        return parsed, None
    return _rows_by_document(parsed), None


FORMAT = JudgmentFormat(
    key=FORMAT_MQM,
    label=_("Google's MQM TSV (error spans; imported as MQM)"),
    looks_like=lambda _name, lines, first: looks_like_mqm_tsv(lines[first]),
    parse=parse_mqm_tsv,
    options=mqm_options,
    segments=mqm_segments,
    texts=mqm_texts,
)
