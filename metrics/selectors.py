"""Selectors of the metrics app: what the campaign dashboard shows.

The dashboard reads **stored results only**: the latest :class:`~metrics.models.AnalysisResult`
of each kind (``metrics``, ``human``, ``correlations``, written by
:func:`metrics.pipeline.finalize`) and the latest :class:`~metrics.models.AnalysisJob`. Nothing
here computes a statistic; the functions below pick, order and shape the stored numbers for the
template and the plots. Beside them come a few cheap live aggregates (judgments per protocol and
annotator, time spent, what remains) and the "stale" flag, each a fixed number of aggregate
queries, so the page costs the same number of queries whatever the size of the campaign.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    Max,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.utils.formats import get_format
from django.utils.translation import gettext as _

from annotation.models import Assignment, Campaign, Judgment, ProtocolConfig, Task
from evalcore.human.qc import DEFAULT_IDLE_CAP
from metrics import pipeline
from metrics.models import AnalysisJob, AnalysisResult

# Time on one item above this is an idle gap; it counts as this many seconds (the QC's time on
# task uses the same cap).
IDLE_CAP_SECONDS = DEFAULT_IDLE_CAP
# Significance level of the heatmaps and of the "significant" marks in the metric tables.
ALPHA = 0.05
RESULT_KINDS = (
    AnalysisResult.Kind.METRICS,
    AnalysisResult.Kind.HUMAN,
    AnalysisResult.Kind.CORRELATIONS,
)


# --------------------------------------------------------------------------------------------
# Live progress


@dataclass(frozen=True)
class ConfigProgress:
    """Judgments of one protocol config against what its tasks need."""

    config_id: int
    name: str
    protocol: str
    n_tasks: int
    needed: int  # Σ over tasks of size × annotations needed
    judged: int
    seconds: float  # Σ of min(seconds, idle cap) over its judgments
    median_seconds: float | None  # per judged item; None before any timed judgment
    median_borrowed: bool  # the median is the campaign's, this config has no timed judgment

    @property
    def remaining(self) -> int:
        return max(self.needed - self.judged, 0)

    @property
    def percent(self) -> int:
        return _percent(self.judged, self.needed)

    @property
    def remaining_seconds(self) -> float | None:
        if not self.remaining:
            return 0.0
        return None if self.median_seconds is None else self.remaining * self.median_seconds

    @property
    def seconds_display(self) -> str:
        return duration_display(self.seconds)

    @property
    def remaining_display(self) -> str:
        return duration_display(self.remaining_seconds)

    @property
    def median_text(self) -> str:
        return number_text(self.median_seconds, 1)


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's judgments, per protocol config (in the order of the configs)."""

    annotator_id: int
    username: str
    judged: int
    per_config: list[int]
    seconds: float
    last_submitted: datetime | None

    @property
    def seconds_display(self) -> str:
        return duration_display(self.seconds)


@dataclass(frozen=True)
class Progress:
    """The campaign's annotation progress, from three aggregate queries."""

    configs: list[ConfigProgress]
    annotators: list[AnnotatorProgress]
    median_seconds: float | None  # over every timed judgment of the campaign
    idle_cap: float = IDLE_CAP_SECONDS

    @property
    def needed(self) -> int:
        return sum(c.needed for c in self.configs)

    @property
    def judged(self) -> int:
        return sum(c.judged for c in self.configs)

    @property
    def remaining(self) -> int:
        return sum(c.remaining for c in self.configs)

    @property
    def percent(self) -> int:
        return _percent(self.judged, self.needed)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.configs)

    @property
    def remaining_seconds(self) -> float | None:
        """Annotator time still needed (not wall-clock time: annotators work in parallel);
        None when some protocol with work left has no timing to estimate from."""
        parts = [c.remaining_seconds for c in self.configs]
        return None if any(p is None for p in parts) else sum(p or 0.0 for p in parts)

    @property
    def seconds_display(self) -> str:
        return duration_display(self.seconds)

    @property
    def remaining_display(self) -> str:
        return duration_display(self.remaining_seconds)

    def as_json(self) -> dict[str, Any]:
        return {
            "judged": self.judged,
            "needed": self.needed,
            "remaining": self.remaining,
            "percent": self.percent,
            "seconds": self.seconds,
            "seconds_display": self.seconds_display,
            "remaining_seconds": self.remaining_seconds,
            "remaining_display": self.remaining_display,
            "median_seconds": self.median_seconds,
            "configs": [
                {
                    "config_id": c.config_id,
                    "judged": c.judged,
                    "needed": c.needed,
                    "remaining": c.remaining,
                    "percent": c.percent,
                    "seconds": c.seconds,
                    "seconds_display": c.seconds_display,
                    "remaining_seconds": c.remaining_seconds,
                    "remaining_display": c.remaining_display,
                }
                for c in self.configs
            ],
        }


