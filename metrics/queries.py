"""Queries of the campaign dashboard: annotation progress, the latest analysis job and its stored
results, and the status the dashboard polls."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
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

from annotation.models import Assignment, Campaign, Judgment, ProtocolConfig, Task
from evalcore.human.qc import DEFAULT_IDLE_CAP
from evalsite.db import features
from evalsite.formatting import count_text, duration_display, number_text
from metrics import pipeline
from metrics.documents import CorrelationsDocument, MetricsDocument
from metrics.human import human_document_named
from metrics.models import AnalysisJob, AnalysisResult

# Time on one item above this is an idle gap; it counts as this many seconds (the QC's time on
# task uses the same cap).
IDLE_CAP_SECONDS = DEFAULT_IDLE_CAP

RESULT_KINDS = (
    AnalysisResult.Kind.METRICS,
    AnalysisResult.Kind.HUMAN,
    AnalysisResult.Kind.CORRELATIONS,
)


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
            # The counts as the page writes them (thousands separated in the active language).
            "judged_text": count_text(self.judged),
            "needed_text": count_text(self.needed),
            "remaining_text": count_text(self.remaining),
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
                    "judged_text": count_text(c.judged),
                    "remaining_text": count_text(c.remaining),
                    "percent": c.percent,
                    "seconds": c.seconds,
                    "seconds_display": c.seconds_display,
                    "remaining_seconds": c.remaining_seconds,
                    "remaining_display": c.remaining_display,
                }
                for c in self.configs
            ],
        }


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
    if features.ordered_set_aggregates():
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
        if seconds is not None:  # filtered out above; the column is nullable
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


def status_json(state: AnalysisState, progress: Progress) -> dict[str, Any]:
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
    return status_json(
        analysis_state(campaign=campaign, with_data=False), campaign_progress(campaign=campaign)
    )


def result_data(state: AnalysisState, kind: str) -> dict[str, Any] | None:
    result = state.results.get(kind)
    return result.data if result is not None else None


def result_json(*, campaign: Campaign, result: AnalysisResult, real_names: bool) -> dict[str, Any]:
    """A stored result as the API and the downloads give it: read whole through its typed
    document (one that does not fit is refused with a ValueError, never passed on) and written
    again; the human document's annotators by pseudonym unless ``real_names``."""
    if result.kind == AnalysisResult.Kind.HUMAN:
        return human_document_named(campaign=campaign, data=result.data, real_names=real_names)
    if result.kind == AnalysisResult.Kind.METRICS:
        return MetricsDocument.from_json(result.data).to_json()
    return CorrelationsDocument.from_json(result.data).to_json()


def analysis_result_document(*, campaign: Campaign, kind: str) -> AnalysisResult | None:
    """The newest stored result of one kind, for download."""
    return AnalysisResult.objects.filter(campaign=campaign, kind=kind).order_by("-created").first()
