"""The judgment report's lines written as text: CSV and TSV quoting, numbers and times, by the
database on PostgreSQL and in Python elsewhere."""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import Case, F, Func, TextField, Value, When
from django.db.models.functions import Cast, Concat

from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    ITEM_TYPE_NAMES,
)
from annotation.models import (
    Campaign,
    ItemKind,
    JudgmentValue,
    ProtocolConfig,
)
from annotation.protocols import SCORES_STANDARDISED, Protocol
from annotation.reports.answer_cells import answer_cell_kinds, chunk_answer_cells
from annotation.reports.documents import document_report_columns
from annotation.reports.judgments import (
    JUDGMENT_COLUMNS,
    JUDGMENT_ORDER,
    STATUS_CODES,
    IsoUtc,
    float_text,
    report_chunks,
    report_snapshot,
)
from annotation.reports.merged import Credits, campaign_credits, chunk_expansion, is_real_kind
from annotation.reports.span_cells import chunk_spans, row_spans, span_cell, span_config_ids
from annotation.reports.text import (
    CSV_TYPE,
    JSONL_TYPE,
    TSV_TYPE,
    ReportFormat,
    extensions_text,
    report_format,
)
from evalcore.human import ItemType
from evalsite.db import features
from evalsite.formatting import formula_safe

_NO_BREAKS = str.maketrans({"\t": " ", "\r": " ", "\n": " "})

_TEXT_COLUMNS = ("campaign", "protocol", "document", "segment", "system", "run", "annotator")

_FLOAT_COLUMNS = ("raw", "shifted", "z", "seconds")

_INT_COLUMNS = ("task", "item", "output", "line")


def _text_columns(columns: dict[str, list[Any]], *, tsv: bool) -> list[tuple[str, ...]]:
    """Rows of text fields: empty for missing and non-finite numbers, the shortest round-trip
    text for floats, 1/0 for booleans, texts quoted for CSV by :func:`_csv_quote` and for TSV
    by :func:`_tsv_field`."""
    text: dict[str, list[str]] = {}
    for name in JUDGMENT_COLUMNS:
        values = columns[name]
        if name in _FLOAT_COLUMNS:
            # x == x is False for NaN only
            text[name] = [float_text(v) for v in values]
        elif name in _INT_COLUMNS:
            # None: the output and line of a document-level row.
            text[name] = ["" if v is None else str(v) for v in values]
        elif name == "included":
            text[name] = ["1" if v else "0" for v in values]
        elif name == "merged":
            text[name] = ["" if v is None else str(v) for v in values]
        elif name == "spans":
            quote = _tsv_field if tsv else _csv_quote
            text[name] = [quote(span_cell(v)) if v else "" for v in values]
        elif tsv:
            text[name] = ["" if v is None else _tsv_field(v) for v in values]
        else:
            text[name] = ["" if v is None else _csv_quote(v) for v in values]
    return list(zip(*(text[name] for name in JUDGMENT_COLUMNS), strict=True))


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _csv_quote(text: str) -> str:
    """A CSV text field: safe from spreadsheets' formulas (:func:`formula_safe`), then quoted
    (quotes doubled) when it holds a comma, a quote or a line break."""
    text = formula_safe(text)
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _tsv_field(text: str) -> str:
    """A TSV field: tabs and line breaks become spaces, so every row stays one line of the same
    width; then quoted (quotes doubled) when it holds a quote, as Python's ``excel-tab`` CSV
    dialect writes it. Tab-separated readers (pandas, R's ``read.delim``, spreadsheets) take a
    field that begins with a quote for a quoted one: unquoted, ``"Best" MT`` read back as
    ``Best MT`` and ``"MT`` swallowed the rows after it. A text that begins like a formula is
    made safe as in CSV (:func:`formula_safe`)."""
    flat = formula_safe(text.translate(_NO_BREAKS))
    if '"' in flat:
        return '"' + flat.replace('"', '""') + '"'
    return flat