def number_text(value: float | None, digits: int) -> str:
    """A number with ``digits`` decimals and the active language's decimal separator, as the
    template filter ``floatformat`` shows it; "—" when missing. The dashboard has thousands of
    numbers and ``floatformat`` (through ``Decimal``) was the largest cost of rendering it."""
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    separator = get_format("DECIMAL_SEPARATOR")
    return text if separator == "." else text.replace(".", separator)


def interval_text(low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None:
        return "—"
    return f"[{number_text(low, digits)}, {number_text(high, digits)}]"


def p_text(value: float | None) -> str:
    """A p-value with two significant digits (``stringformat:".2g"``); "—" when missing."""
    return "—" if value is None else f"{value:.2g}"


def duration_display(seconds: float | None) -> str:
    """``42 min`` below two hours, ``3.5 h`` above; ``—`` when unknown."""
    if seconds is None:
        return "—"
    if seconds < 7200:
        return _("%(minutes)d min") % {"minutes": round(seconds / 60)}
    return _("%(hours).1f h") % {"hours": seconds / 3600}


def _percent(done: int, total: int) -> int:
    if total <= 0:
        return 0
    return min(100, math.floor(100 * done / total))


def _campaign_judgments(campaign: Campaign) -> QuerySet[Judgment]:
    # Through the assignment: a judgment's assignment is for its item's task (both the
    # annotation page and the judgment import make it so), and joining the few assignments is
    # cheaper than joining every item.
    return Judgment.objects.filter(assignment__task__config__campaign=campaign)


def _config_medians(campaign: Campaign) -> tuple[dict[int, float], float | None]:
    """Median seconds per judged item, per config and over the campaign.

    On PostgreSQL one query computes both (``percentile_cont`` with ``ROLLUP``: the row whose
    config is NULL is the campaign's); other databases (the embedded SQLite default, small
    campaigns) get the timed values and take the medians here.
    """
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        sql = (
            "SELECT t.config_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY j.seconds) "
            f"FROM {quote(Judgment._meta.db_table)} j "
            f"JOIN {quote(Assignment._meta.db_table)} a ON a.id = j.assignment_id "
            f"JOIN {quote(Task._meta.db_table)} t ON t.id = a.task_id "
            f"JOIN {quote(ProtocolConfig._meta.db_table)} c ON c.id = t.config_id "
            "WHERE c.campaign_id = %s AND j.seconds IS NOT NULL "
            "GROUP BY ROLLUP (t.config_id)"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [campaign.pk])
            rows = cursor.fetchall()
        # Without any timed judgment, ROLLUP still gives its total row, with a NULL median.
        medians = {config_id: float(m) for config_id, m in rows if m is not None}
        return medians, medians.pop(None, None)
    values: dict[int, list[float]] = {}
    timed = _campaign_judgments(campaign).filter(seconds__isnull=False)
    for config_id, seconds in timed.values_list("assignment__task__config_id", "seconds"):
        values.setdefault(config_id, []).append(seconds)
    every = [s for v in values.values() for s in v]
    return (
        {k: float(statistics.median(v)) for k, v in values.items()},
        float(statistics.median(every)) if every else None,
    )


def campaign_progress(*, campaign: Campaign) -> Progress:
    """Judgments per protocol config and per annotator, time spent (each item's seconds capped
    at :data:`IDLE_CAP_SECONDS`), and what remains: Σ over tasks of size × annotations needed
    minus the judgments, at the median seconds per item of its protocol config."""
    configs = list(
        ProtocolConfig.objects.filter(campaign=campaign)
        .annotate(
            n_tasks=Count("tasks"),
            needed=Sum(F("tasks__size") * F("tasks__annotations_needed")),
        )
        .order_by("created", "pk")
        .values("pk", "name", "protocol", "n_tasks", "needed")
    )
    capped = Case(
        When(seconds__gt=IDLE_CAP_SECONDS, then=Value(IDLE_CAP_SECONDS)),
        default=F("seconds"),
        output_field=FloatField(),
    )
    rows = list(
        _campaign_judgments(campaign)
        .values("assignment__task__config_id", "annotator_id", "annotator__username")
        .annotate(n=Count("pk"), seconds=Sum(capped), last=Max("submitted_at"))
        .order_by()
    )
    medians, overall = _config_medians(campaign)
    index = {c["pk"]: i for i, c in enumerate(configs)}
    judged = [0] * len(configs)
    seconds = [0.0] * len(configs)
    people: dict[int, dict[str, Any]] = {}
    for row in rows:
        i = index[row["assignment__task__config_id"]]
        judged[i] += row["n"]
        seconds[i] += row["seconds"] or 0.0
        person = people.setdefault(
            row["annotator_id"],
            {
                "username": row["annotator__username"],
                "per_config": [0] * len(configs),
                "seconds": 0.0,
                "last": None,
            },
        )
        person["per_config"][i] += row["n"]
        person["seconds"] += row["seconds"] or 0.0
        if person["last"] is None or (row["last"] and row["last"] > person["last"]):
            person["last"] = row["last"]
    config_rows = [
        ConfigProgress(
            config_id=c["pk"],
            name=c["name"],
            protocol=c["protocol"],
            n_tasks=c["n_tasks"],
            needed=c["needed"] or 0,
            judged=judged[i],
            seconds=seconds[i],
            median_seconds=medians.get(c["pk"], overall),
            median_borrowed=c["pk"] not in medians and overall is not None,
        )
        for i, c in enumerate(configs)
    ]
    annotators = sorted(
        (
            AnnotatorProgress(
                annotator_id=annotator_id,
                username=p["username"],
                judged=sum(p["per_config"]),
                per_config=p["per_config"],
                seconds=p["seconds"],
                last_submitted=p["last"],
            )
            for annotator_id, p in people.items()
        ),
        key=lambda a: (-a.judged, a.username),
    )
    return Progress(configs=config_rows, annotators=annotators, median_seconds=overall)


# --------------------------------------------------------------------------------------------
# Jobs, stored results and staleness


def analysis_job_latest(*, campaign: Campaign) -> AnalysisJob | None:
    """The campaign's most recent analysis job, whatever its status."""
    return (
        AnalysisJob.objects.filter(campaign=campaign)
        .select_related("requested_by")
        .order_by("-created")
        .first()
    )


def analysis_results_latest(
    *, campaign: Campaign, with_data: bool = True
) -> dict[str, AnalysisResult]:
    """The newest stored result of each kind (one indexed query per kind); without their
    documents when ``with_data`` is false (the status polls need only ids and fingerprints)."""
    found = {}
    for kind in RESULT_KINDS:
        results = AnalysisResult.objects.filter(campaign=campaign, kind=kind)
        if not with_data:
            results = results.defer("data")
        result = results.order_by("-created").first()
        if result is not None:
            found[str(kind)] = result
    return found


def campaign_fingerprint_current(*, campaign: Campaign) -> str:
    """The content hash an analysis of the campaign's data would have now: the settings plus a
    handful of aggregate queries (:func:`metrics.pipeline.campaign_fingerprint`)."""
    params = pipeline.analysis_params(campaign=campaign)
    return pipeline.campaign_fingerprint(campaign=campaign, params=params)


def _job_json(job: AnalysisJob | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "id": str(job.pk),
        "status": job.status,
        "status_label": str(job.get_status_display()),
        "stage": job.stage,
        "stage_label": str(job.get_stage_display()),
        "done": job.progress_done,
        "total": job.progress_total,
        "percent": job.percent,
        "error": job.error,
        "dispatched": job.dispatched,
        "created": job.created.isoformat(),
        "started": job.started.isoformat() if job.started else None,
        "finished": job.finished.isoformat() if job.finished else None,
    }


@dataclass(frozen=True)
class AnalysisState:
    """The latest job, the results on show, and whether they still describe the data."""

    job: AnalysisJob | None
    results: dict[str, AnalysisResult]
    fingerprint: str

    @property
    def results_job_id(self) -> str | None:
        result = self.results.get(AnalysisResult.Kind.METRICS) or next(
            iter(self.results.values()), None
        )
        return str(result.job_id) if result is not None else None

    @property
    def results_created(self) -> datetime | None:
        return max((r.created for r in self.results.values()), default=None)

    @property
    def stale(self) -> bool:
        """True when results exist and their inputs differ from the campaign's data now."""
        return any(r.fingerprint != self.fingerprint for r in self.results.values())

    @property
    def active(self) -> bool:
        return self.job is not None and self.job.status in (
            AnalysisJob.Status.QUEUED,
            AnalysisJob.Status.RUNNING,
        )

    @property
    def recomputing(self) -> bool:
        """A queued or running job is analysing the data as it is now."""
        return self.active and self.job is not None and self.job.fingerprint == self.fingerprint


def analysis_state(*, campaign: Campaign, with_data: bool = True) -> AnalysisState:
    """The latest job, the latest results (see :func:`analysis_results_latest`) and the
    campaign's current fingerprint."""
    return AnalysisState(
        job=analysis_job_latest(campaign=campaign),
        results=analysis_results_latest(campaign=campaign, with_data=with_data),
        fingerprint=campaign_fingerprint_current(campaign=campaign),
    )


def _status_json(state: AnalysisState, progress: Progress) -> dict[str, Any]:
    return {
        "job": _job_json(state.job),
        "results_job_id": state.results_job_id,
        "has_results": bool(state.results),
        "stale": state.stale,
        "recomputing": state.recomputing,
        "progress": progress.as_json(),
    }


def dashboard_status(*, campaign: Campaign) -> dict[str, Any]:
    """What the dashboard polls: the latest job with its progress, the results on show, the
    stale flag and the annotation progress (JSON types only)."""
    return _status_json(
        analysis_state(campaign=campaign, with_data=False), campaign_progress(campaign=campaign)
    )


# --------------------------------------------------------------------------------------------
# Panels: the stored documents shaped for the template and the plots


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _short(value: float | None, digits: int = 4) -> float | None:
    """``value`` to ``digits`` significant digits: the plots' data stays small in the page."""
    return None if value is None else float(f"{value:.{digits}g}")


def _oriented(value: float | None, higher_is_better: bool) -> float:
    """A sort key where larger is better, missing values last."""
    if value is None:
        return -math.inf
    return value if higher_is_better else -value


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


def metrics_panel(doc: dict[str, Any]) -> MetricsPanel:
    """The metric tables (best first) and MultEval's table from a ``metrics`` document."""
    baseline_id = (doc.get("baseline") or {}).get("id")
    tables = []
    for metric in doc.get("metrics", []):
        higher = bool(metric.get("higher_is_better", True))
        rows = [
            MetricRow(
                system_id=s["id"],
                name=s["name"],
                is_baseline=s["id"] == baseline_id,
                mean=_finite(s.get("mean")),
                runs=[
                    MetricRun(
                        name=r["name"],
                        score=_finite(r.get("score")),
                        ci_low=_finite(r.get("ci_low")),
                        ci_high=_finite(r.get("ci_high")),
                    )
                    for r in s.get("runs", [])
                ],
                s_sel=_finite(s.get("s_sel")),
                s_opt=_finite(s.get("s_opt")),
                delta=_finite(s.get("delta_baseline")),
                p=_finite(s.get("p_baseline")),
            )
            for s in metric.get("systems", [])
        ]
        rows.sort(key=lambda r: (-_oriented(r.mean, higher), r.name))
        tables.append(
            MetricTable(
                key=metric["key"],
                label=metric.get("label", metric["key"]),
                signature=metric.get("signature", ""),
                higher_is_better=higher,
                rows=rows,
            )
        )
    systems = doc.get("systems", [])
    by_metric = [{r.system_id: r for r in t.rows} for t in tables]
    multeval_rows = []
    for system in systems:
        cells = []
        for rows_by_id in by_metric:
            row = rows_by_id.get(system["id"])
            cells.append(
                MultEvalCell(
                    mean=row.mean if row else None,
                    s_sel=row.s_sel if row else None,
                    s_opt=row.s_opt if row else None,
                    p=row.p if row else None,
                )
            )
        multeval_rows.append((system["name"], cells))
    return MetricsPanel(
        baseline=(doc.get("baseline") or {}).get("name", ""),
        n_segments=int(doc.get("n_segments", 0)),
        params=doc.get("params", {}),
        tables=tables,
        several_runs=any(len(s.get("runs", [])) > 1 for s in systems),
        multeval_metrics=[t.label for t in tables],
        multeval_rows=multeval_rows,
        unavailable=doc.get("unavailable", {}),
    )


def significance_heatmaps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per metric, the all-pairs paired bootstrap as a head-to-head matrix for the plots.

    Systems are ordered best first by the metric's mean score. ``outcome[i][j]`` is +1 when the
    row system is better than the column system with bootstrap p < :data:`ALPHA`, −1 when it is
    worse with p < α, and 0 otherwise; ``delta[i][j]`` is score(row) − score(column) (the
    document stores score(column) − score(row)); ``win_share`` is the share of resamples in
    which the row system did better.
    """
    names = {s["id"]: s["name"] for s in doc.get("systems", [])}
    heatmaps = []
    for metric in doc.get("metrics", []):
        pairwise = metric.get("pairwise") or {}
        ids = pairwise.get("systems", [])
        if len(ids) < 2:
            continue
        higher = bool(metric.get("higher_is_better", True))
        mean = {s["id"]: _finite(s.get("mean")) for s in metric.get("systems", [])}
        order = sorted(
            range(len(ids)), key=lambda i: (-_oriented(mean.get(ids[i]), higher), names.get(ids[i]))
        )

        def pick(key: str, order: list[int] = order, pairwise: dict[str, Any] = pairwise) -> Any:
            matrix = pairwise.get(key) or []
            return [[_finite(matrix[i][j]) if matrix else None for j in order] for i in order]

        def short(matrix: list[list[float | None]]) -> list[list[float | None]]:
            return [[_short(v) for v in row] for row in matrix]

        boot_p = pick("bootstrap_p")
        ar_p = pick("ar_p")
        wins = pick("win_share")
        delta = [[None if d is None else -d for d in row] for row in pick("delta")]
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
                "key": metric["key"],
                "label": metric.get("label", metric["key"]),
                "systems": [names.get(ids[i], str(ids[i])) for i in order],
                "outcome": outcome,
                "bootstrap_p": short(boot_p),
                "ar_p": short(ar_p),
                "delta": short(delta),
                "win_share": short(wins),
                "pooled_runs": pairwise.get("pooled_runs"),
            }
        )
    return heatmaps


@dataclass(frozen=True)
class HumanSystemRow:
    """One system in a human ranking, with the bar of its interval (percent of the panel's
    axis) so the table reads like a forest plot."""

    position: int
    rank_low: int
    rank_high: int
    cluster: int
    name: str
    score: float | None
    t_low: float | None
    t_high: float | None
    boot_low: float | None
    boot_high: float | None
    mean_raw: float | None
    expected_wins: float | None
    trueskill_rank_low: int | None
    trueskill_rank_high: int | None
    n_judgments: int
    n_segments: int
    bar_left: float | None
    bar_width: float | None
    dot: float | None
    cluster_start: bool

    @property
    def score_text(self) -> str:
        return number_text(self.score, 3)

    @property
    def t_text(self) -> str:
        return interval_text(self.t_low, self.t_high, 3)

    @property
    def boot_text(self) -> str:
        return interval_text(self.boot_low, self.boot_high, 3)

    @property
    def raw_text(self) -> str:
        return number_text(self.mean_raw, 2)


@dataclass(frozen=True)
class QCRow:
    annotator_id: int
    username: str
    n_rows: int
    qc_status: str
    qc_n: int
    qc_p: float | None
    qc_mean_difference: float | None
    repeats_n: int
    repeats_share_within: float | None
    references_mean: float | None
    minutes: float
    included: bool
    by_decision: bool

    @property
    def p_text(self) -> str:
        return p_text(self.qc_p)

    @property
    def delta_text(self) -> str:
        return number_text(self.qc_mean_difference, 1)

    @property
    def within_text(self) -> str:
        return number_text(self.repeats_share_within, 2)

    @property
    def reference_text(self) -> str:
        return number_text(self.references_mean, 1)

    @property
    def minutes_text(self) -> str:
        return number_text(self.minutes, 0)

    @property
    def row_class(self) -> str:
        return "" if self.included else "excluded"

    @property
    def included_text(self) -> str:
        text = _("yes") if self.included else _("no")
        return f"{text} ({_('by decision')})" if self.by_decision else text


@dataclass(frozen=True)
class HumanCriterion:
    slug: str
    title: str
    protocol: str
    kind: str
    scale: tuple[int, int]
    space: str
    test: str
    n_rows: int
    n_annotators: int
    n_segments: int
    axis_low: float | None
    axis_high: float | None
    systems: list[HumanSystemRow]
    annotators: list[QCRow]
    agreement: list[dict[str, Any]]
    method: dict[str, Any]


def criterion_slug(config_id: Any, criterion: str) -> str:
    return f"c{config_id}-{criterion}"


def _bar_axis(systems: list[dict[str, Any]], ranking: bool) -> tuple[float, float] | None:
    if ranking:
        return (0.0, 1.0)  # Expected Wins is a share
    values = [
        v
        for s in systems
        if s.get("position", 0) > 0
        for v in (_finite(s.get("boot_low")), _finite(s.get("boot_high")), _finite(s.get("score")))
        if v is not None
    ]
    if not values:
        return None
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 0.5
    return (low - pad, high + pad)


def _position(value: float | None, axis: tuple[float, float] | None) -> float | None:
    if value is None or axis is None:
        return None
    return round(100 * (value - axis[0]) / (axis[1] - axis[0]), 2)


def human_panel(doc: dict[str, Any]) -> list[HumanCriterion]:
    """Rankings with intervals and clusters, and the annotator QC table, per criterion of a
    ``human`` document (the stored :class:`annotation.analysis.results.CampaignAnalysis`)."""
    out = []
    for crit in (doc.get("analysis") or {}).get("criteria", []):
        ranking = crit.get("kind") == "ranking"
        ranked = [s for s in crit.get("systems", []) if s.get("position", 0) > 0]
        axis = _bar_axis(ranked, ranking)
        rows = []
        previous_cluster = None
        for s in crit.get("systems", []):
            low = _finite(s.get("boot_low"))
            high = _finite(s.get("boot_high"))
            left = _position(low, axis)
            right = _position(high, axis)
            score = _finite(s.get("expected_wins") if ranking else s.get("score"))
            rows.append(
                HumanSystemRow(
                    position=s.get("position", 0),
                    rank_low=s.get("rank_low", 0),
                    rank_high=s.get("rank_high", 0),
                    cluster=s.get("cluster", 0),
                    name=s.get("name", ""),
                    score=score,
                    t_low=_finite(s.get("t_low")),
                    t_high=_finite(s.get("t_high")),
                    boot_low=low,
                    boot_high=high,
                    mean_raw=_finite(s.get("mean_raw")),
                    expected_wins=_finite(s.get("expected_wins")),
                    trueskill_rank_low=s.get("trueskill_rank_low"),
                    trueskill_rank_high=s.get("trueskill_rank_high"),
                    n_judgments=s.get("n_judgments", 0),
                    n_segments=s.get("n_segments", 0),
                    bar_left=left,
                    bar_width=None if left is None or right is None else round(right - left, 2),
                    dot=_position(score, axis) if s.get("position", 0) > 0 else None,
                    cluster_start=previous_cluster is not None
                    and s.get("cluster") != previous_cluster,
                )
            )
            previous_cluster = s.get("cluster")
        annotators = [
            QCRow(
                annotator_id=a["annotator_id"],
                username=a.get("username", ""),
                n_rows=a.get("n_rows", 0),
                qc_status=a.get("qc_status", ""),
                qc_n=a.get("qc_n", 0),
                qc_p=_finite(a.get("qc_p")),
                qc_mean_difference=_finite(a.get("qc_mean_difference")),
                repeats_n=a.get("repeats_n", 0),
                repeats_share_within=_finite(a.get("repeats_share_within")),
                references_mean=_finite(a.get("references_mean")),
                minutes=(a.get("time_seconds") or 0.0) / 60,
                included=bool(a.get("included")),
                by_decision=a.get("decision") is not None,
            )
            for a in crit.get("annotators", [])
        ]
        method = crit.get("method") or {}
        scale = crit.get("scale") or (0, 0)
        out.append(
            HumanCriterion(
                slug=criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
                title=f"{crit.get('config_name', '')} · {crit.get('criterion_label', '')}",
                protocol=crit.get("protocol", ""),
                kind=crit.get("kind", ""),
                scale=(int(scale[0]), int(scale[1])),
                space=str(method.get("space", "")),
                test=str(method.get("significance_test", "")),
                n_rows=crit.get("n_rows", 0),
                n_annotators=crit.get("n_annotators", 0),
                n_segments=crit.get("n_segments", 0),
                axis_low=axis[0] if axis else None,
                axis_high=axis[1] if axis else None,
                systems=rows,
                annotators=annotators,
                agreement=crit.get("agreement", []),
                method=method,
            )
        )
    return out


def histogram_plots(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-annotator counts of raw scores (Koehn Fig. 8.3) per criterion, for the plots."""
    return [
        {
            "id": criterion_slug(h.get("config_id"), h.get("criterion", "")),
            "title": f"{h.get('config_name', '')} · {h.get('label', '')}",
            "bins": h.get("bins", []),
            "bin_width": h.get("bin_width", 1),
            "annotators": [
                {"username": a.get("username", ""), "counts": a.get("counts", [])}
                for a in h.get("annotators", [])
            ],
        }
        for h in doc.get("histograms", [])
    ]


@dataclass(frozen=True)
class Interval:
    value: float | None
    low: float | None
    high: float | None

    @property
    def value_text(self) -> str:
        return number_text(self.value, 3)

    @property
    def range_text(self) -> str:
        return interval_text(self.low, self.high, 2)


@dataclass(frozen=True)
class CorrelationRow:
    key: str
    label: str
    oriented: bool  # an error metric, negated so that agreement with humans is positive
    n_systems: int | None
    pearson: Interval | None
    spearman: Interval | None
    kendall: Interval | None
    pairwise_accuracy: float | None
    segment_pearson_z: float | None
    segment_n: int | None
    darr_tau: float | None
    darr_pairs: int | None
    darr_from: str

    @property
    def pairwise_text(self) -> str:
        return number_text(self.pairwise_accuracy, 3)

    @property
    def segment_text(self) -> str:
        return number_text(self.segment_pearson_z, 3)

    @property
    def darr_text(self) -> str:
        return number_text(self.darr_tau, 3)


@dataclass(frozen=True)
class CorrelationCriterion:
    slug: str
    title: str
    human_score: str
    rows: list[CorrelationRow]
    williams_metrics: list[str]  # labels
    williams_p: list[list[float | None]]

    @property
    def has_system_level(self) -> bool:
        return any(r.pearson is not None for r in self.rows)

    @property
    def williams_rows(self) -> list[tuple[str, list[tuple[str, bool]]]]:
        """(metric, [(p-value text, p < α) per column metric])."""
        return [
            (label, [(p_text(p), p is not None and p < ALPHA) for p in row])
            for label, row in zip(self.williams_metrics, self.williams_p, strict=False)
        ]


def _interval(entry: dict[str, Any] | None) -> Interval | None:
    if not entry:
        return None
    return Interval(
        _finite(entry.get("value")), _finite(entry.get("low")), _finite(entry.get("high"))
    )


def correlation_panel(doc: dict[str, Any]) -> list[CorrelationCriterion]:
    """The correlation table and the Williams test per human criterion of a ``correlations``
    document."""
    out = []
    for crit in doc.get("criteria", []):
        labels = {m["key"]: m.get("label", m["key"]) for m in crit.get("metrics", [])}
        rows = []
        for m in crit.get("metrics", []):
            system = m.get("system") or {}
            segment = m.get("segment") or {}
            darr = segment.get("darr") or {}
            pearson_z = segment.get("pearson_z") or {}
            rows.append(
                CorrelationRow(
                    key=m["key"],
                    label=m.get("label", m["key"]),
                    oriented=bool(m.get("oriented")),
                    n_systems=system.get("n"),
                    pearson=_interval(system.get("pearson")),
                    spearman=_interval(system.get("spearman")),
                    kendall=_interval(system.get("kendall")),
                    pairwise_accuracy=_finite(system.get("pairwise_accuracy")),
                    segment_pearson_z=_finite(pearson_z.get("value")),
                    segment_n=pearson_z.get("n"),
                    darr_tau=_finite(darr.get("tau")),
                    darr_pairs=darr.get("pairs"),
                    darr_from=str(darr.get("from", "")),
                )
            )
        williams = crit.get("williams") or {}
        out.append(
            CorrelationCriterion(
                slug=criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
                title=f"{crit.get('config_name', '')} · {crit.get('label', '')}",
                human_score=str(crit.get("human_score", "")),
                rows=rows,
                williams_metrics=[labels.get(k, k) for k in williams.get("metrics", [])],
                williams_p=[[_finite(p) for p in row] for row in williams.get("p", [])],
            )
        )
    return out


def scatter_plots(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per human criterion, per metric: one point per system (metric, human) and the fitted
    least-squares line, for the plots."""
    out = []
    for crit in doc.get("criteria", []):
        metrics = []
        for m in crit.get("metrics", []):
            system = m.get("system")
            if not system or not system.get("points"):
                continue
            pearson = system.get("pearson") or {}
            metrics.append(
                {
                    "key": m["key"],
                    "label": m.get("label", m["key"]),
                    "oriented": bool(m.get("oriented")),
                    "points": [
                        {
                            "name": p["name"],
                            "metric": _short(_finite(p["metric"]), 6),
                            "human": _short(_finite(p["human"]), 6),
                        }
                        for p in system["points"]
                    ],
                    "fit": system.get("fit") or {},
                    "pearson": _finite(pearson.get("value")),
                }
            )
        if metrics:
            out.append(
                {
                    "id": criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
                    "title": f"{crit.get('config_name', '')} · {crit.get('label', '')}",
                    "human": str(crit.get("human_score", "")),
                    "metrics": metrics,
                }
            )
    return out


@dataclass(frozen=True)
class Dashboard:
    """Everything the dashboard page shows."""

    state: AnalysisState
    progress: Progress
    metrics: MetricsPanel | None
    human: list[HumanCriterion]
    correlations: list[CorrelationCriterion]
    human_version: str
    correlation_params: dict[str, Any]
    plots: dict[str, Any] = field(default_factory=dict)

    @property
    def has_results(self) -> bool:
        return bool(self.state.results)

    @property
    def status_json(self) -> dict[str, Any]:
        """The same document as :func:`dashboard_status`, for the page's first paint."""
        return _status_json(self.state, self.progress)


def dashboard_data(*, campaign: Campaign) -> Dashboard:
    """The campaign dashboard: the latest job, the panels built from the latest stored result
    of each kind, live annotation progress and the stale flag.

    A fixed number of queries whatever the campaign's size: the latest job, one per result
    kind, the fingerprint's aggregates (:func:`campaign_fingerprint_current`) and the progress
    aggregates (:func:`campaign_progress`).
    """
    state = analysis_state(campaign=campaign)
    metrics_doc = _data(state, AnalysisResult.Kind.METRICS)
    human_doc = _data(state, AnalysisResult.Kind.HUMAN)
    correlations_doc = _data(state, AnalysisResult.Kind.CORRELATIONS)
    return Dashboard(
        state=state,
        progress=campaign_progress(campaign=campaign),
        metrics=metrics_panel(metrics_doc) if metrics_doc else None,
        human=human_panel(human_doc) if human_doc else [],
        correlations=correlation_panel(correlations_doc) if correlations_doc else [],
        human_version=str(((human_doc or {}).get("analysis") or {}).get("version", "")),
        correlation_params=(correlations_doc or {}).get("params", {}),
        plots={
            "heatmaps": significance_heatmaps(metrics_doc) if metrics_doc else [],
            "histograms": histogram_plots(human_doc) if human_doc else [],
            "scatter": scatter_plots(correlations_doc) if correlations_doc else [],
        },
    )


def _data(state: AnalysisState, kind: str) -> dict[str, Any] | None:
    result = state.results.get(kind)
    return result.data if result is not None else None


def analysis_result_document(*, campaign: Campaign, kind: str) -> AnalysisResult | None:
    """The newest stored result of one kind, for download."""
    return AnalysisResult.objects.filter(campaign=campaign, kind=kind).order_by("-created").first()
