"""Selectors of the human-judgment analysis: the database's judgments into the numerical core.

A campaign's judgments are read per protocol config and criterion (one ``JudgmentValue`` row =
one annotator × item × shown output × criterion) into :class:`evalcore.human.Judgments`
tables with a handful of ``values_list`` queries and numpy, then analysed by
:func:`evalcore.human.analyse_scores` (1–5 and 0–100 criteria) or
:func:`evalcore.human.analyse_rankings` (ranks). No formula lives here: this module maps
database ids to codes and back, applies the organizer's include/exclude decisions, and turns the
core's arrays into small dataclasses for templates, reports and JSON.

Annotator QC runs on both kinds: the bad-reference test on scores for 1–5 and 0–100 criteria,
on ranks for rankings (a degraded output ranked worse than its original); annotators who fail
are left out of the aggregates by default, with the same settings and organizer decisions.

Item types come from ``ItemOutput.kind``: a system output on a real item is REAL, ``repeat`` is
REPEAT, ``bad_ref`` is BAD_REF, ``reference`` is REFERENCE. A QC row's original is the same
annotator's value, on the same criterion, of the output that ``ItemOutput.original`` names.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy
import trueskill
from django.contrib.auth import get_user_model
from django.core.cache import cache as django_cache
from django.db import connection
from django.db.models import (
    Case,
    Count,
    FloatField,
    IntegerField,
    Max,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Cast, Coalesce

from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.campaigns.selectors import campaign_inputs_stamp, content_hash
from annotation.models import (
    AnnotatorDecision,
    AnnotatorPseudonym,
    Campaign,
    ItemKind,
    JudgmentValue,
    ProtocolConfig,
    System,
    pseudonym_code,
)
from annotation.protocols import PROTOCOLS, RANK, Criterion
from evalcore.human import (
    TOLERANCE_0_TO_100,
    TOLERANCE_1_TO_5,
    AnnotatorQC,
    ItemType,
    Judgments,
    Normalised,
    RankingAnalysis,
    RankingQC,
    ScoreAnalysis,
    analyse_rankings,
    analyse_scores,
    annotator_qc,
    link_originals,
    normalise,
    pairwise_comparisons,
    ranking_qc,
)
from evalcore.human.normalisation import Basis, Space
from evalcore.human.qc import QCSpace, QCTest, RankSpace
from evalcore.human.systems import SignificanceTest
from evalcore.version import evalsite_version

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

QC_TESTS: tuple[QCTest, ...] = ("paired_t", "wilcoxon", "mannwhitney")
QC_SPACES: tuple[QCSpace, ...] = ("raw", "z")
RANK_SPACES: tuple[RankSpace, ...] = ("rank", "normalised_rank")
BASES: tuple[Basis, ...] = ("real_and_repeat", "all")
SPACES: tuple[Space, ...] = ("raw", "shifted", "z")
SIGNIFICANCE_TESTS: tuple[SignificanceTest, ...] = (
    "wilcoxon",
    "sign",
    "mannwhitney",
    "bootstrap",
    "ar",
)


class _Code(Case):
    """A ``CASE`` whose integer result needs no per-row conversion: the database already
    returns ints, and Django's default ``int()`` converter would run once per row."""

    @property
    def convert_value(self) -> Any:
        return self._convert_value_noop


# ItemOutput.kind → ItemType code, computed by the database so that no Python loop maps rows.
KIND_CODE = _Code(
    When(output__kind=ItemKind.REPEAT, then=Value(int(ItemType.REPEAT))),
    When(output__kind=ItemKind.REFERENCE, then=Value(int(ItemType.REFERENCE))),
    When(output__kind=ItemKind.BAD_REFERENCE, then=Value(int(ItemType.BAD_REF))),
    default=Value(int(ItemType.REAL)),
    output_field=IntegerField(),
)
ITEM_TYPE_NAMES = {
    int(ItemType.REAL): "SYSTEM",
    int(ItemType.REPEAT): "REPEAT",
    int(ItemType.REFERENCE): "REF",
    int(ItemType.BAD_REF): "BAD_REF",
}

QC_PASSED = "passed"
QC_FAILED = "failed"
QC_UNTESTED = "untested"


def code_version() -> str:
    """The versions that produced a result (STYLE habit 7), e.g.
    ``evalsite 0.1.0+src.3f9a0c21b7de; numpy 2.1.0; scipy 1.17.1; trueskill 0.4.5`` (the
    digest of the running source: :mod:`evalcore.version`)."""
    return (
        f"evalsite {evalsite_version()}; numpy {np.__version__}; scipy {scipy.__version__}; "
        f"trueskill {trueskill.__version__}"
    )


