"""The annotator report: each annotator's QC test, judgments and time, as CSV."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.analysis.families.registry import family_of_result
from annotation.analysis.results import CampaignAnalysis
from annotation.reports.text import csv_text

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
        family = family_of_result(criterion)
        for a in criterion.annotators:
            uninformative, tolerance = family.annotator_report_cells(a, method)
            yield (
                criterion.config_name,
                criterion.protocol,
                criterion.criterion,
                labels.get(a.annotator_id, a.pseudonym or str(a.annotator_id)),
                a.n_rows,
                a.qc_status,
                method.qc_test,
                method.qc_space,
                method.threshold,
                a.qc_n,
                a.qc_statistic,
                a.qc_p,
                a.qc_mean_difference,
                uninformative,
                None if a.decision is None else ("include" if a.decision else "exclude"),
                a.decision_reason or None,
                a.included,
                a.repeats_n,
                a.repeats_share_within,
                a.repeats_pearson,
                a.repeats_kendall_tau,
                tolerance,
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
                method.version,
            )


def annotator_report_csv(analysis: CampaignAnalysis, labels: dict[int, str]) -> str:
    """The annotator report as CSV (:data:`ANNOTATOR_COLUMNS`)."""
    return csv_text(ANNOTATOR_COLUMNS, annotator_report_rows(analysis, labels))