def _formula_safe_sql(text: str) -> str:
    """PostgreSQL: the SQL text ``text`` made safe from spreadsheets' formulas, by the rule of
    :func:`evalsite.formatting.formula_safe` (a leading apostrophe)."""
    return f"(CASE WHEN {text} ~ '^[-=+@\\t\\r]' THEN '''' || {text} ELSE {text} END)"


_CSV_FIELD_SQL = _formula_safe_sql("COALESCE(%(expressions)s, '')")
_TSV_FIELD_SQL = _formula_safe_sql("translate(COALESCE(%(expressions)s, ''), E'\\t\\r\\n', '   ')")


class _CsvText(Func):
    """PostgreSQL: ``COALESCE(x, '')`` written as a CSV field by the rule of :func:`_csv_quote`."""

    template = (
        f"CASE WHEN {_CSV_FIELD_SQL} ~ '[\",\\r\\n]' "
        f"THEN '\"' || replace({_CSV_FIELD_SQL}, '\"', '\"\"') || '\"' "
        f"ELSE {_CSV_FIELD_SQL} END"
    )
    output_field = TextField()


class _TsvText(Func):
    """PostgreSQL: ``COALESCE(x, '')`` written as a TSV field by the rule of :func:`_tsv_field`."""

    template = (
        f"CASE WHEN strpos({_TSV_FIELD_SQL}, '\"') > 0 "
        f"THEN '\"' || replace({_TSV_FIELD_SQL}, '\"', '\"\"') || '\"' "
        f"ELSE {_TSV_FIELD_SQL} END"
    )
    output_field = TextField()


def _raw_text() -> Any:
    """The raw column as the database writes it: the value, or nothing for scores imported
    standardised (their raw scores are not known; the z column has the values)."""
    return Case(
        When(judgment__item__task__config__settings__scores=SCORES_STANDARDISED, then=Value("")),
        default=Cast("value", TextField()),
        output_field=TextField(),
    )


def _line_parts(*, campaign: Campaign, separator: str) -> Any:
    """PostgreSQL: the report's rows as (value id, config id, annotator id, and three runs of
    fields already written as text by the database: task … run, item type … raw, started …
    seconds), in the stable order. Python only adds the names, the annotator and the four
    columns of the normalisation pass."""
    field = _CsvText if separator == "," else _TsvText
    sep = Value(separator)

    def number(name: str) -> Any:
        return Cast(F(name) + 1, TextField())

    item_type = Case(
        *(
            When(output__kind=kind, then=Value(ITEM_TYPE_NAMES[int(code)]))
            for kind, code in (
                (ItemKind.REPEAT, ItemType.REPEAT),
                (ItemKind.REFERENCE, ItemType.REFERENCE),
                (ItemKind.BAD_REFERENCE, ItemType.BAD_REF),
            )
        ),
        default=Value(ITEM_TYPE_NAMES[int(ItemType.REAL)]),
        output_field=TextField(),
    )
    return (
        JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign)
        .annotate(
            _head=Concat(
                number("judgment__item__task__position"),
                sep,
                number("judgment__item__position"),
                sep,
                number("output__position"),
                sep,
                field("judgment__item__segment__document__external_id"),
                sep,
                field("judgment__item__segment__external_id"),
                sep,
                number("judgment__item__segment__position"),
                output_field=TextField(),
            ),
            _system=field("output__system__name"),
            _run=field("output__run__name"),
            _middle=Concat(
                item_type,
                sep,
                field("criterion"),
                sep,
                _raw_text(),
                output_field=TextField(),
            ),
            _tail=Concat(
                IsoUtc("judgment__shown_at"),
                sep,
                IsoUtc("judgment__submitted_at"),
                sep,
                Cast("judgment__seconds", TextField()),
                output_field=TextField(),
            ),
        )
        .order_by(*JUDGMENT_ORDER)
        .values_list(
            "id",
            "judgment__item__task__config_id",
            "judgment__annotator_id",
            "_head",
            "_middle",
            "_tail",
            "judgment_id",
            "output_id",
            "_system",
            "_run",
            "output__kind",
        )
    )


