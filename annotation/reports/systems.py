"""The system report: each criterion's systems with scores, intervals and clusters, as CSV, JSON or
a LaTeX table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from annotation.analysis.results import CampaignAnalysis, CriterionAnalysis, SystemResult
from annotation.analysis.shown import ShownAnalysis, provenance
from annotation.reports.text import CSV_TYPE, ReportFormat, csv_text
from evalcore.latex import latex_escape
from evalsite.formatting import fixed_text

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


def _score_space(criterion: CriterionAnalysis) -> str:
    return "expected_wins" if criterion.kind == "ranking" else str(criterion.method.space)


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


def latex_fixed(value: float | None, digits: int = 3) -> str:
    """A cell of the LaTeX table: rounded as the pages round (``fixed_text``), "--" if missing."""
    return "--" if value is None else fixed_text(value, digits)


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
    """The lines of one criterion's table, its ranked systems in clusters."""
    caption = _latex_caption(criterion)
    ranking = criterion.kind == "ranking"
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
        cells = _latex_ranking_cells(system) if ranking else _latex_score_cells(system)
        lines.append(" & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        f"\\caption{{{caption}}}",
        r"\end{table}",
    ]
    return lines


def _latex_caption(criterion: CriterionAnalysis) -> str:
    """What the table shows and how its clusters were found (test, alpha, seed)."""
    method = criterion.method
    return (
        f"{latex_escape(criterion.config_name)}: {latex_escape(criterion.criterion_label)}. "
        + (
            "Expected Wins; clusters from the one-sided sign test"
            if criterion.kind == "ranking"
            else f"mean {method.space} score over segments with "
            f"{criterion.confidence_percent}\\% t interval; "
            f"clusters from the one-sided {method.significance_test} test"
        )
        + f" at $p < {method.alpha}$; seed {method.seed}."
    )


def _latex_rank_range(system: SystemResult) -> str:
    return (
        str(system.rank_low)
        if system.rank_low == system.rank_high
        else f"{system.rank_low}--{system.rank_high}"
    )


def _latex_ranking_cells(system: SystemResult) -> list[str]:
    """A row of a ranking criterion: Expected Wins, no-worse share and TrueSkill."""
    if system.trueskill_rank_low is None:
        skill_range = "---"  # no bootstrap runs, no range
    elif system.trueskill_rank_low != system.trueskill_rank_high:
        skill_range = f"{system.trueskill_rank_low}--{system.trueskill_rank_high}"
    else:
        skill_range = str(system.trueskill_rank_low)
    return [
        str(system.position),
        _latex_rank_range(system),
        latex_escape(system.name),
        latex_fixed(system.expected_wins),
        latex_fixed(system.no_worse_share),
        latex_fixed(system.trueskill_mu, 2),
        skill_range,
        str(system.n_judgments),
    ]


def _latex_score_cells(system: SystemResult) -> list[str]:
    """A row of a scored criterion: score with its t interval, raw mean and counts."""
    interval = (
        "--"
        if system.t_low is None or system.t_high is None
        else f"[{latex_fixed(system.t_low)}, {latex_fixed(system.t_high)}]"
    )
    return [
        str(system.position),
        _latex_rank_range(system),
        latex_escape(system.name),
        latex_fixed(system.score),
        interval,
        latex_fixed(system.mean_raw, 1),
        str(system.n_judgments),
        str(system.n_segments),
    ]


# The system report's formats: each writes the body of a ShownAnalysis as text.
SYSTEM_FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("csv", "CSV", CSV_TYPE, _csv_body),
    ReportFormat("json", "JSON", "application/json", _json_body),
    ReportFormat("tex", "LaTeX", "application/x-tex; charset=utf-8", _latex_body),
)
