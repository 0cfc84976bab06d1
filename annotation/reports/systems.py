"""The system report: each criterion's systems with scores, intervals and clusters, as CSV, JSON or
a LaTeX table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

# The LaTeX cells are the families'; the rounding stays importable here.
from annotation.analysis.families.base import latex_fixed as latex_fixed
from annotation.analysis.families.registry import family_of_result
from annotation.analysis.results import CampaignAnalysis, CriterionAnalysis
from annotation.analysis.shown import ShownAnalysis, provenance
from annotation.reports.text import CSV_TYPE, ReportFormat, csv_text
from evalcore.latex import latex_escape

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
    "resamples",
    "trueskill_runs",
    "seed",
    "version",
)


def system_report_rows(analysis: CampaignAnalysis) -> Iterator[tuple[Any, ...]]:
    """One row per protocol config × criterion × system, ranked systems first."""
    for criterion in analysis.criteria:
        method = criterion.method
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
                family_of_result(criterion).score_space(criterion),
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
                method.significance_test,
                method.alpha,
                method.confidence,
                method.resamples,
                method.trueskill_runs,
                method.seed,
                method.version,
            )


def system_report_csv(analysis: CampaignAnalysis) -> str:
    """The system report as CSV (:data:`SYSTEM_COLUMNS`)."""
    return csv_text(SYSTEM_COLUMNS, system_report_rows(analysis))


def system_report_json(analysis: CampaignAnalysis) -> dict[str, Any]:
    """Systems, clusters, significance matrix, agreement and method per criterion (no
    per-annotator data: that is the annotator report)."""
    data = analysis.to_json()
    for criterion in data["criteria"]:
        criterion.pop("annotators")
    return data


def _shown_analysis(shown: ShownAnalysis) -> CampaignAnalysis:
    assert shown.analysis is not None
    return shown.analysis


def _csv_body(shown: ShownAnalysis) -> str:
    return system_report_csv(_shown_analysis(shown))


def _json_body(shown: ShownAnalysis) -> str:
    return json.dumps(system_report_json(_shown_analysis(shown)), indent=2, ensure_ascii=False)


def _latex_body(shown: ShownAnalysis) -> str:
    """The LaTeX file says in a comment where its numbers come from and how fresh they are."""
    return system_report_latex(_shown_analysis(shown), provenance=provenance(shown))


def system_report_latex(analysis: CampaignAnalysis, provenance: str = "") -> str:
    """One ``table``/``tabular`` per criterion in the WMT style: rank range, system, score with
    its t interval (at the analysis's confidence level), raw mean and counts, a rule between
    clusters (needs ``booktabs``)."""
    parts = [
        "% EvalSite human evaluation: system report",
        f"% campaign {analysis.campaign_id}; {analysis.version}",
        *([f"% results: {provenance}"] if provenance else []),
        "% \\usepackage{booktabs}",
    ]
    for criterion in analysis.criteria:
        parts.extend(_latex_table(criterion))
    return "\n".join(parts) + "\n"


def _latex_table(criterion: CriterionAnalysis) -> list[str]:
    """The lines of one criterion's table, its ranked systems in clusters (the family's
    columns)."""
    family = family_of_result(criterion)
    header, spec = family.latex_header(criterion)
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
        lines.append(" & ".join(family.latex_cells(system)) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        f"\\caption{{{_latex_caption(criterion)}}}",
        r"\end{table}",
    ]
    return lines


def _latex_caption(criterion: CriterionAnalysis) -> str:
    """What the table shows and how its clusters were found (test, alpha, seed)."""
    method = criterion.method
    return (
        f"{latex_escape(criterion.config_name)}: {latex_escape(criterion.criterion_label)}. "
        + family_of_result(criterion).latex_method(criterion)
        + f" at $p < {method.alpha}$; seed {method.seed}."
    )


# The system report's formats: each writes the body of a ShownAnalysis as text.
SYSTEM_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("csv", "CSV", CSV_TYPE, _csv_body),
    ReportFormat("json", "JSON", "application/json", _json_body),
    ReportFormat("tex", "LaTeX", "application/x-tex; charset=utf-8", _latex_body),
)
