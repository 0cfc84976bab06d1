"""The human-analysis result: small dataclasses for templates, reports and JSON, one per annotator,
system, agreement figure, significance matrix, criterion and campaign, plus the stored human
document of the dashboard (:class:`HumanDocument`: the analysis and the score histograms).

This module is the one contract of the stored result: :meth:`HumanDocument.to_json` and
:meth:`CampaignAnalysis.to_json` write it (with ``"schema":`` :data:`SCHEMA_VERSION`), and every
reader rebuilds the classes with ``from_json``, which refuses a missing or unknown key, or a
newer schema, with a :class:`ValueError` that names it. A document without ``"schema"`` was
stored before the key existed and reads as schema 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Literal, Self, cast

import numpy as np

from annotation.analysis.compat import analysis_schema_1_upgraded
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    system_codes,
    system_name,
)
from evalcore.documents import schema_of
from evalcore.human.normalisation import Basis, Space
from evalcore.numbers import finite_or_none

SCHEMA_VERSION = 2
"""The version of the JSON layout that :meth:`CampaignAnalysis.to_json` and
:meth:`HumanDocument.to_json` write; raise it when a key changes meaning or disappears. Schema 2
names the resample counts ``resamples`` and ``trueskill_runs`` and has one seed; schema 1 is
read under those names (:func:`~annotation.analysis.compat.analysis_schema_1_upgraded`)."""

Usernames = Literal["in_place", "omitted", "last"]
"""Where ``to_json`` puts annotators' usernames: where the stored document has them, nowhere
(downloads by pseudonym) or after every other key (downloads with usernames)."""

QC_PASSED = "passed"

QC_FAILED = "failed"

QC_UNTESTED = "untested"


class _JsonRecord:
    """``to_json`` and ``from_json`` of a flat result dataclass (no nested result classes)."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types; NaN and infinities become None."""
        out: dict[str, Any] = _json_safe(asdict(self))  # type: ignore[call-overload]
        return out

    @classmethod
    def from_json(cls, doc: Any, path: str = "") -> Self:
        """The record a :meth:`to_json` document describes; a ValueError names a missing or
        unknown key."""
        return cls(**_known_keys(cls, doc, path or cls.__name__))


@dataclass(frozen=True)
class AnnotatorResult(_JsonRecord):
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

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types, the username where ``usernames`` puts it."""
        return _usernames_placed(super().to_json(), usernames)


def annotator_common_fields(
    names: Names,
    annotator_id: int,
    code: int,
    n_rows: int,
    status: str,
    bad: Any,
    included: Any,
) -> dict[str, Any]:
    """The fields of an :class:`AnnotatorResult` that every analysis family fills alike: who
    the annotator is, their rows, the bad-reference test (``bad``: the core's result with
    ``n``, ``statistic``, ``p_value`` and ``mean_difference`` per annotator code) and the
    organizer's decision."""
    decision = names.decisions.get(annotator_id)
    return {
        "annotator_id": annotator_id,
        "username": names.usernames.get(annotator_id, ""),
        "pseudonym": names.pseudonyms.get(annotator_id, ""),
        "n_rows": n_rows,
        "qc_status": status,
        "qc_n": int(bad.n[code]),
        "qc_statistic": finite_or_none(bad.statistic[code]),
        "qc_p": finite_or_none(bad.p_value[code]),
        "qc_mean_difference": finite_or_none(bad.mean_difference[code]),
        "decision": None if decision is None else decision.included,
        "decision_reason": "" if decision is None else decision.reason,
        "included": bool(included[code]),
    }


@dataclass(frozen=True)
class SystemResult(_JsonRecord):
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
class AgreementResult(_JsonRecord):
    """One agreement coefficient with the counts behind it."""

    name: str  # e.g. "inter-annotator α (interval)"
    coefficient: str  # "alpha" or "kappa"
    value: float | None
    counts: dict[str, int]
    details: dict[str, float | None]


@dataclass(frozen=True)
class SignificanceMatrix(_JsonRecord):
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


