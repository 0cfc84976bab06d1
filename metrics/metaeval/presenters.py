"""The meta-evaluation table for the page (texts), the CSV download and the API's JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import HttpResponse
from django.utils.translation import gettext_lazy as _

from annotation.reports.text import csv_text, download_disposition
from evalcore.numbers import finite_or_none
from evalsite.formatting import number_text, p_text
from metrics.metaeval.uploads import UploadedMetaEvaluation

CSV_COLUMNS = (
    "metric",
    "cluster",
    "pearson",
    "spearman",
    "kendall_tau_b",
    "pairwise_accuracy",
    "tie_calibrated_accuracy",
    "tie_epsilon",
    "n_systems",
)


SEGMENT_CSV_COLUMNS = (
    "metric",
    "grouping",
    "cluster",
    "pearson",
    "spearman",
    "kendall_tau_b",
    "tie_calibrated_accuracy",
    "n_systems",
    "n_segments",
    "n_cells",
)
GROUPING_LABELS = {
    "none": _("no grouping"),
    "item": _("by item (segment)"),
    "sys": _("by system"),
}
CLUSTER_TEST_LABELS = {"williams": _("Williams"), "permutation": _("permutation")}


def meta_evaluation_rows(result: UploadedMetaEvaluation) -> list[dict[str, Any]]:
    """One dict of display texts per metric, best Pearson first (none without a system
    table)."""
    if result.table is None:
        return []
    return [
        {
            "metric": row.metric,
            "negated": row.metric in result.table.negated,
            "cluster": row.cluster,
            "pearson": number_text(finite_or_none(row.pearson), 3),
            "spearman": number_text(finite_or_none(row.spearman), 3),
            "kendall": number_text(finite_or_none(row.kendall), 3),
            "accuracy": number_text(finite_or_none(row.accuracy), 3),
            "tie_accuracy": number_text(finite_or_none(row.tie_accuracy), 3),
            "tie_epsilon": f"{row.tie_epsilon:.4g}",
            "n_systems": row.n_systems,
        }
        for row in result.table.rows
    ]


def meta_evaluation_segment_rows(result: UploadedMetaEvaluation) -> list[dict[str, Any]]:
    """One dict of display texts per metric and grouping; the metric named on its first row."""
    if result.segments is None:
        return []
    return [
        {
            "metric": row.metric if row.average_by == "none" else "",
            "negated": row.metric in result.segments.negated and row.average_by == "none",
            "grouping": GROUPING_LABELS[row.average_by],
            "cluster": row.cluster,
            "pearson": number_text(finite_or_none(row.pearson), 3),
            "spearman": number_text(finite_or_none(row.spearman), 3),
            "kendall": number_text(finite_or_none(row.kendall), 3),
            "acc_eq": number_text(finite_or_none(row.acc_eq), 3),
        }
        for row in result.segments.rows
    ]


def meta_evaluation_test_rows(
    result: UploadedMetaEvaluation, *, level: str = "system"
) -> list[dict[str, Any]]:
    """One dict of display texts per pair of metrics, at system or segment level."""
    table = result.segments if level == "segment" else result.table
    if table is None:
        return []
    alpha = table.alpha
    return [
        {
            "better": test.better,
            "worse": test.worse,
            "delta": number_text(test.delta, 3),
            "williams": p_text(finite_or_none(test.williams_p)),
            "williams_significant": test.williams_p <= alpha,
            "permutation": p_text(test.permutation_p),
            "permutation_significant": test.permutation_p is not None
            and test.permutation_p <= alpha,
        }
        for test in table.tests
    ]


def meta_evaluation_segment_csv(result: UploadedMetaEvaluation) -> str:
    """The segment-level table, full precision, one row per metric and grouping."""
    segments = result.segments
    rows = segments.rows if segments is not None else ()
    return csv_text(
        SEGMENT_CSV_COLUMNS,
        (
            [
                row.metric,
                row.average_by,
                row.cluster,
                *(
                    finite_or_none(value) if value is not None else None
                    for value in (row.pearson, row.spearman, row.kendall, row.acc_eq)
                ),
                len(segments.systems) if segments else 0,
                segments.n_segments if segments else 0,
                segments.n_cells if segments else 0,
            ]
            for row in rows
        ),
    )


def meta_evaluation_csv(result: UploadedMetaEvaluation) -> str:
    """The table, full precision, one row per metric (``csv_text`` makes names formula-safe);
    without system-level files, the segment-level table."""
    if result.table is None:
        return meta_evaluation_segment_csv(result)
    return csv_text(
        CSV_COLUMNS,
        (
            [
                row.metric,
                row.cluster,
                *(
                    finite_or_none(value)
                    for value in (
                        row.pearson,
                        row.spearman,
                        row.kendall,
                        row.accuracy,
                        row.tie_accuracy,
                        row.tie_epsilon,
                    )
                ),
                row.n_systems,
            ]
            for row in result.table.rows
        ),
    )


def _points(
    systems: tuple[str, ...], scores: dict[str, float], human: dict[str, float], sign: float
) -> list[dict[str, Any]]:
    return [
        {"name": s, "metric": sign * scores[s], "human": human[s]} for s in systems if s in scores
    ]


def meta_evaluation_plot(result: UploadedMetaEvaluation) -> dict[str, Any]:
    """Per metric (table order), one point per evaluated system (metric score, negated for an
    error metric as in the table; human score) and, apart, the outliers left out."""
    table = result.table
    plots: list[dict[str, Any]] = []
    if table is None:
        return {"metrics": plots}
    for row in table.rows:
        sign = -1.0 if row.metric in table.negated else 1.0
        scores = result.metrics[row.metric]
        plots.append(
            {
                "name": row.metric,
                "negated": row.metric in table.negated,
                "pearson": finite_or_none(row.pearson),
                "points": _points(table.systems, scores, result.human, sign),
                "outliers": _points(table.excluded_outliers, scores, result.human, sign),
            }
        )
    return {"metrics": plots}


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return finite_or_none(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def meta_evaluation_json(result: UploadedMetaEvaluation) -> dict[str, Any]:
    """Everything of the result, NaN as null: the system-level table's fields at the top (as
    before segment-level files existed; empty without system-level files) and ``segments``."""
    body: dict[str, Any] = (
        asdict(result.table) if result.table is not None else {"rows": [], "tests": []}
    )
    body["human_only"] = list(result.human_only)
    body["renamed"] = dict(result.renamed)
    body["segments"] = asdict(result.segments) if result.segments is not None else None
    body["segment_human_only"] = list(result.segment_human_only)
    finite: dict[str, Any] = _finite(body)
    return finite


CSV_DOWNLOADS = ("csv", "segment-csv")


def meta_evaluation_download(
    result: UploadedMetaEvaluation, *, campaign_name: str, which: str
) -> HttpResponse:
    """The system-level (``csv``) or segment-level (``segment-csv``) table as a CSV file."""
    segments = which == "segment-csv"
    text = meta_evaluation_segment_csv(result) if segments else meta_evaluation_csv(result)
    response = HttpResponse(text, content_type="text/csv")
    stem = "meta-evaluation-segments" if segments else "meta-evaluation"
    response["Content-Disposition"] = download_disposition(campaign_name, stem, "csv")
    return response
