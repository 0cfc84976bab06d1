"""MultEval-style evaluation of several systems with several runs each, and its tables.

:func:`evaluate_outputs` is what the ``evaluate`` command (and any other caller) runs: it extracts
every metric's statistics for all runs of all systems at once, then computes per metric the
mean over runs, s_sel, s_opt and the stratified AR p-value against the baseline
(:mod:`evalcore.stats.multirun`). The formatting functions turn the result into MultEval's ASCII
table, a LaTeX table and a JSON-ready dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from evalcore.latex import latex_escape

from ..stats.multirun import MultiRunComparison, compare_runs
from .base import References, count_references
from .extraction import extract_statistics
from .registry import MetricOptions, make_metric, metric_names

SystemOutputs = tuple[str, Sequence[Sequence[str]]]
"""A system's name and its runs, each run one hypothesis line per segment."""


@dataclass(frozen=True)
class MetricReport:
    """One metric's results for every system."""

    name: str
    """The metric's registry name (``bleu``)."""
    label: str
    """Its name in tables (``BLEU``, ``chrF2``)."""
    signature: str
    """sacreBLEU-style signature including ``bs``, ``ar`` and ``seed``."""
    higher_is_better: bool
    comparison: MultiRunComparison


@dataclass(frozen=True)
class EvaluationReport:
    """Everything the evaluate command prints or writes."""

    metrics: tuple[MetricReport, ...]
    systems: tuple[str, ...]
    baseline: str
    n_runs: int
    n_segments: int
    n_bootstrap: int
    n_trials: int
    seed: int


def check_outputs(systems: Sequence[SystemOutputs], references: References, baseline: str) -> int:
    """Validate names, baseline, run counts and line counts; return the number of runs.

    Raises ValueError with a message that names the offending system, run or file position.
    """
    if not systems:
        raise ValueError("no systems given")
    if not references:
        raise ValueError("no references given")
    names = [name for name, _ in systems]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"system names must be unique: {', '.join(duplicates)}")
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems: {', '.join(names)}")
    n_segments = len(references[0])
    for k, stream in enumerate(references, start=1):
        if len(stream) != n_segments:
            raise ValueError(f"reference {k} has {len(stream)} lines, reference 1 has {n_segments}")
    run_counts = {len(runs) for _, runs in systems}
    for name, runs in systems:
        if not runs:
            raise ValueError(f"system {name!r} has no runs")
        for r, run in enumerate(runs, start=1):
            if len(run) != n_segments:
                raise ValueError(
                    f"system {name!r} run {r} has {len(run)} lines, the references have "
                    f"{n_segments}"
                )
    if len(run_counts) != 1:
        raise ValueError(
            "every system needs the same number of runs (the stratified test pools runs "
            f"pairwise), got {', '.join(f'{n}: {len(r)}' for n, r in systems)}"
        )
    return run_counts.pop()


def evaluate_outputs(
    systems: Sequence[SystemOutputs],
    references: References,
    *,
    metrics: Sequence[str],
    baseline: str,
    options: MetricOptions | None = None,
    n_bootstrap: int = 1000,
    n_trials: int = 10000,
    seed: int = 12345,
    workers: int = 1,
) -> EvaluationReport:
    """Score every run of every system with every metric and compare each with the baseline."""
    names = metric_names()
    unknown = [m for m in metrics if m not in names]
    if unknown:
        raise ValueError(f"unknown metric {', '.join(unknown)}; choose from {', '.join(names)}")
    n_runs = check_outputs(systems, references, baseline)
    outputs = [run for _, runs in systems for run in runs]
    n_refs = count_references(references)
    reports = []
    for metric_name in metrics:
        metric = make_metric(metric_name, options)
        metric_workers = workers if metric.forks else 1
        stats = extract_statistics(metric, outputs, references, workers=metric_workers)
        per_system = [
            (name, stats[k * n_runs : (k + 1) * n_runs]) for k, (name, _) in enumerate(systems)
        ]
        comparison = compare_runs(
            per_system,
            metric.score_from_statistics,
            baseline=baseline,
            n_bootstrap=n_bootstrap,
            n_trials=n_trials,
            rng=seed,
        )
        signature = metric.signature(n_refs).with_resampling(
            bootstrap=n_bootstrap, trials=n_trials, seed=seed
        )
        reports.append(
            MetricReport(
                name=metric_name,
                label=metric.label,
                signature=str(signature),
                higher_is_better=metric.higher_is_better,
                comparison=comparison,
            )
        )
    return EvaluationReport(
        metrics=tuple(reports),
        systems=tuple(name for name, _ in systems),
        baseline=baseline,
        n_runs=n_runs,
        n_segments=len(references[0]),
        n_bootstrap=n_bootstrap,
        n_trials=n_trials,
        seed=seed,
    )


