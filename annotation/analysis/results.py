"""The human-analysis result: small dataclasses for templates, reports and JSON, one per annotator,
system, agreement figure, significance matrix, criterion and campaign."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    system_codes,
    system_name,
)
from evalcore.numbers import finite_or_none

QC_PASSED = "passed"

QC_FAILED = "failed"

QC_UNTESTED = "untested"


@dataclass(frozen=True)
class AnnotatorResult:
    """QC, normalisation, agreement with oneself and time of one annotator on one criterion."""

    annotator_id: int
    username: str
    pseudonym: str
    n_rows: int
    qc_status: str  # "passed", "failed" or "untested"
    qc_n: int
    qc_statistic: float | None
    qc_p: float | None
    qc_mean_difference: float | None
    decision: bool | None  # the organizer's include (True) / exclude (False), if any
    decision_reason: str
    included: bool
    repeats_n: int
    repeats_share_within: float | None
    repeats_pearson: float | None
    references_n: int
    references_mean: float | None
    time_seconds: float
    n_screens: int
    n_unknown_time: int
    n_capped: int
    mean: float | None
    sd: float | None
    degenerate: bool
    # Rankings only: bad references left out of the test because every output of their screen
    # was degraded, and the mean Kendall τ_b between repeated and original screens.
    qc_uninformative: int = 0
    repeats_kendall_tau: float | None = None


@dataclass(frozen=True)
class SystemResult:
    """One system's human scores, ranks and cluster on one criterion.

    ``position`` is the place in the ranking (1 = best); systems without a score have
    position 0 and cluster 0. Score fields are None for ranking criteria and vice versa.
    """

    system_id: int
    name: str
    position: int
    cluster: int
    rank_low: int
    rank_high: int
    wins: int
    losses: int
    n_judgments: int
    n_segments: int
    score: float | None
    mean_raw: float | None
    mean_shifted: float | None
    mean_z: float | None
    t_low: float | None
    t_high: float | None
    boot_low: float | None
    boot_high: float | None
    expected_wins: float | None = None
    n_opponents: int | None = None
    no_worse_share: float | None = None
    no_worse_n: int | None = None
    trueskill_mu: float | None = None
    trueskill_sigma: float | None = None
    trueskill_rank: int | None = None
    trueskill_rank_low: int | None = None
    trueskill_rank_high: int | None = None


@dataclass(frozen=True)
class AgreementResult:
    """One agreement coefficient with the counts behind it."""

    name: str  # e.g. "inter-annotator α (interval)"
    coefficient: str  # "alpha" or "kappa"
    value: float | None
    counts: dict[str, int]
    details: dict[str, float | None]


@dataclass(frozen=True)
class SignificanceMatrix:
    """Pairwise one-sided p-values in ranking order: ``p[i][j]`` = p of "i better than j"."""

    test: str
    alpha: float
    systems: list[str]
    p: list[list[float | None]]
    n: list[list[int]]

    @property
    def rows(self) -> list[tuple[str, list[float | None]]]:
        """(system, its row of p-values), for tables."""
        return list(zip(self.systems, self.p, strict=True))


@dataclass(frozen=True)
class CriterionAnalysis:
    """The analysis of one criterion of one protocol config."""

    config_id: int
    config_name: str
    protocol: str
    criterion: str
    criterion_label: str
    kind: Literal["scores", "ranking"]
    scale: tuple[int, int]
    n_rows: int
    n_annotators: int
    n_segments: int
    annotators: list[AnnotatorResult]
    systems: list[SystemResult]
    agreement: list[AgreementResult]
    significance: SignificanceMatrix
    method: dict[str, Any]

    @property
    def ranked_systems(self) -> list[SystemResult]:
        return [s for s in self.systems if s.position > 0]

    @property
    def confidence_percent(self) -> str:
        """The intervals' confidence level as a percentage for labels: "95", "97.5"."""
        return percent_label(float(self.method["confidence"]))


def percent_label(share: float) -> str:
    """``share`` (0.975) as a percentage without float noise ("97.5")."""
    return f"{round(share * 100, 6):g}"


@dataclass(frozen=True)
class CampaignAnalysis:
    """Every criterion of every protocol config of a campaign that has judgments."""

    campaign_id: str
    settings: AnalysisSettings
    version: str
    criteria: list[CriterionAnalysis] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """Plain JSON types; NaN and infinities become None."""
        return _json_safe(asdict(self))


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def by_rank(rows: list[SystemResult]) -> list[SystemResult]:
    """Ranked systems first, in ranking order, then unscored ones by name."""
    return sorted(rows, key=lambda s: (s.position == 0, s.position, s.name))


def alpha_result(name: str, alpha: Any) -> AgreementResult:
    return AgreementResult(
        name=name,
        coefficient="alpha",
        value=finite_or_none(alpha.alpha),
        counts={"units": int(alpha.n_units), "values": int(alpha.n_values)},
        details={
            "observed_disagreement": finite_or_none(alpha.observed_disagreement),
            "expected_disagreement": finite_or_none(alpha.expected_disagreement),
        },
    )


def kappa_result(name: str, kappa: Any) -> AgreementResult:
    return AgreementResult(
        name=name,
        coefficient="kappa",
        value=finite_or_none(kappa.kappa),
        counts={
            "pairs": int(kappa.n_pairs),
            "agreements": int(kappa.n_agreements),
            "comparisons": int(kappa.n_comparisons),
        },
        details={
            "p_agreement": finite_or_none(kappa.p_agreement),
            "p_chance": finite_or_none(kappa.p_chance),
            "p_better": finite_or_none(kappa.p_better),
            "p_worse": finite_or_none(kappa.p_worse),
            "p_tie": finite_or_none(kappa.p_tie),
        },
    )


def significance_matrix(
    table: CriterionTable,
    significance: Any,
    clusters: Any,
    names: Names,
    settings: AnalysisSettings,
) -> SignificanceMatrix:
    order = [int(c) for c in clusters.order.tolist() if c in system_codes(table)]
    return SignificanceMatrix(
        test=str(significance.test),
        alpha=settings.alpha,
        systems=[system_name(table, c, names) for c in order],
        p=[[finite_or_none(significance.p_value[a, b]) for b in order] for a in order],
        n=[[int(significance.n[a, b]) for b in order] for a in order],
    )
