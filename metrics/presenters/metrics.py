"""The automatic-metrics panel: metric tables with intervals, MultEval's multi-run cells and the
significance heatmaps."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

from evalsite.formatting import interval_text, number_text, p_text
from metrics.documents import MetricsDocument

# Significance level of the heatmaps and of the "significant" marks in the metric tables.
ALPHA = 0.05


def short_number(value: float | None, digits: int = 4) -> float | None:
    """``value`` to ``digits`` significant digits: the plots' data stays small in the page."""
    return None if value is None else float(f"{value:.{digits}g}")


def _oriented(value: float | None, higher_is_better: bool) -> float:
    """A sort key where larger is better, missing values last."""
    if value is None:
        return -math.inf
    return value if higher_is_better else -value


def _best_first(row: MetricRow, *, higher_is_better: bool) -> tuple[float, str]:
    return (-_oriented(row.mean, higher_is_better), row.name)


@dataclass(frozen=True)
class MetricRun:
    name: str
    score: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def score_text(self) -> str:
        return number_text(self.score, 2)

    @property
    def ci_text(self) -> str:
        return interval_text(self.ci_low, self.ci_high, 2)


@dataclass(frozen=True)
class MetricRow:
    """One system in one metric's table: the mean over runs, each run with its bootstrap
    interval, and MultEval's comparison with the baseline."""

    system_id: int
    name: str
    is_baseline: bool
    mean: float | None
    runs: list[MetricRun]
    s_sel: float | None
    s_opt: float | None
    delta: float | None  # this system − the baseline (MultEval's observed delta)
    p: float | None  # approximate randomisation over all runs

    @property
    def significant(self) -> bool:
        return self.p is not None and self.p < ALPHA

    @property
    def mean_text(self) -> str:
        return number_text(self.mean, 2)

    @property
    def delta_text(self) -> str:
        return number_text(self.delta, 2)

    @property
    def p_text(self) -> str:
        return p_text(self.p)


@dataclass(frozen=True)
class MetricTable:
    key: str
    label: str
    signature: str
    higher_is_better: bool
    rows: list[MetricRow]  # best first

    @property
    def several_runs(self) -> bool:
        return any(len(r.runs) > 1 for r in self.rows)


@dataclass(frozen=True)
class MultEvalCell:
    mean: float | None
    s_sel: float | None
    s_opt: float | None
    p: float | None

    @property
    def mean_text(self) -> str:
        return number_text(self.mean, 2)

    @property
    def detail_text(self) -> str:
        """MultEval's ``(s_sel/s_opt/p)``; the baseline has no p ("-")."""
        p = "-" if self.p is None else p_text(self.p)
        return f"({number_text(self.s_sel, 2)}/{number_text(self.s_opt, 2)}/{p})"


@dataclass(frozen=True)
class MetricsPanel:
    baseline: str
    n_segments: int
    params: dict[str, Any]
    tables: list[MetricTable]
    several_runs: bool
    multeval_metrics: list[str]  # labels, in the order of the cells
    multeval_rows: list[tuple[str, list[MultEvalCell]]]
    unavailable: dict[str, str]


def metrics_panel(doc: MetricsDocument) -> MetricsPanel:
    """The metric tables (best first) and MultEval's table from a ``metrics`` document."""
    tables = []
    for metric in doc.metrics:
        rows = [
            MetricRow(
                system_id=s.id,
                name=s.name,
                is_baseline=s.id == doc.baseline.id,
                mean=s.mean,
                runs=[MetricRun(r.name, r.score, r.ci_low, r.ci_high) for r in s.runs],
                s_sel=s.s_sel,
                s_opt=s.s_opt,
                delta=s.delta_baseline,
                p=s.p_baseline,
            )
            for s in metric.systems
        ]
        rows.sort(key=partial(_best_first, higher_is_better=metric.higher_is_better))
        tables.append(
            MetricTable(
                key=metric.key,
                label=metric.label,
                signature=metric.signature,
                higher_is_better=metric.higher_is_better,
                rows=rows,
            )
        )
    by_metric = [{r.system_id: r for r in t.rows} for t in tables]
    multeval_rows = []
    for system in doc.systems:
        cells = []
        for rows_by_id in by_metric:
            row = rows_by_id.get(system.id)
            cells.append(
                MultEvalCell(
                    mean=row.mean if row else None,
                    s_sel=row.s_sel if row else None,
                    s_opt=row.s_opt if row else None,
                    p=row.p if row else None,
                )
            )
        multeval_rows.append((system.name, cells))
    return MetricsPanel(
        baseline=doc.baseline.name,
        n_segments=doc.n_segments,
        params=doc.params,
        tables=tables,
        several_runs=any(len(s.runs) > 1 for s in doc.systems),
        multeval_metrics=[t.label for t in tables],
        multeval_rows=multeval_rows,
        unavailable=doc.unavailable,
    )


def significance_heatmaps(doc: MetricsDocument) -> list[dict[str, Any]]:
    """Per metric, the all-pairs paired bootstrap as a head-to-head matrix for the plots.

    Systems are ordered best first by the metric's mean score. ``outcome[i][j]`` is +1 when the
    row system is better than the column system with bootstrap p < :data:`ALPHA`, −1 when it is
    worse with p < α, and 0 otherwise; ``delta[i][j]`` is score(row) − score(column) (the
    document stores score(column) − score(row)); ``win_share`` is the share of resamples in
    which the row system did better.
    """
    names = {s.id: s.name for s in doc.systems}
    heatmaps = []
    for metric in doc.metrics:
        pairwise = metric.pairwise
        ids = pairwise.systems
        if len(ids) < 2:
            continue
        higher = metric.higher_is_better
        mean = {s.id: s.mean for s in metric.systems}
        order = sorted(
            range(len(ids)), key=lambda i: (-_oriented(mean.get(ids[i]), higher), names.get(ids[i]))
        )

        def pick(
            matrix: list[list[float | None]], order: list[int] = order
        ) -> list[list[float | None]]:
            return [[matrix[i][j] if matrix else None for j in order] for i in order]

        def short(matrix: list[list[float | None]]) -> list[list[float | None]]:
            return [[short_number(v) for v in row] for row in matrix]

        boot_p = pick(pairwise.bootstrap_p)
        ar_p = pick(pairwise.ar_p)
        wins = pick(pairwise.win_share)
        delta = [[None if d is None else -d for d in row] for row in pick(pairwise.delta)]
        outcome = []
        for i, row in enumerate(delta):
            cells = []
            for j, d in enumerate(row):
                p = boot_p[i][j]
                if i == j or p is None or d is None or p >= ALPHA or d == 0:
                    cells.append(0)
                else:
                    better = d > 0 if higher else d < 0
                    cells.append(1 if better else -1)
            outcome.append(cells)
        heatmaps.append(
            {
                "key": metric.key,
                "label": metric.label,
                "systems": [names.get(ids[i], str(ids[i])) for i in order],
                "outcome": outcome,
                "bootstrap_p": short(boot_p),
                "ar_p": short(ar_p),
                "delta": short(delta),
                "win_share": short(wins),
                "pooled_runs": pairwise.pooled_runs,
            }
        )
    return heatmaps