def multeval_round(value: float, digits: int) -> str:
    """Format as MultEval's Java ``String.format("%.Nf")``: half-up on the shortest decimal
    representation (Java prints 0.15 as 0.2 where C's printf prints 0.1)."""
    if not np.isfinite(value):
        return str(value)
    quantum = Decimal(1).scaleb(-digits)
    rounded = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.0"
    return f"{rounded:.{digits}f}"


def _cells(report: EvaluationReport) -> list[list[str]]:
    rows = []
    for system in report.systems:
        row = [system]
        for metric in report.metrics:
            result = next(s for s in metric.comparison.systems if s.name == system)
            p = "-" if result.p_value is None else multeval_round(result.p_value, 2)
            row.append(
                f"{multeval_round(result.mean, 1)} ({multeval_round(result.s_sel, 1)}/"
                f"{multeval_round(result.s_opt, 1)}/{p})"
            )
        rows.append(row)
    return rows


def format_multeval_table(report: EvaluationReport) -> str:
    """MultEval's ASCII table: ``score (s_sel/s_opt/p)``, the baseline's p as ``-``."""
    header = [f"n={report.n_runs}"] + [f"{m.label} (s_sel/s_opt/p)" for m in report.metrics]
    rows = [header, *_cells(report)]
    first = max(15, *(len(r[0]) + 1 for r in rows))
    width = max(23, *(len(c) + 1 for r in rows for c in r[1:]))
    lines = [f"{r[0]:<{first}}" + "".join(f"{c:<{width}}" for c in r[1:]) for r in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def format_latex_table(report: EvaluationReport) -> str:
    """A LaTeX table for a paper, laid out as MultEval's: one block of rows per metric."""
    arrow = {True: r"$\uparrow$", False: r"$\downarrow$"}
    lines = [
        r"\begin{table}[htb]",
        r"\begin{center}",
        r"\begin{footnotesize}",
        r"\begin{tabular}{|l|l|r|r|r|r|}",
        r"\hline",
        r"\bf Metric & \bf System & \bf Avg & $\overline{s}_{\text{sel}}$ & $s_{\text{opt}}$ "
        r"& \bf $p$-value \\",
        r"\hline",
    ]
    for metric in report.metrics:
        label = latex_escape(metric.label)
        lines.append(
            rf"\multirow{{{len(report.systems)}}}{{*}}{{{label} {arrow[metric.higher_is_better]}}}"
        )
        for result in metric.comparison.systems:
            p = "-" if result.p_value is None else multeval_round(result.p_value, 2)
            lines.append(
                f"& {latex_escape(result.name)} & {multeval_round(result.mean, 1)} & "
                f"{multeval_round(result.s_sel, 1)} & {multeval_round(result.s_opt, 1)} & {p} \\\\"
            )
        lines.append(r"\hline")
    caption = (
        f"Scores averaged over {report.n_runs} run(s) on {report.n_segments} segments; "
        f"$s_{{\\text{{sel}}}}$ from {report.n_bootstrap} bootstrap samples, "
        f"$p$ from stratified approximate randomisation with {report.n_trials} shuffles "
        f"(seed {report.seed}) against {latex_escape(report.baseline)}."
    )
    lines += [
        r"\end{tabular}",
        r"\end{footnotesize}",
        r"\end{center}",
        rf"\caption{{\label{{tab:scores}} {caption}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def report_json(report: EvaluationReport) -> dict[str, Any]:
    """``{"metrics": {METRIC: {SYSTEM: {runs, mean, s_sel, s_opt, p}}}, "signatures": {...}}``
    plus the settings that reproduce it."""
    return {
        "metrics": {
            metric.name: {
                s.name: {
                    "runs": list(s.runs),
                    "mean": s.mean,
                    "s_sel": s.s_sel,
                    "s_opt": s.s_opt,
                    "p": s.p_value,
                }
                for s in metric.comparison.systems
            }
            for metric in report.metrics
        },
        "signatures": {metric.name: metric.signature for metric in report.metrics},
        "baseline": report.baseline,
        "settings": {
            "runs": report.n_runs,
            "segments": report.n_segments,
            "resamples": report.n_bootstrap,
            "ar_trials": report.n_trials,
            "seed": report.seed,
            "ar_statistic": "pooled",
        },
    }