@dataclass(frozen=True, kw_only=True)
class Method(_JsonRecord):
    """How a criterion was analysed: the core's function, the settings it ran with, the seed it
    used and the code version. Score and ranking analyses fill their own fields; in JSON a
    field that does not apply is left out (as it always was)."""

    analysis: str  # the core's function, e.g. "evalcore.human.analyse_scores"
    tolerance: float | None = None  # repeats agree within ± this (scores)
    qc_test: str
    qc_space: str
    threshold: float
    basis: str | None = None  # rows of the annotator statistics (scores)
    idle_cap: float
    include_failed: bool
    exclude_untested: bool
    repeat_agreement: str | None = None  # rankings
    order: str | None = None  # rankings: what orders the systems
    space: str | None = None  # scores: the space of system scores
    # Scores: True when the criterion's lower scores are better (analysed negated, reported as
    # given: annotation/analysis/scores.py); left out otherwise.
    lower_is_better: bool | None = None
    # Scores: "standardised" when the config's scores were imported as z-scores and analysed
    # as given (annotation/analysis/scores.py); left out otherwise.
    scores: str | None = None
    significance_test: str
    alpha: float
    chance: str | None = None  # rankings: chance agreement of κ
    confidence: float
    resamples: int | None = None  # scores
    trueskill_runs: int | None = None  # rankings
    trueskill_environment: list[float] | None = None  # rankings
    seed: int
    version: str

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, without the fields that do not apply (None)."""
        return {k: v for k, v in super().to_json().items() if v is not None}

    def items(self) -> list[tuple[str, Any]]:
        """(key, value) of every field that applies, in order (the page's "Method" line)."""
        return list(self.to_json().items())


@dataclass(frozen=True)
class CriterionAnalysis:
    """The analysis of one criterion of one protocol config."""

    config_id: int
    config_name: str
    protocol: str
    criterion: str
    criterion_label: str
    # The family that computed it, by its ``result_kind`` ("scores", "ranking"): readers ask
    # annotation.analysis.families.registry.family_of_result for the family itself.
    kind: str
    scale: tuple[int, int]
    n_rows: int
    n_annotators: int
    n_segments: int
    annotators: list[AnnotatorResult]
    systems: list[SystemResult]
    agreement: list[AgreementResult]
    significance: SignificanceMatrix
    method: Method

    @property
    def ranked_systems(self) -> list[SystemResult]:
        return [s for s in self.systems if s.position > 0]

    @property
    def nobody_included(self) -> bool:
        """Every annotator is left out (failed QC or excluded): no system has a score."""
        return bool(self.annotators) and not any(a.included for a in self.annotators)

    @property
    def confidence_percent(self) -> str:
        """The intervals' confidence level as a percentage for labels: "95", "97.5"."""
        return percent_label(float(self.method.confidence))

    @property
    def space(self) -> Space | Literal[""]:
        """The score space of the system scores ("" on ranking criteria)."""
        return cast(Space, self.method.space or "")

    @property
    def basis(self) -> Basis:
        """The rows annotator means and SDs come from (score criteria)."""
        return cast(Basis, self.method.basis or "real_and_repeat")

    @property
    def significance_test(self) -> str:
        """The pairwise test between systems that the clusters come from."""
        return self.method.significance_test

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types; NaN and infinities become None; ``scale`` becomes a list."""
        out: dict[str, Any] = _json_safe(asdict(self))
        out["annotators"] = [_usernames_placed(a, usernames) for a in out["annotators"]]
        out["method"] = self.method.to_json()
        return out

    @classmethod
    def from_json(cls, doc: Any, path: str = "criterion") -> CriterionAnalysis:
        """The criterion a :meth:`to_json` document describes, every nested class rebuilt."""
        values = _known_keys(cls, doc, path)
        scale = values["scale"]
        if not isinstance(scale, list | tuple) or len(scale) != 2:
            raise ValueError(f"{path}.scale: expected [minimum, maximum], not {scale!r}")
        values["scale"] = (scale[0], scale[1])
        values["annotators"] = [
            AnnotatorResult.from_json(a, f"{path}.annotators[{i}]")
            for i, a in enumerate(_listed(values["annotators"], f"{path}.annotators"))
        ]
        values["systems"] = [
            SystemResult.from_json(s, f"{path}.systems[{i}]")
            for i, s in enumerate(_listed(values["systems"], f"{path}.systems"))
        ]
        values["agreement"] = [
            AgreementResult.from_json(a, f"{path}.agreement[{i}]")
            for i, a in enumerate(_listed(values["agreement"], f"{path}.agreement"))
        ]
        values["significance"] = SignificanceMatrix.from_json(
            values["significance"], f"{path}.significance"
        )
        values["method"] = Method.from_json(values["method"], f"{path}.method")
        return cls(**values)


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

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types with ``"schema"``; NaN and infinities become None."""
        return {
            "schema": SCHEMA_VERSION,
            "campaign_id": self.campaign_id,
            "settings": _json_safe(asdict(self.settings)),
            "version": self.version,
            "criteria": [c.to_json(usernames=usernames) for c in self.criteria],
        }

    @classmethod
    def from_json(cls, doc: Any, path: str = "analysis") -> CampaignAnalysis:
        """The analysis a :meth:`to_json` document describes (schema 1 when it has none)."""
        if schema_check(doc, path) == 1:
            doc = analysis_schema_1_upgraded(doc, path, AnalysisSettings.seed)
        values = _known_keys(cls, doc, path, extra=("schema",))
        values["settings"] = AnalysisSettings(
            **_known_keys(AnalysisSettings, values["settings"], f"{path}.settings")
        )
        values["criteria"] = [
            CriterionAnalysis.from_json(c, f"{path}.criteria[{i}]")
            for i, c in enumerate(_listed(values.get("criteria", []), f"{path}.criteria"))
        ]
        return cls(**values)


@dataclass(frozen=True)
class HistogramAnnotator(_JsonRecord):
    """One annotator's counts of raw scores in the bins of a :class:`Histogram`. Only downloads
    carry a ``pseudonym``; the stored document has none."""

    id: int
    username: str
    counts: list[int]
    pseudonym: str | None = None

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types, without ``pseudonym`` when there is none."""
        out = super().to_json()
        if out["pseudonym"] is None:
            del out["pseudonym"]
        return _usernames_placed(out, usernames)


@dataclass(frozen=True)
class Histogram(_JsonRecord):
    """Per-annotator counts of the raw scores of one score criterion of one protocol config
    (real items only): ``bins`` are the lower bounds, ``bin_width`` their width."""

    config_id: int
    config_name: str
    criterion: str
    label: str
    bins: list[int]
    bin_width: int
    annotators: list[HistogramAnnotator]

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types."""
        out = super().to_json()
        out["annotators"] = [a.to_json(usernames=usernames) for a in self.annotators]
        return out

    @classmethod
    def from_json(cls, doc: Any, path: str = "histogram") -> Self:
        """The histogram a :meth:`to_json` document describes."""
        values = _known_keys(cls, doc, path)
        values["annotators"] = [
            HistogramAnnotator.from_json(a, f"{path}.annotators[{i}]")
            for i, a in enumerate(_listed(values["annotators"], f"{path}.annotators"))
        ]
        return cls(**values)


@dataclass(frozen=True)
class HumanDocument:
    """The stored ``human`` result of the dashboard: the campaign's analysis with the default
    settings and the campaign's seed, and the histograms of its score criteria."""

    analysis: CampaignAnalysis
    histograms: list[Histogram] = field(default_factory=list)

    def to_json(self, *, usernames: Usernames = "in_place") -> dict[str, Any]:
        """Plain JSON types with ``"schema"``, as stored and downloaded."""
        return {
            "schema": SCHEMA_VERSION,
            "analysis": self.analysis.to_json(usernames=usernames),
            "histograms": [h.to_json(usernames=usernames) for h in self.histograms],
        }

    @classmethod
    def from_json(cls, doc: Any, path: str = "human") -> HumanDocument:
        """The document a :meth:`to_json` document describes (schema 1 when it has none)."""
        schema_check(doc, path)
        values = _known_keys(cls, doc, path, extra=("schema",))
        return cls(
            analysis=CampaignAnalysis.from_json(values["analysis"], f"{path}.analysis"),
            histograms=[
                Histogram.from_json(h, f"{path}.histograms[{i}]")
                for i, h in enumerate(_listed(values.get("histograms", []), f"{path}.histograms"))
            ],
        )

    @classmethod
    def read(cls, doc: HumanDocument | Mapping[str, Any]) -> HumanDocument:
        """``doc`` when it is read already, else :meth:`from_json` of it."""
        return doc if isinstance(doc, HumanDocument) else cls.from_json(doc)


def schema_check(doc: Any, path: str) -> int:
    """The schema of a stored human document or analysis (``evalcore.documents.schema_of``)."""
    return schema_of(doc, SCHEMA_VERSION, path)


def _known_keys(cls: type[Any], doc: Any, path: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """``doc``'s values of the fields of the dataclass ``cls``. A ValueError names every missing
    required key and every key ``cls`` does not know (a misspelt key is both); keys of fields
    with a default may be missing."""
    if not isinstance(doc, Mapping):
        raise ValueError(f"{path}: expected a JSON object, not {type(doc).__name__}")
    known = {f.name: f for f in fields(cls)}
    missing = [
        name
        for name, f in known.items()
        if name not in doc and f.default is MISSING and f.default_factory is MISSING
    ]
    unknown = [str(key) for key in doc if key not in known and key not in extra]
    if missing or unknown:
        problems = [f"missing key {k!r}" for k in missing] + [f"unknown key {k!r}" for k in unknown]
        raise ValueError(f"{path}: {'; '.join(problems)}")
    return {name: doc[name] for name in known if name in doc}


def _listed(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{path}: expected a list, not {type(value).__name__}")
    return list(value)


def _usernames_placed(doc: dict[str, Any], usernames: Usernames) -> dict[str, Any]:
    """An annotator's JSON with its username kept in place, left out or moved last."""
    if usernames == "in_place":
        return doc
    username = doc.pop("username")
    if usernames == "last":
        doc["username"] = username
    return doc


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
