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
import itertools
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import CharField, Func, TextField
from django.db.models.functions import Cast

from annotation.analysis.qc import criterion_qc
from annotation.analysis.selectors import campaign_analysis_settings
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
    Judgment,
    JudgmentValue,
    ProtocolConfig,
    pseudonym_code,
)
from annotation.reports.answer_cells import answer_cell_kinds, chunk_answer_cells
from annotation.reports.documents import document_report_columns
from annotation.reports.merged import campaign_credits, chunk_expansion
from annotation.reports.span_cells import chunk_spans, row_spans, span_config_ids
from evalsite.db import features

logger = logging.getLogger(__name__)

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
    "merged",
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
    "spans",
    "answer",
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
    "judgment_id",
    "output_id",
)

STATUS_CODES = ("", "passed", "failed", "untested")

# Sort memory of the report query on PostgreSQL (its default, 4 MB, sorts a million rows on
# disk at about twice the time).
REPORT_WORK_MEM = "128MB"

# How many snapshots a report takes at most to find every annotator of its judgments numbered.
REPORT_LABEL_ATTEMPTS = 5

INFINITE = (math.inf, -math.inf)


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
    ids, shifted_all, z_all, status, included = (c[order] for c in columns)
    return RowStatistics(ids, shifted_all, z_all, status, included, frozenset(annotators))


class IsoUtc(Func):
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
    if features.formats_text():
        texts: dict[str, Any] = {
            "judgment__shown_at": IsoUtc("judgment__shown_at"),
            "judgment__submitted_at": IsoUtc("judgment__submitted_at"),
        }
        if text_numbers:
            texts["value"] = Cast("value", TextField())
            texts["judgment__seconds"] = Cast("judgment__seconds", TextField())
        names = {column: f"cell_text{i}" for i, column in enumerate(texts)}
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
    if value != value or value in INFINITE:  # NaN is the one value unequal to itself
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
        if features.snapshot_reads():
            with connection.cursor() as cursor:
                if outermost:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cursor.execute(f"SET LOCAL work_mem = '{REPORT_WORK_MEM}'")
        yield


@contextlib.contextmanager
def report_snapshot(
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


def report_chunks(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None,
    real_names: bool,
    chunk_size: int,
    text_numbers: bool = False,
    span_texts: bool = True,
) -> Iterator[dict[str, list[Any]]]:
    """The report column by column, one chunk of rows at a time (Python values; None where a
    value is missing, NaN for a normalised score that does not exist). ``spans`` holds a
    row's error spans (a list, with their marked text when ``span_texts``) for a span kind,
    None for the others; ``answer`` the kind's answer cell (None for the built-in kinds).

    On PostgreSQL the whole report is read in one REPEATABLE READ transaction (when it opens
    the transaction itself), so the normalisation pass and the rows see the same judgments,
    with ``work_mem`` raised for it so that the stable order is sorted in memory.
    """
    with report_snapshot(
        campaign=campaign,
        settings=settings or campaign_analysis_settings(campaign=campaign),
        real_names=real_names,
    ) as (statistics, labels):
        yield from _report_chunks_in_snapshot(
            campaign=campaign,
            statistics=statistics,
            labels=labels,
            chunk_size=chunk_size,
            text_numbers=text_numbers,
            span_texts=span_texts,
        )
        documents = document_report_columns(
            campaign=campaign,
            settings=settings or campaign_analysis_settings(campaign=campaign),
            labels=labels,
        )
        if documents is not None:
            yield documents


def _report_chunks_in_snapshot(
    *,
    campaign: Campaign,
    statistics: RowStatistics,
    labels: dict[int, str],
    chunk_size: int,
    text_numbers: bool,
    span_texts: bool,
) -> Iterator[dict[str, list[Any]]]:
    protocol_configs = list(ProtocolConfig.objects.filter(campaign=campaign))
    configs = {c.pk: (c.name, c.protocol) for c in protocol_configs}
    # Scores imported standardised are z-scores: no raw score is known (the z column has them).
    standardised = {c.pk for c in protocol_configs if c.scores_standardised}
    with_spans = span_config_ids(configs)
    with_cells = answer_cell_kinds(configs)
    credits = campaign_credits(campaign=campaign)
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
        spans = chunk_spans(list(c[1]), list(c[17]), with_spans, with_text=span_texts)
        columns = {
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
            "raw": [None if k in standardised else v for k, v in zip(c[1], c[13], strict=True)],
            "shifted": np.where(known, statistics.shifted[at], np.nan).tolist(),
            "z": np.where(known, statistics.z[at], np.nan).tolist(),
            "qc_status": [STATUS_CODES[v] or None for v in status.tolist()],
            "included": (known & statistics.included[at]).tolist(),
            "started": [_iso(v) for v in c[14]],
            "submitted": [_iso(v) for v in c[15]],
            "seconds": list(c[16]),
            "spans": row_spans(c[1], c[17], c[18], spans),
            "answer": chunk_answer_cells(list(c[1]), list(c[17]), list(c[18]), with_cells),
        }
        if not credits:
            yield {**columns, "merged": [None] * n}
            continue
        # Merged outputs: one more row per credited system, after the row of the one shown.
        grown = chunk_expansion(c[18], [v == 0 for v in c[11]], credits)
        expanded = {name: grown.take(column) for name, column in columns.items()}
        for name, part in (("system", 0), ("run", 1)):
            expanded[name] = [
                v if credit is None else credit[part]
                for v, credit in zip(expanded[name], grown.credit, strict=True)
            ]
        yield {**expanded, "merged": grown.merged}


def judgment_report_rows(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    real_names: bool = False,
    chunk_size: int = 5000,
) -> Iterator[list[tuple[Any, ...]]]:
    """The normalised judgment report as chunks of rows (tuples in :data:`JUDGMENT_COLUMNS`
    order; numbers as floats, times as ISO 8601 text, missing values as None or NaN)."""
    for columns in report_chunks(
        campaign=campaign, settings=settings, real_names=real_names, chunk_size=chunk_size
    ):
        yield list(zip(*(columns[name] for name in JUDGMENT_COLUMNS), strict=True))
