"""Reports of the human-judgment analysis (every column is documented in ``docs/reports.md``).

- The normalised judgment report: one row per annotator × item × shown output × criterion, in a
  stable order, as CSV, TSV or JSON lines, produced as an iterator of byte chunks from chunked
  queries (a server-side cursor), so that no whole file is ever held in memory.
- The system report (scores, intervals, ranks, clusters, with the method) as CSV, JSON and
  LaTeX, and the annotator report (QC, agreement with oneself, time) as CSV, both from a
  :class:`~annotation.analysis.results.CampaignAnalysis`.

Annotators appear under their pseudonym (``A001``) unless an organizer asks for real names.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import logging
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any
from urllib.parse import quote

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Case, CharField, F, Func, TextField, Value, When
from django.db.models.functions import Cast, Concat
from django.utils.text import slugify

from annotation.analysis.qc import criterion_qc
from annotation.analysis.results import CampaignAnalysis, CriterionAnalysis
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    ITEM_TYPE_NAMES,
    KIND_CODE,
    campaign_criteria,
    criterion_table_load,
)
from annotation.models import (
    AnnotatorDecision,
    AnnotatorPseudonym,
    Campaign,
    ItemKind,
    Judgment,
    JudgmentValue,
    ProtocolConfig,
    pseudonym_code,
)
from evalcore.human import ItemType

JUDGMENT_FORMATS = ("csv", "tsv", "jsonl")
SYSTEM_FORMATS = ("csv", "json", "tex")
logger = logging.getLogger(__name__)

CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "jsonl": "application/x-ndjson; charset=utf-8",
    "json": "application/json",
    "tex": "application/x-tex; charset=utf-8",
}

JUDGMENT_COLUMNS = (
    "campaign",
    "protocol",
    "protocol_type",
    "task",
    "item",
    "output",
    "document",
    "segment",
    "line",
    "system",
    "run",
    "annotator",
    "item_type",
    "criterion",
    "raw",
    "shifted",
    "z",
    "qc_status",
    "included",
    "started",
    "submitted",
    "seconds",
)
# The stable order: protocol configs as created, then task, item, shown output, annotator,
# criterion, and the value's id as the last tie-breaker.
JUDGMENT_ORDER = (
    "judgment__item__task__config__created",
    "judgment__item__task__config_id",
    "judgment__item__task__position",
    "judgment__item__position",
    "output__position",
    "judgment__annotator_id",
    "criterion",
    "id",
)
_QUERY_COLUMNS = (
    "id",
    "judgment__item__task__config_id",
    "judgment__item__task__position",
    "judgment__item__position",
    "output__position",
    "judgment__item__segment__document__external_id",
    "judgment__item__segment__external_id",
    "judgment__item__segment__position",
    "output__system__name",
    "output__run__name",
    "judgment__annotator_id",
    "kind_code",
    "criterion",
    "value",
    "judgment__shown_at",
    "judgment__submitted_at",
    "judgment__seconds",
)
STATUS_CODES = ("", "passed", "failed", "untested")
# Sort memory of the report query on PostgreSQL (its default, 4 MB, sorts a million rows on
# disk at about twice the time).
REPORT_WORK_MEM = "128MB"


def annotator_labels(*, campaign: Campaign, real_names: bool = False) -> dict[int, str]:
    """``{user id: label}``: pseudonyms (A001, …; call
    :func:`annotation.analysis.services.annotator_pseudonyms_ensure` first) or usernames."""
    if real_names:
        user_model = get_user_model()
        ids = Judgment.objects.filter(item__task__config__campaign=campaign).values_list(
            "annotator_id", flat=True
        )
        return dict(
            user_model.objects.filter(pk__in=ids).values_list("pk", user_model.USERNAME_FIELD)
        )
    return {
        annotator: pseudonym_code(number)
        for annotator, number in AnnotatorPseudonym.objects.filter(campaign=campaign).values_list(
            "annotator_id", "number"
        )
    }


@dataclass(frozen=True)
class RowStatistics:
    """Per JudgmentValue id (sorted ascending): the normalised scores and the QC outcome of
    the row's annotator on the row's criterion."""

    value_ids: npt.NDArray[np.int64]
    shifted: npt.NDArray[np.float64]
    z: npt.NDArray[np.float64]
    status: npt.NDArray[np.int8]  # index into STATUS_CODES
    included: npt.NDArray[np.bool_]
    # User ids of the annotators of these rows.
    annotators: frozenset[int] = frozenset()

    def lookup(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Positions of ``ids`` in this table; -1 for rows added after it was computed."""
        if self.value_ids.size == 0:
            return np.full(ids.shape, -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self.value_ids, ids), self.value_ids.size - 1)
        return np.where(self.value_ids[position] == ids, position, -1).astype(np.int64)