@dataclass(frozen=True)
class AnalysisSettings:
    """What an organizer can choose; every field is reported beside the results.

    Attributes:
        qc_test: the bad-reference test: "paired_t" (default), "wilcoxon" or "mannwhitney"
            (score and ranking criteria alike).
        qc_space: the scores the test runs on: "raw" or "z" (score criteria).
        ranking_qc_space: what the test compares on ranking criteria: the "rank" (default) or
            the "normalised_rank" (r − 1)/(k − 1) on a screen of k outputs.
        threshold: an annotator passes when p ≤ threshold.
        basis: the rows annotator means and SDs come from: "real_and_repeat" or "all".
        idle_cap: the most seconds one screen counts for in time on task.
        include_failed: keep annotators who failed QC in the system scores.
        exclude_untested: leave out annotators the test could not judge (fewer than two
            bad-reference pairs; on rankings, bad references on screens where every output was
            degraded do not count); by default they stay in, flagged "untested".
        space: the score space of system scores, intervals and significance: raw, shifted, z.
        test: pairwise significance between systems (score protocols).
        alpha: significance level of the clusters.
        confidence: level of the t and bootstrap intervals and of the TrueSkill rank ranges.
        n_bootstrap: resamples of the bootstrap intervals and of the random tests.
        ranking_bootstrap: TrueSkill runs for rank ranges (each is a full pass over the
            comparisons, so fewer than ``n_bootstrap`` by default).
        seed: the seed of every random step; ``None`` uses the protocol config's seed.
    """

    qc_test: QCTest = "paired_t"
    qc_space: QCSpace = "raw"
    ranking_qc_space: RankSpace = "rank"
    threshold: float = 0.05
    basis: Basis = "real_and_repeat"
    idle_cap: float = 300.0
    include_failed: bool = False
    exclude_untested: bool = False
    space: Space = "z"
    test: SignificanceTest = "wilcoxon"
    alpha: float = 0.05
    confidence: float = 0.95
    n_bootstrap: int = 1000
    ranking_bootstrap: int = 100
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------
# Loading: the database into Judgments tables


@dataclass(frozen=True)
class CriterionTable:
    """One criterion of one protocol config as a :class:`Judgments` table, with the database
    ids behind its codes.

    Attributes:
        config: the protocol config.
        criterion: the criterion key ("adequacy", "fluency", "score", "rank", …).
        judgments: the table; row i is ``value_ids[i]``.
        value_ids: JudgmentValue id per row (ascending).
        annotator_ids: user id per annotator code.
        segment_ids: Segment id per segment code.
        system_ids: System id per system code; when ``has_reference``, the last code stands for
            references shown as outputs and its id is -1.
        has_reference: whether some rows showed a reference as an output.
    """

    config: ProtocolConfig
    criterion: str
    judgments: Judgments
    value_ids: IntArray
    annotator_ids: IntArray
    segment_ids: IntArray
    system_ids: IntArray
    has_reference: bool

    @property
    def definition(self) -> Criterion:
        return criterion_definition(self.config.protocol, self.criterion)

    @property
    def is_ranking(self) -> bool:
        return self.criterion == RANK.key or PROTOCOLS[self.config.protocol].ranks


# Columns of the one query per (config, criterion); all numeric so that numpy takes the rows
# as they come (None becomes NaN).
_COLUMNS = (
    "id",
    "judgment__annotator_id",
    "judgment__item__segment_id",
    "output_id",
    "kind_code",
    "output__system_id",
    "output__original_id",
    "value",
    "judgment__seconds",
    "judgment_id",
)


def campaign_criteria(*, campaign: Campaign) -> list[tuple[ProtocolConfig, str]]:
    """The (protocol config, criterion) pairs that hold judgments, in config order.

    Criteria come from the protocol registry (submits and imports are validated against it);
    one ``EXISTS`` query per pair, which stays fast however many judgments there are.
    """
    found: list[tuple[ProtocolConfig, str]] = []
    for config in ProtocolConfig.objects.filter(campaign=campaign).order_by("created", "pk"):
        definition = PROTOCOLS.get(config.protocol)
        if definition is None:
            continue
        keys = [RANK.key] if definition.ranks else [c.key for c in definition.criteria]
        found.extend(
            (config, key) for key in keys if criterion_values(config=config, criterion=key).exists()
        )
    return found


def criterion_values(*, config: ProtocolConfig, criterion: str) -> QuerySet[JudgmentValue]:
    """The judgment values of one criterion of one protocol config."""
    return JudgmentValue.objects.filter(judgment__item__task__config=config, criterion=criterion)


