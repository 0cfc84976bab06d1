"""The stored ``metrics`` and ``correlations`` documents of an analysis, as typed classes.

This module is their one contract: the pipeline builds these classes and stores ``to_json()``;
the dashboard, the plots and every other reader rebuild them with ``from_json``, which refuses a
missing or unknown key, a value of another type or a newer schema (``evalcore.documents``).
Missing numbers (an undefined correlation, a p-value of a system with itself) are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalcore.documents import OMIT_NONE, JsonDocument
from metrics.compat import params_read


@dataclass(frozen=True)
class Named(JsonDocument):
    id: int
    name: str


@dataclass(frozen=True)
class SystemRuns(JsonDocument):
    """A system of the campaign with its optimizer runs."""

    id: int
    name: str
    runs: list[Named]


@dataclass(frozen=True)
class RunScore(JsonDocument):
    """One run's corpus score with its bootstrap interval and standard deviation."""

    id: int
    name: str
    score: float | None
    ci_low: float | None
    ci_high: float | None
    boot_std: float | None


@dataclass(frozen=True)
class SystemScore(JsonDocument):
    """A system in one metric's table: its runs, and MultEval's row against the baseline."""

    id: int
    name: str
    runs: list[RunScore]
    mean: float | None
    s_sel: float | None
    s_opt: float | None
    p_baseline: float | None
    delta_baseline: float | None


@dataclass(frozen=True)
class Pairwise(JsonDocument):
    """Paired bootstrap and approximate randomisation of every pair of systems: row i, column
    j is system ``systems[i]`` against ``systems[j]`` (``delta`` is score(j) − score(i))."""

    systems: list[int]
    pooled_runs: int
    bootstrap_p: list[list[float | None]]
    ar_p: list[list[float | None]]
    delta: list[list[float | None]]
    win_share: list[list[float | None]]


@dataclass(frozen=True)
class MetricScores(JsonDocument):
    """One metric: its signature, every system's scores and the all-pairs tests."""

    key: str
    label: str
    signature: str
    higher_is_better: bool
    systems: list[SystemScore]
    pairwise: Pairwise


@dataclass(frozen=True)
class MetricsDocument(JsonDocument):
    """The ``metrics`` result: the analysis's parameters, systems and every metric's scores.
    Schema 1 named the resample count otherwise in ``params`` (``metrics.compat``)."""

    SCHEMA = 2

    version: str
    params: dict[str, Any]
    n_segments: int
    systems: list[SystemRuns]
    baseline: Named
    unavailable: dict[str, str]  # metric → why it could not be computed here
    metrics: list[MetricScores]

    @classmethod
    def upgraded(cls, doc: dict[str, Any], schema: int) -> dict[str, Any]:
        if schema < 2 and isinstance(doc.get("params"), dict):
            return {**doc, "params": params_read(doc["params"])}
        return doc


@dataclass(frozen=True)
class Interval(JsonDocument):
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Point(JsonDocument):
    """A system in a scatter plot: its human score and its (oriented) metric score."""

    system_id: int
    name: str
    human: float
    metric: float


@dataclass(frozen=True)
class Fit(JsonDocument):
    slope: float | None
    intercept: float | None


@dataclass(frozen=True)
class SystemLevel(JsonDocument):
    """A metric against the humans over systems, each correlation with its bootstrap interval."""

    n: int
    pearson: Interval
    spearman: Interval
    kendall: Interval
    pairwise_accuracy: float | None
    points: list[Point]
    fit: Fit


@dataclass(frozen=True)
class Darr(JsonDocument):
    """WMT's DARR Kendall-like τ over pairs of translations of one source."""

    tau: float | None
    concordant: int
    discordant: int
    pairs: int
    threshold: float
    pairs_from: str = field(metadata={"key": "from"})


@dataclass(frozen=True)
class PearsonZ(JsonDocument):
    value: float | None
    n: int


@dataclass(frozen=True)
class SegmentLevel(JsonDocument):
    darr: Darr | None = field(default=None, metadata=OMIT_NONE)
    pearson_z: PearsonZ | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class MetricCorrelation(JsonDocument):
    """One metric against one criterion; ``system`` is absent below three systems."""

    key: str
    label: str
    oriented: bool  # the metric's scores were negated (lower is better)
    segment: SegmentLevel
    system: SystemLevel | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Williams(JsonDocument):
    """Williams-test p-values between every two metrics' system-level Pearson correlations."""

    metrics: list[str]
    p: list[list[float | None]]


@dataclass(frozen=True)
class CriterionCorrelations(JsonDocument):
    config_id: int
    config_name: str
    criterion: str
    label: str
    kind: str
    human_score: str
    metrics: list[MetricCorrelation]
    williams: Williams


@dataclass(frozen=True)
class CorrelationParams(JsonDocument):
    resamples: int
    seed: int
    da_pair_threshold: float


@dataclass(frozen=True)
class CorrelationsDocument(JsonDocument):
    """The ``correlations`` result: every criterion against every metric. Schema 1 named the
    resample count otherwise in ``params`` (``metrics.compat``)."""

    SCHEMA = 2

    version: str
    params: CorrelationParams
    criteria: list[CriterionCorrelations]
    # Human translations rated as systems (System.human): shown and ranked by the human
    # analysis, left out of every correlation here, as the metrics tasks leave them out.
    human_systems_left_out: list[Named] = field(default_factory=list)

    @classmethod
    def upgraded(cls, doc: dict[str, Any], schema: int) -> dict[str, Any]:
        if schema < 2 and isinstance(doc.get("params"), dict):
            return {**doc, "params": params_read(doc["params"])}
        return doc