def judgment_row_statistics(*, campaign: Campaign, settings: AnalysisSettings) -> RowStatistics:
    """Normalised scores and QC status of every judgment value of the campaign, computed per
    protocol config and criterion by the core (``normalise`` and ``annotator_qc`` via
    :func:`annotation.analysis.qc.criterion_qc`). Ranking criteria have no shifted or z
    score."""
    decisions = {d.annotator_id: d for d in AnnotatorDecision.objects.filter(campaign=campaign)}
    parts: list[tuple[Any, ...]] = []
    annotators: set[int] = set()
    for config, criterion in campaign_criteria(campaign=campaign):
        table = criterion_table_load(config=config, criterion=criterion)
        annotators.update(table.annotator_ids.tolist())
        verdict = criterion_qc(table=table, settings=settings, decisions=decisions)
        n = len(table.judgments)
        annotator = table.judgments.annotator
        status_of = np.array([STATUS_CODES.index(s) for s in verdict.statuses], dtype=np.int8)
        if verdict.normalised is None:
            shifted = np.full(n, np.nan)
            z = np.full(n, np.nan)
        else:
            shifted = verdict.normalised.shifted
            z = verdict.normalised.z
        parts.append(
            (
                table.value_ids,
                shifted,
                z,
                status_of[annotator] if n else np.zeros(0, np.int8),
                verdict.included[annotator] if n else np.zeros(0, bool),
            )
        )
    if not parts:
        empty = np.zeros(0)
        return RowStatistics(
            empty.astype(np.int64), empty, empty, empty.astype(np.int8), empty.astype(bool)
        )
    columns = [np.concatenate(column) for column in zip(*parts, strict=True)]
    order = np.argsort(columns[0], kind="stable")
    return RowStatistics(*(c[order] for c in columns), annotators=frozenset(annotators))


class _IsoUtc(Func):
    """A timestamp as ISO 8601 text in UTC with microseconds, made by PostgreSQL (parsing a
    million timestamps into datetimes only to print them again would dominate the report)."""

    template = (
        "to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"
    )
    output_field = CharField()


def judgment_report_queryset(*, campaign: Campaign, text_numbers: bool = False) -> Any:
    """The report's rows as tuples of :data:`_QUERY_COLUMNS`, in the stable order.

    On PostgreSQL times come as ISO 8601 text and, with ``text_numbers``, the raw score and
    the seconds as the database's shortest exact text (what :func:`float_text` writes), so
    that the CSV and TSV reports format no timestamp and fewer floats in Python.
    """
    queryset = JudgmentValue.objects.filter(
        judgment__item__task__config__campaign=campaign
    ).annotate(kind_code=KIND_CODE)
    columns = list(_QUERY_COLUMNS)
    if connection.vendor == "postgresql":
        texts: dict[str, Any] = {
            "judgment__shown_at": _IsoUtc("judgment__shown_at"),
            "judgment__submitted_at": _IsoUtc("judgment__submitted_at"),
        }
        if text_numbers:
            texts["value"] = Cast("value", TextField())
            texts["judgment__seconds"] = Cast("judgment__seconds", TextField())
        names = {column: f"_text{i}" for i, column in enumerate(texts)}
        queryset = queryset.annotate(**{names[c]: e for c, e in texts.items()})
        columns = [names.get(c, c) for c in columns]
    return queryset.order_by(*JUDGMENT_ORDER).values_list(*columns)


def _iso(value: Any) -> str | None:
    """Times as PostgreSQL's to_char above writes them (other databases give datetimes)."""
    if value is None or isinstance(value, str):
        return value
    return str(value.astimezone(UTC).isoformat(timespec="microseconds"))