def _finite_texts(values: npt.NDArray[np.float64]) -> list[str]:
    """:func:`float_text` of a float array, inlined (two values per row of a million-row
    report). Infinities never occur among normalised scores: they are finite or NaN."""
    return [repr(v).removesuffix(".0") if v == v else "" for v in values.tolist()]


def _database_lines(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None,
    real_names: bool,
    chunk_size: int,
    separator: str,
) -> Iterator[str]:
    """PostgreSQL: the text report, one chunk of lines at a time (see :func:`_line_parts`)."""
    text = _csv_quote if separator == "," else _tsv_field
    settings = settings or campaign_analysis_settings(campaign=campaign)
    with report_snapshot(campaign=campaign, settings=settings, real_names=real_names) as (
        statistics,
        names,
    ):
        labels = {k: text(v) for k, v in names.items()}
        configs = {
            c.pk: (c.name, c.protocol) for c in ProtocolConfig.objects.filter(campaign=campaign)
        }
        heads = {
            pk: separator.join(text(v) for v in (campaign.name, name, protocol))
            for pk, (name, protocol) in configs.items()
        }
        with_spans = span_config_ids(configs)
        with_cells = answer_cell_kinds(configs)
        credits = campaign_credits(campaign=campaign)
        rows = _line_parts(campaign=campaign, separator=separator).iterator(chunk_size=chunk_size)
        status_text = [text(v) for v in STATUS_CODES]
        while True:
            chunk = _with_credits(list(itertools.islice(rows, chunk_size)), credits, text)
            if not chunk:
                break
            n = len(chunk)
            ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=n)
            position = statistics.lookup(ids)
            known = position >= 0
            at = np.maximum(position, 0)
            shifted = _finite_texts(np.where(known, statistics.shifted[at], np.nan))
            z = _finite_texts(np.where(known, statistics.z[at], np.nan))
            status = np.where(known, statistics.status[at], 0).tolist()
            included = (known & statistics.included[at]).tolist()
            cells = _span_cells(chunk, with_spans, text)
            answers = _answer_cells(chunk, with_cells, text)
            s = separator
            yield "".join(
                f"{heads[r[1]]}{s}{r[3]}{s}{r[8]}{s}{r[9]}{s}{r[11]}{s}{labels.get(r[2]) or r[2]}"
                f"{s}{r[4]}{s}{shifted[i]}{s}{z[i]}{s}{status_text[status[i]]}{s}"
                f"{'1' if included[i] else '0'}{s}{r[5]}{s}{cells[i]}{s}{answers[i]}\n"
                for i, r in enumerate(chunk)
            )
        # The document-level rows, in the same snapshot, written as the Python writer does.
        documents = document_report_columns(campaign=campaign, settings=settings, labels=names)
        if documents is not None:
            lines = _text_columns(documents, tsv=separator == "\t")
            yield "".join(separator.join(line) + "\n" for line in lines)


def _with_credits(
    chunk: list[tuple[Any, ...]], credits: Credits, text: Callable[[str], str]
) -> list[tuple[Any, ...]]:
    """A chunk of :func:`_line_parts` rows with a row per credited system after each real
    row of a merged output, and its last field the ``merged`` cell (the shown output's id)."""
    if not credits:
        return [(*r[:11], "") for r in chunk]
    grown = chunk_expansion([r[7] for r in chunk], [is_real_kind(r[10]) for r in chunk], credits)
    return [
        (
            *r[:8],
            r[8] if credit is None else text(credit[0]),
            r[9] if credit is None else text(credit[1]),
            r[10],
            "" if merged is None else str(merged),
        )
        for r, credit, merged in zip(grown.take(chunk), grown.credit, grown.merged, strict=True)
    ]


def _span_cells(
    chunk: list[tuple[Any, ...]], with_spans: frozenset[int], text: Callable[[str], str]
) -> list[str]:
    """The span cells of a chunk of :func:`_line_parts` rows (one query for the chunk, none
    when the campaign has no span kind)."""
    if not with_spans:
        return [""] * len(chunk)
    configs = [r[1] for r in chunk]
    judgments = [r[6] for r in chunk]
    spans = chunk_spans(configs, judgments, with_spans, with_text=False)
    return [
        text(span_cell(v)) if v else ""
        for v in row_spans(configs, judgments, [r[7] for r in chunk], spans)
    ]