def criterion_table_load(*, config: ProtocolConfig, criterion: str) -> CriterionTable:
    """Read one criterion of one protocol config into a :class:`CriterionTable`.

    One query (``values_list`` of numeric columns, the item type computed by the database);
    everything else is numpy over whole columns.
    """
    data = values_array(
        criterion_values(config=config, criterion=criterion)
        .annotate(kind_code=KIND_CODE)
        .order_by("id"),
        _COLUMNS,
    )
    n = data.shape[0]
    value_id = data[:, 0].astype(np.int64)
    annotator_ids, annotator = np.unique(data[:, 1].astype(np.int64), return_inverse=True)
    segment_ids, segment = np.unique(data[:, 2].astype(np.int64), return_inverse=True)
    output = data[:, 3].astype(np.int64)
    item_type = data[:, 4].astype(np.int64)
    system_raw = data[:, 5]
    original_output = data[:, 6]
    score = data[:, 7]
    seconds = data[:, 8]
    _, screen = np.unique(data[:, 9].astype(np.int64), return_inverse=True)

    shows_system = np.isfinite(system_raw)
    system_ids, system_code = np.unique(
        system_raw[shows_system].astype(np.int64), return_inverse=True
    )
    has_reference = bool((~shows_system).any())
    system = np.full(n, system_ids.shape[0], dtype=np.int64)
    system[shows_system] = system_code
    if has_reference:
        system_ids = np.r_[system_ids, -1]

    qc = (item_type == ItemType.REPEAT) | (item_type == ItemType.BAD_REF)
    wanted = np.where(qc & np.isfinite(original_output), original_output, -1).astype(np.int64)
    original = link_originals(annotator=annotator, item=output, original_item=wanted)
    # The core accepts originals only on REAL rows; anything else (a repeat of a repeat) is
    # left unlinked rather than guessed.
    target = np.maximum(original, 0)
    original = np.where((original >= 0) & (item_type[target] == ItemType.REAL), original, -1)

    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=segment,
        system=system,
        score=score,
        item_type=item_type,
        original=original,
        screen=screen,
        seconds=seconds,
        n_annotators=annotator_ids.shape[0],
        n_segments=segment_ids.shape[0],
        n_systems=system_ids.shape[0],
    )
    return CriterionTable(
        config=config,
        criterion=criterion,
        judgments=judgments,
        value_ids=value_id,
        annotator_ids=annotator_ids.astype(np.int64),
        segment_ids=segment_ids.astype(np.int64),
        system_ids=system_ids.astype(np.int64),
        has_reference=has_reference,
    )