def float_text(value: Any) -> str:
    """A number as PostgreSQL prints a double: the shortest text that reads back exactly,
    without a trailing ".0" (73, 0.1, 1e-05); empty for missing and non-finite values. Text
    that the database already formatted passes through."""
    if value is None:
        return ""
    if value.__class__ is str:
        return value if value not in ("NaN", "Infinity", "-Infinity") else ""
    if value != value or value in _INFINITE:  # NaN is the one value unequal to itself
        return ""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


@contextlib.contextmanager
def _report_transaction() -> Iterator[None]:
    """One transaction for a whole report. On PostgreSQL it is REPEATABLE READ when the report
    opens it (so that the normalisation pass and the rows see the same judgments) and sorts
    in memory (``work_mem``)."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                if outermost:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cursor.execute(f"SET LOCAL work_mem = '{REPORT_WORK_MEM}'")
        yield


# How many snapshots a report takes at most to find every annotator of its judgments numbered.
REPORT_LABEL_ATTEMPTS = 5


@contextlib.contextmanager
def _report_snapshot(
    *, campaign: Campaign, settings: AnalysisSettings, real_names: bool
) -> Iterator[tuple[RowStatistics, dict[int, str]]]:
    """The report's transaction (:func:`_report_transaction`) with the normalisation pass and
    the annotators' labels read in it.

    With pseudonyms, every annotator of the snapshot's judgments has one. The caller numbers
    the annotators first (:func:`annotation.analysis.services.annotator_pseudonyms_ensure`),
    but one whose first judgment lands between that and the snapshot has no number in it:
    then the snapshot is dropped, the newcomers numbered, and a new snapshot taken (the last
    attempt goes ahead, naming any still unnumbered annotator by user id)."""
    for attempt in range(1, REPORT_LABEL_ATTEMPTS + 1):
        with _report_transaction():
            statistics = judgment_row_statistics(campaign=campaign, settings=settings)
            labels = annotator_labels(campaign=campaign, real_names=real_names)
            if real_names or statistics.annotators <= labels.keys():
                yield statistics, labels
                return
            if attempt == REPORT_LABEL_ATTEMPTS:
                logger.warning(
                    "Report of campaign %s names %d annotators by user id: new annotators "
                    "kept arriving while it was numbering them.",
                    campaign.pk,
                    len(statistics.annotators - labels.keys()),
                )
                yield statistics, labels
                return
        annotator_pseudonyms_ensure(campaign=campaign, judged=statistics.annotators)


def _report_chunks(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None,
    real_names: bool,
    chunk_size: int,
    text_numbers: bool = False,
) -> Iterator[dict[str, list[Any]]]:
    """The report column by column, one chunk of rows at a time (Python values; None where a
    value is missing, NaN for a normalised score that does not exist).

    On PostgreSQL the whole report is read in one REPEATABLE READ transaction (when it opens
    the transaction itself), so the normalisation pass and the rows see the same judgments,
    with ``work_mem`` raised for it so that the stable order is sorted in memory.
    """
    with _report_snapshot(
        campaign=campaign, settings=settings or AnalysisSettings(), real_names=real_names
    ) as (statistics, labels):
        yield from _report_chunks_in_snapshot(
            campaign=campaign,
            statistics=statistics,
            labels=labels,
            chunk_size=chunk_size,
            text_numbers=text_numbers,
        )


def _report_chunks_in_snapshot(
    *,
    campaign: Campaign,
    statistics: RowStatistics,
    labels: dict[int, str],
    chunk_size: int,
    text_numbers: bool,
) -> Iterator[dict[str, list[Any]]]:
    configs = {c.pk: (c.name, c.protocol) for c in ProtocolConfig.objects.filter(campaign=campaign)}
    queryset = judgment_report_queryset(campaign=campaign, text_numbers=text_numbers)
    rows = queryset.iterator(chunk_size=chunk_size)
    campaign_name = campaign.name
    while True:
        chunk = list(itertools.islice(rows, chunk_size))
        if not chunk:
            return
        n = len(chunk)
        c = list(zip(*chunk, strict=True))
        position = statistics.lookup(np.fromiter(c[0], dtype=np.int64, count=n))
        known = position >= 0
        at = np.maximum(position, 0)
        status = np.where(known, statistics.status[at], 0)
        config = [configs[k] for k in c[1]]
        yield {
            "campaign": [campaign_name] * n,
            "protocol": [name for name, _ in config],
            "protocol_type": [protocol for _, protocol in config],
            "task": [v + 1 for v in c[2]],
            "item": [v + 1 for v in c[3]],
            "output": [v + 1 for v in c[4]],
            "document": list(c[5]),
            "segment": list(c[6]),
            "line": [v + 1 for v in c[7]],
            "system": list(c[8]),
            "run": list(c[9]),
            "annotator": [labels.get(v) or str(v) for v in c[10]],
            "item_type": [ITEM_TYPE_NAMES[v] for v in c[11]],
            "criterion": list(c[12]),
            "raw": list(c[13]),
            "shifted": np.where(known, statistics.shifted[at], np.nan).tolist(),
            "z": np.where(known, statistics.z[at], np.nan).tolist(),
            "qc_status": [STATUS_CODES[v] or None for v in status.tolist()],
            "included": (known & statistics.included[at]).tolist(),
            "started": [_iso(v) for v in c[14]],
            "submitted": [_iso(v) for v in c[15]],
            "seconds": list(c[16]),
        }


def judgment_report_rows(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    real_names: bool = False,
    chunk_size: int = 5000,
) -> Iterator[list[tuple[Any, ...]]]:
    """The normalised judgment report as chunks of rows (tuples in :data:`JUDGMENT_COLUMNS`
    order; numbers as floats, times as ISO 8601 text, missing values as None or NaN)."""
    for columns in _report_chunks(
        campaign=campaign, settings=settings, real_names=real_names, chunk_size=chunk_size
    ):
        yield list(zip(*(columns[name] for name in JUDGMENT_COLUMNS), strict=True))


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
            text[name] = [str(v) for v in values]
        elif name == "included":
            text[name] = ["1" if v else "0" for v in values]
        elif tsv:
            text[name] = ["" if v is None else _tsv_field(v) for v in values]
        else:
            text[name] = ["" if v is None else _csv_quote(v) for v in values]
    return list(zip(*(text[name] for name in JUDGMENT_COLUMNS), strict=True))


_INFINITE = (math.inf, -math.inf)


def _text(value: Any) -> str:
    """One field of the small reports as text (same conventions as the judgment report)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return float_text(value)
    return str(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _csv_quote(text: str) -> str:
    """A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break."""
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def _tsv_field(text: str) -> str:
    """A TSV field: tabs and line breaks become spaces, so every row stays one line of the same
    width; then quoted (quotes doubled) when it holds a quote, as Python's ``excel-tab`` CSV
    dialect writes it. Tab-separated readers (pandas, R's ``read.delim``, spreadsheets) take a
    field that begins with a quote for a quoted one: unquoted, ``"Best" MT`` read back as
    ``Best MT`` and ``"MT`` swallowed the rows after it."""
    flat = text.translate(_NO_BREAKS)
    if '"' in flat:
        return '"' + flat.replace('"', '""') + '"'
    return flat


class _CsvText(Func):
    """PostgreSQL: ``COALESCE(x, '')`` written as a CSV field by the rule of :func:`_csv_quote`."""

    template = (
        "CASE WHEN COALESCE(%(expressions)s, '') ~ '[\",\\r\\n]' "
        "THEN '\"' || replace(%(expressions)s, '\"', '\"\"') || '\"' "
        "ELSE COALESCE(%(expressions)s, '') END"
    )
    output_field = TextField()


class _TsvText(Func):
    """PostgreSQL: ``COALESCE(x, '')`` written as a TSV field by the rule of :func:`_tsv_field`."""

    template = (
        "CASE WHEN strpos(COALESCE(%(expressions)s, ''), '\"') > 0 "
        "THEN '\"' || replace(translate(%(expressions)s, E'\\t\\r\\n', '   '), '\"', '\"\"') "
        "|| '\"' "
        "ELSE translate(COALESCE(%(expressions)s, ''), E'\\t\\r\\n', '   ') END"
    )
    output_field = TextField()


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
                sep,
                field("output__system__name"),
                sep,
                field("output__run__name"),
                output_field=TextField(),
            ),
            _middle=Concat(
                item_type,
                sep,
                field("criterion"),
                sep,
                Cast("value", TextField()),
                output_field=TextField(),
            ),
            _tail=Concat(
                _IsoUtc("judgment__shown_at"),
                sep,
                _IsoUtc("judgment__submitted_at"),
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
    with _report_snapshot(
        campaign=campaign, settings=settings or AnalysisSettings(), real_names=real_names
    ) as (statistics, names):
        labels = {k: text(v) for k, v in names.items()}
        heads = {
            c.pk: separator.join(text(v) for v in (campaign.name, c.name, c.protocol))
            for c in ProtocolConfig.objects.filter(campaign=campaign)
        }
        rows = _line_parts(campaign=campaign, separator=separator).iterator(chunk_size=chunk_size)
        status_text = [text(v) for v in STATUS_CODES]
        while True:
            chunk = list(itertools.islice(rows, chunk_size))
            if not chunk:
                return
            n = len(chunk)
            ids = np.fromiter((r[0] for r in chunk), dtype=np.int64, count=n)
            position = statistics.lookup(ids)
            known = position >= 0
            at = np.maximum(position, 0)
            shifted = _finite_texts(np.where(known, statistics.shifted[at], np.nan))
            z = _finite_texts(np.where(known, statistics.z[at], np.nan))
            status = np.where(known, statistics.status[at], 0).tolist()
            included = (known & statistics.included[at]).tolist()
            s = separator
            yield "".join(
                f"{heads[r[1]]}{s}{r[3]}{s}{labels.get(r[2]) or r[2]}{s}{r[4]}{s}{shifted[i]}{s}"
                f"{z[i]}{s}{status_text[status[i]]}{s}{'1' if included[i] else '0'}{s}{r[5]}\n"
                for i, r in enumerate(chunk)
            )


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
    per ``chunk_size`` rows. For ``StreamingHttpResponse`` and files alike.

    On PostgreSQL the CSV and TSV rows are mostly written by the database (see
    :func:`_line_parts`); ``python_text`` writes them in Python instead, as on other
    databases (the same text: the tests compare the two).
    """
    if file_format not in JUDGMENT_FORMATS:
        raise ValueError(f"unknown report format {file_format!r}; use csv, tsv or jsonl")
    chunks = _report_chunks(
        campaign=campaign,
        settings=settings,
        real_names=real_names,
        chunk_size=chunk_size,
        text_numbers=file_format != "jsonl",
    )
    if file_format == "jsonl":
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
        return
    separator = "\t" if file_format == "tsv" else ","
    yield (separator.join(JUDGMENT_COLUMNS) + "\n").encode()
    if connection.vendor == "postgresql" and not python_text:
        for lines in _database_lines(
            campaign=campaign,
            settings=settings,
            real_names=real_names,
            chunk_size=chunk_size,
            separator=separator,
        ):
            yield lines.encode()
        return
    for columns in chunks:
        lines = _text_columns(columns, tsv=file_format == "tsv")
        yield "".join(separator.join(line) + "\n" for line in lines).encode()


# --------------------------------------------------------------------------------------------
# System and annotator reports (small: built whole)

SYSTEM_COLUMNS = (
    "protocol",
    "protocol_type",
    "criterion",
    "system",
    "position",
    "cluster",
    "rank_low",
    "rank_high",
    "wins",
    "losses",
    "n_judgments",
    "n_segments",
    "score",
    "space",
    "mean_raw",
    "mean_shifted",
    "mean_z",
    "t_low",
    "t_high",
    "boot_low",
    "boot_high",
    "expected_wins",
    "no_worse_share",
    "trueskill_mu",
    "trueskill_sigma",
    "trueskill_rank",
    "trueskill_rank_low",
    "trueskill_rank_high",
    "significance_test",
    "alpha",
    "confidence",
    "n_bootstrap",
    "seed",
    "version",
)


def _score_space(criterion: CriterionAnalysis) -> str:
    return "expected_wins" if criterion.kind == "ranking" else str(criterion.method["space"])


def system_report_rows(analysis: CampaignAnalysis) -> Iterator[tuple[Any, ...]]:
    """One row per protocol config × criterion × system, ranked systems first."""
    for criterion in analysis.criteria:
        method = criterion.method
        n_bootstrap = method.get("n_bootstrap", method.get("trueskill_bootstrap"))
        for system in criterion.systems:
            yield (
                criterion.config_name,
                criterion.protocol,
                criterion.criterion,
                system.name,
                system.position or None,
                system.cluster or None,
                system.rank_low or None,
                system.rank_high or None,
                system.wins,
                system.losses,
                system.n_judgments,
                system.n_segments,
                system.score,
                _score_space(criterion),
                system.mean_raw,
                system.mean_shifted,
                system.mean_z,
                system.t_low,
                system.t_high,
                system.boot_low,
                system.boot_high,
                system.expected_wins,
                system.no_worse_share,
                system.trueskill_mu,
                system.trueskill_sigma,
                system.trueskill_rank,
                system.trueskill_rank_low,
                system.trueskill_rank_high,
                method["significance_test"],
                method["alpha"],
                method["confidence"],
                n_bootstrap,
                method["seed"],
                method["version"],
            )


def _csv(columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([_text(v) for v in row] for row in rows)
    return buffer.getvalue()


def system_report_csv(analysis: CampaignAnalysis) -> str:
    """The system report as CSV (:data:`SYSTEM_COLUMNS`)."""
    return _csv(SYSTEM_COLUMNS, system_report_rows(analysis))


def system_report_json(analysis: CampaignAnalysis) -> dict[str, Any]:
    """Systems, clusters, significance matrix, agreement and method per criterion (no
    per-annotator data: that is the annotator report)."""
    data = analysis.as_json()
    for criterion in data["criteria"]:
        criterion.pop("annotators")
    return data


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Under pdfLaTeX's default OT1 font encoding these print as ¡, ¿ and a dash.
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell (system names come from uploads)."""
    return "".join(LATEX_SPECIAL.get(c, c) for c in " ".join(text.splitlines()))


def _fixed(value: float | None, digits: int = 3) -> str:
    return "--" if value is None else f"{value:.{digits}f}"


def system_report_latex(analysis: CampaignAnalysis) -> str:
    """One ``table``/``tabular`` per criterion in the WMT style: rank range, system, score with
    its t interval (at the analysis's confidence level), raw mean and counts, a rule between
    clusters (needs ``booktabs``)."""
    parts = [
        "% EvalSite human evaluation: system report",
        f"% campaign {analysis.campaign_id}; {analysis.version}",
        "% \\usepackage{booktabs}",
    ]
    for criterion in analysis.criteria:
        method = criterion.method
        ranking = criterion.kind == "ranking"
        caption = (
            f"{latex_escape(criterion.config_name)}: {latex_escape(criterion.criterion_label)}. "
            + (
                "Expected Wins; clusters from the one-sided sign test"
                if ranking
                else f"mean {method['space']} score over segments with "
                f"{criterion.confidence_percent}\\% t interval; "
                f"clusters from the one-sided {method['significance_test']} test"
            )
            + f" at $p < {method['alpha']}$; seed {method['seed']}."
        )
        if ranking:
            header = r"\# & Range & System & EW & No worse & TrueSkill $\mu$ & TS range & $n$ \\"
            spec = "rrlrrrrr"
        else:
            header = (
                rf"\# & Range & System & Score & {criterion.confidence_percent}\% CI & Raw & $n$ "
                r"& Segs \\"
            )
            spec = "rrlrrrrr"
        lines = [
            "",
            r"\begin{table}[t]",
            r"\centering",
            f"\\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            header,
            r"\midrule",
        ]
        previous_cluster = None
        for system in criterion.ranked_systems:
            if previous_cluster is not None and system.cluster != previous_cluster:
                lines.append(r"\midrule")
            previous_cluster = system.cluster
            rank_range = (
                str(system.rank_low)
                if system.rank_low == system.rank_high
                else f"{system.rank_low}--{system.rank_high}"
            )
            name = latex_escape(system.name)
            if ranking:
                if system.trueskill_rank_low is None:
                    skill_range = "---"  # no bootstrap runs, no range
                elif system.trueskill_rank_low != system.trueskill_rank_high:
                    skill_range = f"{system.trueskill_rank_low}--{system.trueskill_rank_high}"
                else:
                    skill_range = str(system.trueskill_rank_low)
                cells = [
                    str(system.position),
                    rank_range,
                    name,
                    _fixed(system.expected_wins),
                    _fixed(system.no_worse_share),
                    _fixed(system.trueskill_mu, 2),
                    skill_range,
                    str(system.n_judgments),
                ]
            else:
                interval = (
                    "--"
                    if system.t_low is None or system.t_high is None
                    else f"[{_fixed(system.t_low)}, {_fixed(system.t_high)}]"
                )
                cells = [
                    str(system.position),
                    rank_range,
                    name,
                    _fixed(system.score),
                    interval,
                    _fixed(system.mean_raw, 1),
                    str(system.n_judgments),
                    str(system.n_segments),
                ]
            lines.append(" & ".join(cells) + r" \\")
        lines += [
            r"\bottomrule",
            r"\end{tabular}",
            f"\\caption{{{caption}}}",
            r"\end{table}",
        ]
        parts.extend(lines)
    return "\n".join(parts) + "\n"


ANNOTATOR_COLUMNS = (
    "protocol",
    "protocol_type",
    "criterion",
    "annotator",
    "n_rows",
    "qc_status",
    "qc_test",
    "qc_space",
    "qc_threshold",
    "qc_pairs",
    "qc_statistic",
    "qc_p",
    "qc_mean_difference",
    "qc_uninformative",
    "decision",
    "decision_reason",
    "included",
    "repeats",
    "repeats_within_tolerance",
    "repeats_pearson",
    "repeats_kendall_tau",
    "repeat_tolerance",
    "references",
    "references_mean",
    "mean",
    "sd",
    "degenerate",
    "seconds_on_task",
    "screens",
    "screens_without_time",
    "screens_capped",
    "idle_cap",
    "version",
)


def annotator_report_rows(
    analysis: CampaignAnalysis, labels: dict[int, str]
) -> Iterator[tuple[Any, ...]]:
    """One row per protocol config × criterion × annotator."""
    for criterion in analysis.criteria:
        method = criterion.method
        ranking = criterion.kind == "ranking"
        for a in criterion.annotators:
            yield (
                criterion.config_name,
                criterion.protocol,
                criterion.criterion,
                labels.get(a.annotator_id, a.pseudonym or str(a.annotator_id)),
                a.n_rows,
                a.qc_status,
                method.get("qc_test"),
                method.get("qc_space"),
                method.get("threshold"),
                a.qc_n,
                a.qc_statistic,
                a.qc_p,
                a.qc_mean_difference,
                a.qc_uninformative if ranking else None,
                None if a.decision is None else ("include" if a.decision else "exclude"),
                a.decision_reason or None,
                a.included,
                a.repeats_n,
                a.repeats_share_within,
                a.repeats_pearson,
                a.repeats_kendall_tau,
                None if ranking else method["tolerance"],
                a.references_n,
                a.references_mean,
                a.mean,
                a.sd,
                a.degenerate,
                a.time_seconds,
                a.n_screens,
                a.n_unknown_time,
                a.n_capped,
                analysis.settings.idle_cap,
                method["version"],
            )


def annotator_report_csv(analysis: CampaignAnalysis, labels: dict[int, str]) -> str:
    """The annotator report as CSV (:data:`ANNOTATOR_COLUMNS`)."""
    return _csv(ANNOTATOR_COLUMNS, annotator_report_rows(analysis, labels))


def download_disposition(campaign_name: str, report: str, extension: str) -> str:
    """The ``Content-Disposition`` of a download named ``<campaign>-<report>.<ext>``: the
    campaign's name as a slug of at most 40 characters, in ASCII for every client
    (``filename``, accents dropped: "Ärger" → "arger") and, when that lost letters, as written
    (``filename*``, RFC 6266: "ärger", "日本語")."""
    ascii_slug = slugify(campaign_name)[:40].strip("-_") or "campaign"
    unicode_slug = slugify(campaign_name, allow_unicode=True)[:40].strip("-_") or "campaign"
    disposition = f'attachment; filename="{ascii_slug}-{report}.{extension}"'
    if unicode_slug != ascii_slug:
        disposition += f"; filename*=utf-8''{quote(f'{unicode_slug}-{report}.{extension}')}"
    return disposition