def _answer_cells(
    chunk: list[tuple[Any, ...]], kinds: Mapping[int, Protocol], text: Callable[[str], str]
) -> list[str]:
    """The answer cells of a chunk of :func:`_line_parts` rows, as text ("" for none)."""
    if not kinds:
        return [""] * len(chunk)
    cells = chunk_answer_cells(
        [r[1] for r in chunk], [r[6] for r in chunk], [r[7] for r in chunk], kinds
    )
    return ["" if v is None else text(v) for v in cells]


def judgment_report_stream(
    *,
    campaign: Campaign,
    file_format: str,
    settings: AnalysisSettings | None = None,
    real_names: bool = False,
    chunk_size: int = 5000,
    python_text: bool = False,
) -> Iterator[bytes]:
    """The normalised judgment report as UTF-8 byte chunks: a header (CSV, TSV) and one chunk
    per ``chunk_size`` rows, in ``file_format`` (an extension of :data:`JUDGMENT_FORMATS`). For
    ``StreamingHttpResponse`` and files alike.

    On PostgreSQL the CSV and TSV rows are mostly written by the database (see
    :func:`_line_parts`); ``python_text`` writes them in Python instead, as on other
    databases (the same text: the tests compare the two).
    """
    chosen = report_format(JUDGMENT_FORMATS, file_format)
    if chosen is None:
        raise ValueError(
            f"unknown report format {file_format!r}; use {extensions_text(JUDGMENT_FORMATS)}"
        )
    yield from chosen.write(
        campaign=campaign,
        settings=settings,
        real_names=real_names,
        chunk_size=chunk_size,
        python_text=python_text,
    )


def _jsonl_stream(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None,
    real_names: bool,
    chunk_size: int,
    python_text: bool,
) -> Iterator[bytes]:
    """JSON lines written in Python from :func:`report_chunks`, numbers as numbers and spans
    with their texts."""
    chunks = report_chunks(
        campaign=campaign,
        settings=settings,
        real_names=real_names,
        chunk_size=chunk_size,
        text_numbers=False,
        span_texts=True,
    )
    for columns in chunks:
        rows = zip(*(columns[name] for name in JUDGMENT_COLUMNS), strict=True)
        yield "".join(
            json.dumps(
                dict(zip(JUDGMENT_COLUMNS, map(_json_value, row), strict=True)),
                ensure_ascii=False,
            )
            + "\n"
            for row in rows
        ).encode()


def _separated_stream(
    *,
    separator: str,
    campaign: Campaign,
    settings: AnalysisSettings | None,
    real_names: bool,
    chunk_size: int,
    python_text: bool,
) -> Iterator[bytes]:
    """CSV (``,``) or TSV (a tab): a header, then the rows written by the database where it
    can, else in Python."""
    yield (separator.join(JUDGMENT_COLUMNS) + "\n").encode()
    if features.formats_text() and not python_text:
        for lines in _database_lines(
            campaign=campaign,
            settings=settings,
            real_names=real_names,
            chunk_size=chunk_size,
            separator=separator,
        ):
            yield lines.encode()
        return
    chunks = report_chunks(
        campaign=campaign,
        settings=settings,
        real_names=real_names,
        chunk_size=chunk_size,
        text_numbers=True,
        span_texts=False,
    )
    for columns in chunks:
        rows = _text_columns(columns, tsv=separator == "\t")
        yield "".join(separator.join(line) + "\n" for line in rows).encode()


# The judgment report's formats: each streams the report as UTF-8 byte chunks.
JUDGMENT_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("csv", "CSV", CSV_TYPE, functools.partial(_separated_stream, separator=",")),
    ReportFormat("tsv", "TSV", TSV_TYPE, functools.partial(_separated_stream, separator="\t")),
    ReportFormat("jsonl", "JSONL", JSONL_TYPE, _jsonl_stream),
)
