"""The meta-evaluation table for the page (texts), the CSV download and the API's JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from annotation.reports.text import csv_text
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


def meta_evaluation_rows(result: UploadedMetaEvaluation) -> list[dict[str, Any]]:
    """One dict of display texts per metric, best Pearson first."""
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


def meta_evaluation_test_rows(result: UploadedMetaEvaluation) -> list[dict[str, Any]]:
    alpha = result.table.alpha
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
        for test in result.table.tests
    ]


def meta_evaluation_csv(result: UploadedMetaEvaluation) -> str:
    """The table, full precision, one row per metric (``csv_text`` makes names formula-safe)."""
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
    plots = []
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
    """Everything of the result, NaN as null."""
    body = asdict(result.table)
    body["human_only"] = list(result.human_only)
    body["renamed"] = dict(result.renamed)
    finite: dict[str, Any] = _finite(body)
    return finite