def values_array(
    queryset: QuerySet[Any], columns: tuple[str, ...], *, chunk_size: int = 20_000
) -> FloatArray:
    """The numeric ``columns`` of a queryset as a float array (None becomes NaN).

    On PostgreSQL the rows come as one binary ``COPY``: every column cast to double precision
    with NULL as NaN, so that each row has the same size and numpy reads the whole stream with
    one ``frombuffer`` (no Python object per value). Elsewhere (SQLite) the rows are read in
    chunks through the ORM.
    """
    if connection.vendor == "postgresql":
        return _copy_array(queryset, columns)
    rows = queryset.values_list(*columns).iterator(chunk_size=chunk_size)
    parts = []
    while True:
        chunk = list(itertools.islice(rows, chunk_size))
        if not chunk:
            break
        parts.append(np.array(chunk, dtype=np.float64))
    if not parts:
        return np.zeros((0, len(columns)), dtype=np.float64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _copy_array(queryset: QuerySet[Any], columns: tuple[str, ...]) -> FloatArray:
    """PostgreSQL: each column aggregated into one ``bytea`` of big-endian doubles
    (``string_agg(float8send(x))``), so a million rows cross as a few buffers. All aggregates
    of one SELECT consume the rows in the same order, so the columns stay aligned; the rows
    are put in the order of the first column (the id) here."""
    names = [f"_f{i}" for i in range(len(columns))]
    floats = (
        queryset.order_by()
        .annotate(
            **{
                name: Coalesce(Cast(column, FloatField()), Value(math.nan, FloatField()))
                for name, column in zip(names, columns, strict=True)
            }
        )
        .values_list(*names)
    )
    inner, params = floats.query.sql_with_params()
    quote = connection.ops.quote_name
    aggregates = ", ".join(f"string_agg(float8send({quote(n)}), ''::bytea)" for n in names)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {aggregates} FROM ({inner}) AS rows", params)
        buffers = cursor.fetchone()
    if buffers is None or buffers[0] is None:
        return np.zeros((0, len(columns)), dtype=np.float64)
    table = np.column_stack([np.frombuffer(bytes(b), dtype=">f8") for b in buffers])
    table = table.astype(np.float64).reshape(-1, len(columns))
    return table[np.argsort(table[:, 0], kind="stable")]


def criterion_definition(protocol: str, key: str) -> Criterion:
    """The protocol registry's criterion (scale, label); an unknown key gets a 0–100 scale."""
    definition = PROTOCOLS.get(protocol)
    if definition is not None:
        if definition.ranks and key == RANK.key:
            return RANK
        for criterion in definition.criteria:
            if criterion.key == key:
                return criterion
    return Criterion(key, key, 0, 100)


def repeat_tolerance(criterion: Criterion) -> float:
    """±1 on 1–5 scales, ±10 on 0–100 (DESIGN §4): the tolerance that fits the scale."""
    return TOLERANCE_0_TO_100 if criterion.maximum - criterion.minimum > 10 else TOLERANCE_1_TO_5


# --------------------------------------------------------------------------------------------
# Results for templates, reports and JSON


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


def _number(value: Any) -> float | None:
    """A finite float or None (NaN, ±inf and missing values are not numbers to show)."""
    number = float(value)
    return number if math.isfinite(number) else None


# --------------------------------------------------------------------------------------------
# Analysis


logger = logging.getLogger(__name__)

# How long a campaign's analysis stays in the cache (seconds). Its key is a hash of everything
# the analysis reads, so a new or revised judgment, an include/exclude decision, an upload, a
# protocol config's change or other settings compute afresh at once; the limit only bounds
# changes made outside the application (the database edited by hand).
ANALYSIS_CACHE_SECONDS = 15 * 60


def campaign_analysis_cached(*, campaign: Campaign, settings: AnalysisSettings) -> CampaignAnalysis:
    """:func:`campaign_analysis_compute` of the whole campaign, kept in the cache: the analysis
    page, its report downloads and the API compute it once for unchanged inputs (15 s for a
    million judgments, a few aggregate queries to find it again). Without a working cache it is
    computed every time."""
    key = analysis_cache_key(campaign=campaign, settings=settings)
    try:
        cached = django_cache.get(key)
    except Exception as exc:  # the cache is an optimisation: an outage must not fail the page
        logger.warning("analysis cache unreachable, computing: %s", exc)
        cached = None
    if isinstance(cached, CampaignAnalysis):
        return with_current_usernames(cached)
    analysis = campaign_analysis_compute(campaign=campaign, settings=settings)
    try:
        django_cache.set(key, analysis, ANALYSIS_CACHE_SECONDS)
    except Exception as exc:
        logger.warning("analysis cache unreachable, not kept: %s", exc)
    return analysis


def with_current_usernames(analysis: CampaignAnalysis) -> CampaignAnalysis:
    """``analysis`` with its annotators' usernames read again (one query): a user renamed since
    it was computed shows the new name at once. Usernames are display only, so they stay out of
    the cache key, which would otherwise need the campaign's distinct annotators."""
    ids = {a.annotator_id for c in analysis.criteria for a in c.annotators}
    if not ids:
        return analysis
    user_model = get_user_model()
    current = dict(
        user_model.objects.filter(pk__in=ids).values_list("pk", user_model.USERNAME_FIELD)
    )
    if all(
        current.get(a.annotator_id, "") == a.username
        for c in analysis.criteria
        for a in c.annotators
    ):
        return analysis
    return replace(
        analysis,
        criteria=[
            replace(
                c,
                annotators=[
                    replace(a, username=current.get(a.annotator_id, "")) for a in c.annotators
                ],
            )
            for c in analysis.criteria
        ],
    )


def analysis_cache_key(*, campaign: Campaign, settings: AnalysisSettings) -> str:
    """A content hash of what :func:`campaign_analysis_compute` reads: the settings, the code
    (its versions, with the digest of EvalSite's source), the protocol configs, the uploads
    (data only changes through them), the systems' names, the judgments (count, last id, last
    submit, revisions), the decisions (count, last change) and the annotators' pseudonyms.
    Usernames are left out: a found analysis has them read again
    (:func:`with_current_usernames`)."""
    state = {
        "campaign": str(campaign.pk),
        "settings": asdict(settings),
        "code": code_version(),
        "configs": list(ProtocolConfig.objects.filter(campaign=campaign).order_by("pk").values()),
        **campaign_inputs_stamp(campaign=campaign),
        "systems": list(
            System.objects.filter(campaign=campaign).order_by("pk").values_list("pk", "name")
        ),
        "pseudonyms": AnnotatorPseudonym.objects.filter(campaign=campaign).aggregate(
            n=Count("pk"), last=Max("pk")
        ),
    }
    return f"evalsite:analysis:{content_hash(state)}"


def campaign_analysis_compute(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    config: ProtocolConfig | None = None,
) -> CampaignAnalysis:
    """Analyse every criterion of every protocol config of ``campaign`` (or of ``config``).

    Per criterion: annotator QC (``settings.qc_test`` in ``settings.qc_space`` at
    ``settings.threshold``), normalisation, the include mask (QC verdict, overridden by the
    organizer's :class:`~annotation.models.AnnotatorDecision`), system scores with t and
    bootstrap intervals, pairwise significance and WMT clusters, agreement with counts; for
    ranking criteria "no worse than others", Expected Wins and TrueSkill with rank ranges.
    The result carries the settings, the seed of each criterion and the code version.
    """
    settings = settings or AnalysisSettings()
    criteria = [
        pair for pair in campaign_criteria(campaign=campaign) if config is None or pair[0] == config
    ]
    tables = [criterion_table_load(config=c, criterion=k) for c, k in criteria]
    names = _names(campaign, tables)
    return CampaignAnalysis(
        campaign_id=str(campaign.pk),
        settings=settings,
        version=code_version(),
        criteria=[criterion_analyse(table=t, settings=settings, names=names) for t in tables],
    )


@dataclass(frozen=True)
class Names:
    """Display names of the ids in a set of tables, read once."""

    usernames: dict[int, str]
    pseudonyms: dict[int, str]
    systems: dict[int, str]
    decisions: dict[int, AnnotatorDecision]


def _names(campaign: Campaign, tables: list[CriterionTable]) -> Names:
    annotators = {int(a) for t in tables for a in t.annotator_ids}
    systems = {int(s) for t in tables for s in t.system_ids if s >= 0}
    user_model = get_user_model()
    usernames = dict(
        user_model.objects.filter(pk__in=annotators).values_list("pk", user_model.USERNAME_FIELD)
    )
    # Numbered here, after their judgments were read: an annotator whose first judgment landed
    # after the caller's numbering would otherwise have none.
    numbers = annotator_pseudonyms_ensure(campaign=campaign, judged=annotators)
    pseudonyms = {annotator: pseudonym_code(numbers[annotator]) for annotator in annotators}
    return Names(
        usernames=usernames,
        pseudonyms=pseudonyms,
        systems=dict(System.objects.filter(pk__in=systems).values_list("pk", "name")),
        decisions={
            d.annotator_id: d
            for d in AnnotatorDecision.objects.filter(
                campaign=campaign, annotator_id__in=annotators
            )
        },
    )


def criterion_analyse(
    *, table: CriterionTable, settings: AnalysisSettings, names: Names
) -> CriterionAnalysis:
    """Run the core on one table and turn its arrays into result rows."""
    seed = settings.seed if settings.seed is not None else int(table.config.seed)
    if table.is_ranking:
        return _ranking_analysis(table, settings, names, seed)
    return _score_analysis(table, settings, names, seed)


def qc_statuses(p_value: FloatArray, passed: npt.NDArray[np.bool_]) -> list[str]:
    """Per annotator: "passed", "failed" (a p-value above the threshold) or "untested"
    (no p-value: fewer than two bad-reference pairs, or no non-zero difference)."""
    return [
        QC_PASSED if ok else QC_UNTESTED if not math.isfinite(p) else QC_FAILED
        for ok, p in zip(passed.tolist(), p_value.tolist(), strict=True)
    ]


@dataclass(frozen=True)
class CriterionQC:
    """Who passed QC on one criterion and whose judgments enter the aggregates.

    Attributes:
        statuses: "passed", "failed" or "untested" per annotator code (the bad-reference test
            on scores, or on ranks for ranking criteria).
        included: per annotator code: the QC verdict (failed annotators out unless
            ``include_failed``, untested ones in unless ``exclude_untested``), overridden by
            the organizer's decision where there is one.
        qc: the core's QC result (:class:`AnnotatorQC`, or :class:`RankingQC` for rankings).
        normalised: mean-shifted and z-scores of every row (None for rankings).
    """

    statuses: list[str]
    included: npt.NDArray[np.bool_]
    qc: AnnotatorQC | RankingQC
    normalised: Normalised | None


def criterion_qc(
    *,
    table: CriterionTable,
    settings: AnalysisSettings,
    decisions: dict[int, AnnotatorDecision],
) -> CriterionQC:
    """QC verdicts, the include mask and the normalised scores of one criterion."""
    judgments = table.judgments
    qc: AnnotatorQC | RankingQC
    normalised: Normalised | None
    if table.is_ranking:
        qc = ranking_qc(
            judgments,
            comparisons=pairwise_comparisons(judgments),
            test=settings.qc_test,
            space=settings.ranking_qc_space,
            threshold=settings.threshold,
            idle_cap=settings.idle_cap,
        )
        normalised = None
    else:
        qc = annotator_qc(
            judgments,
            tolerance=repeat_tolerance(table.definition),
            test=settings.qc_test,
            space=settings.qc_space,
            threshold=settings.threshold,
            basis=settings.basis,
            idle_cap=settings.idle_cap,
        )
        normalised = normalise(judgments, basis=settings.basis)
    statuses = qc_statuses(qc.bad_reference.p_value, qc.passed)
    included = np.array(
        [
            status == QC_PASSED
            or (status == QC_FAILED and settings.include_failed)
            or (status == QC_UNTESTED and not settings.exclude_untested)
            for status in statuses
        ],
        dtype=bool,
    )
    for code, annotator_id in enumerate(table.annotator_ids.tolist()):
        decision = decisions.get(annotator_id)
        if decision is not None:
            included[code] = decision.included
    return CriterionQC(statuses=statuses, included=included, qc=qc, normalised=normalised)


def _score_analysis(
    table: CriterionTable, settings: AnalysisSettings, names: Names, seed: int
) -> CriterionAnalysis:
    judgments = table.judgments
    definition = table.definition
    tolerance = repeat_tolerance(definition)
    common = {
        "tolerance": tolerance,
        "qc_test": settings.qc_test,
        "qc_space": settings.qc_space,
        "threshold": settings.threshold,
        "basis": settings.basis,
        "idle_cap": settings.idle_cap,
    }
    # The include mask (QC verdicts and decisions) goes to the whole analysis, which runs the
    # same QC again inside (vectorised, cheap) so that its result is self-contained.
    verdicts = criterion_qc(table=table, settings=settings, decisions=names.decisions)
    statuses = verdicts.statuses
    result = analyse_scores(
        judgments,
        **common,
        include=verdicts.included,
        space=settings.space,
        test=settings.test,
        alpha=settings.alpha,
        confidence=settings.confidence,
        n_bootstrap=settings.n_bootstrap,
        rng=seed,
    )
    return CriterionAnalysis(
        config_id=table.config.pk,
        config_name=table.config.name,
        protocol=table.config.protocol,
        criterion=table.criterion,
        criterion_label=str(definition.label),
        kind="scores",
        scale=(definition.minimum, definition.maximum),
        n_rows=len(judgments),
        n_annotators=judgments.n_annotators,
        n_segments=judgments.n_segments,
        annotators=_score_annotators(table, result, statuses, names),
        systems=_score_systems(table, result, names),
        agreement=[
            _alpha("inter-annotator α (interval)", result.inter_alpha_interval),
            _alpha("inter-annotator α (ordinal)", result.inter_alpha_ordinal),
            _alpha("intra-annotator α (interval, repeats)", result.intra_alpha_interval),
        ],
        significance=_significance(table, result.significance, result.clusters, names, settings),
        method={
            "analysis": "evalcore.human.analyse_scores",
            **common,
            "include_failed": settings.include_failed,
            "exclude_untested": settings.exclude_untested,
            "space": settings.space,
            "significance_test": settings.test,
            "alpha": settings.alpha,
            "confidence": settings.confidence,
            "n_bootstrap": settings.n_bootstrap,
            "seed": result.seed,
            "version": code_version(),
        },
    )


def _score_annotators(
    table: CriterionTable, result: ScoreAnalysis, statuses: list[str], names: Names
) -> list[AnnotatorResult]:
    qc = result.qc
    bad = qc.bad_reference
    normalised = result.normalised
    rows = np.bincount(table.judgments.annotator, minlength=table.judgments.n_annotators)
    annotators = []
    for code, annotator_id in enumerate(table.annotator_ids.tolist()):
        decision = names.decisions.get(annotator_id)
        annotators.append(
            AnnotatorResult(
                annotator_id=annotator_id,
                username=names.usernames.get(annotator_id, ""),
                pseudonym=names.pseudonyms.get(annotator_id, ""),
                n_rows=int(rows[code]),
                qc_status=statuses[code],
                qc_n=int(bad.n[code]),
                qc_statistic=_number(bad.statistic[code]),
                qc_p=_number(bad.p_value[code]),
                qc_mean_difference=_number(bad.mean_difference[code]),
                decision=None if decision is None else decision.included,
                decision_reason="" if decision is None else decision.reason,
                included=bool(result.included[code]),
                repeats_n=int(qc.repeats.n[code]),
                repeats_share_within=_number(qc.repeats.share_within[code]),
                repeats_pearson=_number(qc.repeats.pearson[code]),
                references_n=int(qc.references.n[code]),
                references_mean=_number(qc.references.mean[code]),
                time_seconds=float(qc.time.seconds[code]),
                n_screens=int(qc.time.n_screens[code]),
                n_unknown_time=int(qc.time.n_unknown[code]),
                n_capped=int(qc.time.n_capped[code]),
                mean=_number(normalised.annotator_mean[code]),
                sd=_number(normalised.annotator_sd[code]),
                degenerate=bool(normalised.degenerate[code]),
            )
        )
    return annotators


def _system_name(table: CriterionTable, code: int, names: Names) -> str:
    system_id = int(table.system_ids[code])
    return "(reference)" if system_id < 0 else names.systems.get(system_id, str(system_id))


def _system_codes(table: CriterionTable) -> list[int]:
    """System codes that stand for systems (the reference code, if any, is last and left out:
    references shown as outputs are QC items and never enter system scores)."""
    n = table.system_ids.shape[0] - (1 if table.has_reference else 0)
    return list(range(n))


def _score_systems(
    table: CriterionTable, result: ScoreAnalysis, names: Names
) -> list[SystemResult]:
    systems = result.systems
    clusters = result.clusters
    position = _positions(clusters.order, table.system_ids.shape[0])
    rows = [
        SystemResult(
            system_id=int(table.system_ids[code]),
            name=_system_name(table, code, names),
            position=int(position[code]),
            cluster=int(clusters.cluster[code]),
            rank_low=int(clusters.rank_low[code]),
            rank_high=int(clusters.rank_high[code]),
            wins=int(clusters.wins[code]),
            losses=int(clusters.losses[code]),
            n_judgments=int(systems.n_judgments[code]),
            n_segments=int(systems.n_segments[code]),
            score=_number(systems.score[code]),
            mean_raw=_number(systems.mean_raw[code]),
            mean_shifted=_number(systems.mean_shifted[code]),
            mean_z=_number(systems.mean_z[code]),
            t_low=_number(systems.t_low[code]),
            t_high=_number(systems.t_high[code]),
            boot_low=_number(systems.boot_low[code]),
            boot_high=_number(systems.boot_high[code]),
        )
        for code in _system_codes(table)
    ]
    return _ranked(rows)


def _positions(order: IntArray, n_systems: int) -> IntArray:
    position = np.zeros(n_systems, dtype=np.int64)
    position[order] = np.arange(1, order.shape[0] + 1)
    return position


def _ranked(rows: list[SystemResult]) -> list[SystemResult]:
    """Ranked systems first, in ranking order, then unscored ones by name."""
    return sorted(rows, key=lambda s: (s.position == 0, s.position, s.name))


def _alpha(name: str, alpha: Any) -> AgreementResult:
    return AgreementResult(
        name=name,
        coefficient="alpha",
        value=_number(alpha.alpha),
        counts={"units": int(alpha.n_units), "values": int(alpha.n_values)},
        details={
            "observed_disagreement": _number(alpha.observed_disagreement),
            "expected_disagreement": _number(alpha.expected_disagreement),
        },
    )


def _kappa(name: str, kappa: Any) -> AgreementResult:
    return AgreementResult(
        name=name,
        coefficient="kappa",
        value=_number(kappa.kappa),
        counts={
            "pairs": int(kappa.n_pairs),
            "agreements": int(kappa.n_agreements),
            "comparisons": int(kappa.n_comparisons),
        },
        details={
            "p_agreement": _number(kappa.p_agreement),
            "p_chance": _number(kappa.p_chance),
            "p_better": _number(kappa.p_better),
            "p_worse": _number(kappa.p_worse),
            "p_tie": _number(kappa.p_tie),
        },
    )


def _significance(
    table: CriterionTable,
    significance: Any,
    clusters: Any,
    names: Names,
    settings: AnalysisSettings,
) -> SignificanceMatrix:
    order = [int(c) for c in clusters.order.tolist() if c in _system_codes(table)]
    return SignificanceMatrix(
        test=str(significance.test),
        alpha=settings.alpha,
        systems=[_system_name(table, c, names) for c in order],
        p=[[_number(significance.p_value[a, b]) for b in order] for a in order],
        n=[[int(significance.n[a, b]) for b in order] for a in order],
    )


def _ranking_analysis(
    table: CriterionTable, settings: AnalysisSettings, names: Names, seed: int
) -> CriterionAnalysis:
    judgments = table.judgments
    definition = table.definition
    # As for scores: the include mask (QC verdicts and decisions) goes to the whole analysis,
    # which runs the same QC again inside so that its result is self-contained.
    verdicts = criterion_qc(table=table, settings=settings, decisions=names.decisions)
    include = verdicts.included
    result = analyse_rankings(
        judgments,
        qc_test=settings.qc_test,
        qc_space=settings.ranking_qc_space,
        threshold=settings.threshold,
        idle_cap=settings.idle_cap,
        include=include,
        alpha=settings.alpha,
        n_bootstrap=settings.ranking_bootstrap,
        confidence=settings.confidence,
        rng=seed,
    )
    return CriterionAnalysis(
        config_id=table.config.pk,
        config_name=table.config.name,
        protocol=table.config.protocol,
        criterion=table.criterion,
        criterion_label=str(definition.label),
        kind="ranking",
        scale=(definition.minimum, int(judgments.score.max()) if len(judgments) else 1),
        n_rows=len(judgments),
        n_annotators=judgments.n_annotators,
        n_segments=judgments.n_segments,
        annotators=_ranking_annotators(table, result, verdicts.statuses, names),
        systems=_ranking_systems(table, result, include, names),
        agreement=[
            _kappa("inter-annotator κ", result.inter_kappa),
            _kappa("intra-annotator κ (repeats)", result.intra_kappa),
        ],
        significance=_significance(table, result.significance, result.clusters, names, settings),
        method={
            "analysis": "evalcore.human.analyse_rankings",
            "qc_test": settings.qc_test,
            "qc_space": settings.ranking_qc_space,
            "threshold": settings.threshold,
            "idle_cap": settings.idle_cap,
            "include_failed": settings.include_failed,
            "exclude_untested": settings.exclude_untested,
            "repeat_agreement": "identical order share; mean Kendall tau-b",
            "order": "expected_wins",
            "significance_test": "sign",
            "alpha": settings.alpha,
            "chance": "tie_rate",
            "confidence": settings.confidence,
            "trueskill_bootstrap": settings.ranking_bootstrap,
            "trueskill_environment": list(result.trueskill.environment),
            "seed": result.seed,
            "version": code_version(),
        },
    )


def _ranking_annotators(
    table: CriterionTable, result: RankingAnalysis, statuses: list[str], names: Names
) -> list[AnnotatorResult]:
    judgments = table.judgments
    qc = result.qc
    bad = qc.bad_reference
    repeats = qc.repeats
    time = qc.time
    rows = np.bincount(judgments.annotator, minlength=judgments.n_annotators)
    annotators = []
    for code, annotator_id in enumerate(table.annotator_ids.tolist()):
        decision = names.decisions.get(annotator_id)
        annotators.append(
            AnnotatorResult(
                annotator_id=annotator_id,
                username=names.usernames.get(annotator_id, ""),
                pseudonym=names.pseudonyms.get(annotator_id, ""),
                n_rows=int(rows[code]),
                qc_status=statuses[code],
                qc_n=int(bad.n[code]),
                qc_statistic=_number(bad.statistic[code]),
                qc_p=_number(bad.p_value[code]),
                qc_mean_difference=_number(bad.mean_difference[code]),
                decision=None if decision is None else decision.included,
                decision_reason="" if decision is None else decision.reason,
                included=bool(result.included[code]),
                # Rankings: repeated screens, and the share ranked in exactly the same order.
                repeats_n=int(repeats.n_screens[code]),
                repeats_share_within=_number(repeats.share_identical[code]),
                repeats_pearson=None,
                references_n=int(qc.references.n[code]),
                references_mean=_number(qc.references.mean[code]),
                time_seconds=float(time.seconds[code]),
                n_screens=int(time.n_screens[code]),
                n_unknown_time=int(time.n_unknown[code]),
                n_capped=int(time.n_capped[code]),
                mean=None,
                sd=None,
                degenerate=False,
                qc_uninformative=int(bad.n_uninformative[code]),
                repeats_kendall_tau=_number(repeats.kendall_tau[code]),
            )
        )
    return annotators


def _ranking_systems(
    table: CriterionTable, result: RankingAnalysis, include: Any, names: Names
) -> list[SystemResult]:
    clusters = result.clusters
    wins = result.expected_wins
    skill = result.trueskill
    judgments = table.judgments
    n_systems = table.system_ids.shape[0]
    position = _positions(clusters.order, n_systems)
    # Judgments and segments that entered the rankings: REAL rows of included annotators.
    used = (judgments.item_type == ItemType.REAL) & np.asarray(include, dtype=bool)[
        judgments.annotator
    ]
    n_judgments = np.bincount(judgments.system[used], minlength=n_systems)
    pairs = np.unique(
        judgments.system[used] * max(judgments.n_segments, 1) + judgments.segment[used]
    )
    n_segments = np.bincount(pairs // max(judgments.n_segments, 1), minlength=n_systems)
    rows = [
        SystemResult(
            system_id=int(table.system_ids[code]),
            name=_system_name(table, code, names),
            position=int(position[code]),
            cluster=int(clusters.cluster[code]),
            rank_low=int(clusters.rank_low[code]),
            rank_high=int(clusters.rank_high[code]),
            wins=int(clusters.wins[code]),
            losses=int(clusters.losses[code]),
            n_judgments=int(n_judgments[code]),
            n_segments=int(n_segments[code]),
            score=_number(wins.score[code]),
            mean_raw=None,
            mean_shifted=None,
            mean_z=None,
            t_low=None,
            t_high=None,
            boot_low=None,
            boot_high=None,
            expected_wins=_number(wins.score[code]),
            n_opponents=int(wins.n_opponents[code]),
            no_worse_share=_number(result.no_worse.share[code]),
            no_worse_n=int(result.no_worse.n[code]),
            trueskill_mu=_number(skill.mu[code]),
            trueskill_sigma=_number(skill.sigma[code]),
            trueskill_rank=int(skill.rank[code]),
            # Without bootstrap runs there is no range (the point rank is not one).
            trueskill_rank_low=int(skill.rank_low[code]) if skill.n_bootstrap else None,
            trueskill_rank_high=int(skill.rank_high[code]) if skill.n_bootstrap else None,
        )
        for code in _system_codes(table)
    ]
    return _ranked(rows)
