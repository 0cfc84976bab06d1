"""The analysis of document-level scores (``DocumentJudgment``), kept apart from the segment
level: per protocol config that has them, the core's :func:`evalcore.human.document_scores`
on a table whose units are the windows shown (a window in every system's translation is one
unit), with the annotators its segment-level analysis includes. Read by the analysis page, its
API and the judgment report; computed when asked (a campaign without document scores costs one
query)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from annotation.analysis.qc import QC_UNTESTED, criterion_qc
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import campaign_criteria, criterion_table_load
from annotation.models import (
    AnnotatorDecision,
    Campaign,
    DocumentJudgment,
    ItemKind,
    ProtocolConfig,
    System,
)
from evalcore.human import ItemType, Judgments, document_scores
from evalcore.numbers import finite_or_none

# A screen's QC kind as the core's item type.
ITEM_TYPES = {
    ItemKind.REAL: ItemType.REAL,
    ItemKind.REPEAT: ItemType.REPEAT,
    ItemKind.REFERENCE: ItemType.REFERENCE,
    ItemKind.BAD_REFERENCE: ItemType.BAD_REF,
}


@dataclass(frozen=True)
class DocumentSystemScore:
    """One system's document-level score: the mean over its windows of the window means, raw
    and z, with bootstrap intervals; ``position`` 1 is the best by mean z (0: no score)."""

    system_id: int
    name: str
    position: int
    n_scores: int
    n_windows: int
    mean_raw: float | None
    raw_low: float | None
    raw_high: float | None
    mean_z: float | None
    z_low: float | None
    z_high: float | None


@dataclass(frozen=True)
class DocumentScoreSummary:
    """The document-level scores of one protocol config: counts, the systems in ranking order,
    and how they were computed (annotators included, basis, confidence, resamples, seed)."""

    config_id: int
    config_name: str
    protocol: str
    n_scores: int
    n_annotators: int
    n_included: int
    n_windows: int
    systems: list[DocumentSystemScore]
    basis: str
    confidence: float
    resamples: int
    seed: int

    @property
    def confidence_percent(self) -> str:
        return f"{round(self.confidence * 100, 6):g}"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _ConfigScores:
    """One config's document scores as the core's table, with the database ids behind it and
    the annotators' QC status on the config's segment-level criteria."""

    config: ProtocolConfig
    ids: list[int]
    annotator_ids: list[int]
    system_ids: list[int]
    judgments: Judgments
    include: np.ndarray
    statuses: list[str]


def campaign_document_scores(
    *, campaign: Campaign, settings: AnalysisSettings
) -> list[DocumentScoreSummary]:
    """One summary per protocol config with document-level scores, in config order."""
    summaries = []
    for scores in _campaign_tables(campaign, settings):
        result = document_scores(
            scores.judgments,
            include=scores.include,
            basis=settings.basis,
            confidence=settings.confidence,
            n_bootstrap=settings.resamples,
            rng=settings.seed,
        )
        names = dict(System.objects.filter(pk__in=scores.system_ids).values_list("pk", "name"))
        # References shown as the translation (id -1) are QC, never a system score.
        order = sorted(
            (c for c, s in enumerate(scores.system_ids) if s >= 0),
            key=lambda c: (not np.isfinite(result.z.score[c]), -np.nan_to_num(result.z.score[c])),
        )
        systems = []
        for place, code in enumerate(order, start=1):
            system_id = scores.system_ids[code]
            scored = bool(np.isfinite(result.raw.score[code]))
            systems.append(
                DocumentSystemScore(
                    system_id=system_id,
                    name=names.get(system_id, str(system_id)),
                    position=place if scored else 0,
                    n_scores=int(result.raw.n_judgments[code]),
                    n_windows=int(result.raw.n_segments[code]),
                    mean_raw=finite_or_none(result.raw.score[code]),
                    raw_low=finite_or_none(result.raw.boot_low[code]),
                    raw_high=finite_or_none(result.raw.boot_high[code]),
                    mean_z=finite_or_none(result.z.score[code]),
                    z_low=finite_or_none(result.z.boot_low[code]),
                    z_high=finite_or_none(result.z.boot_high[code]),
                )
            )
        summaries.append(
            DocumentScoreSummary(
                config_id=scores.config.pk,
                config_name=scores.config.name,
                protocol=scores.config.protocol,
                n_scores=len(scores.ids),
                n_annotators=len(scores.annotator_ids),
                n_included=int(scores.include.sum()),
                n_windows=scores.judgments.n_segments,
                systems=systems,
                basis=settings.basis,
                confidence=settings.confidence,
                resamples=settings.resamples,
                seed=result.seed,
            )
        )
    return summaries


@dataclass(frozen=True)
class DocumentRowStatistics:
    """Per document judgment id: its shifted and z score (NaN when undefined), the annotator's
    QC status on the config's segment-level criteria and whether their scores are included."""

    shifted: dict[int, float]
    z: dict[int, float]
    status: dict[int, str]
    included: dict[int, bool]


def document_row_statistics(
    *, campaign: Campaign, settings: AnalysisSettings
) -> DocumentRowStatistics:
    """The normalised document scores of every document judgment of the campaign (for the
    judgment report's document-level rows)."""
    shifted: dict[int, float] = {}
    z: dict[int, float] = {}
    status: dict[int, str] = {}
    included: dict[int, bool] = {}
    for scores in _campaign_tables(campaign, settings):
        result = document_scores(
            scores.judgments, include=scores.include, basis=settings.basis, n_bootstrap=0, rng=0
        )
        codes = scores.judgments.annotator.tolist()
        for row, pk in enumerate(scores.ids):
            shifted[pk] = float(result.normalised.shifted[row])
            z[pk] = float(result.normalised.z[row])
            status[pk] = scores.statuses[codes[row]]
            included[pk] = bool(scores.include[codes[row]])
    return DocumentRowStatistics(shifted, z, status, included)


def _campaign_tables(campaign: Campaign, settings: AnalysisSettings) -> list[_ConfigScores]:
    rows = list(
        DocumentJudgment.objects.filter(screen__task__config__campaign=campaign)
        .order_by("screen__task__config_id", "pk")
        .values_list(
            "pk",
            "screen__task__config_id",
            "annotator_id",
            "screen__segment_id",
            "system_id",
            "kind",
            "score",
        )
    )
    if not rows:
        return []
    decisions = {d.annotator_id: d for d in AnnotatorDecision.objects.filter(campaign=campaign)}
    configs = ProtocolConfig.objects.filter(pk__in={r[1] for r in rows}).order_by("created", "pk")
    return [
        _config_table(config, [r for r in rows if r[1] == config.pk], settings, decisions)
        for config in configs
    ]


def _config_table(
    config: ProtocolConfig,
    rows: list[tuple[Any, ...]],
    settings: AnalysisSettings,
    decisions: dict[int, AnnotatorDecision],
) -> _ConfigScores:
    annotator_ids, annotator = np.unique([r[2] for r in rows], return_inverse=True)
    _windows, window = np.unique([r[3] for r in rows], return_inverse=True)
    # References shown as the translation get the code after the systems' (id -1).
    system_raw = [r[4] if r[4] is not None else -1 for r in rows]
    system_ids = sorted({s for s in system_raw if s >= 0}) + ([-1] if -1 in system_raw else [])
    code_of = {s: i for i, s in enumerate(system_ids)}
    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=window,
        system=[code_of[s] for s in system_raw],
        score=[float(r[6]) for r in rows],
        item_type=[int(ITEM_TYPES[ItemKind(r[5])]) for r in rows],
        n_systems=len(system_ids),
    )
    include, statuses = _segment_level_inclusion(
        config, annotator_ids.tolist(), settings, decisions
    )
    return _ConfigScores(
        config=config,
        ids=[r[0] for r in rows],
        annotator_ids=annotator_ids.tolist(),
        system_ids=system_ids,
        judgments=judgments,
        include=include,
        statuses=statuses,
    )


def _segment_level_inclusion(
    config: ProtocolConfig,
    annotator_ids: list[int],
    settings: AnalysisSettings,
    decisions: dict[int, AnnotatorDecision],
) -> tuple[np.ndarray, list[str]]:
    """Per annotator (in ``annotator_ids`` order): whether the config's segment-level analysis
    includes them (on any of its criteria: their QC verdict or the organizer's decision), and
    their QC status (on the first criterion that has their judgments). An annotator without
    segment judgments is included unless a decision excludes them, and untested."""
    included: dict[int, bool] = {}
    statuses: dict[int, str] = {}
    for other, key in campaign_criteria(campaign=config.campaign):
        if other.pk != config.pk:
            continue
        table = criterion_table_load(config=config, criterion=key)
        verdict = criterion_qc(table=table, settings=settings, decisions=decisions)
        for code, annotator_id in enumerate(table.annotator_ids.tolist()):
            included[annotator_id] = included.get(annotator_id, False) or bool(
                verdict.included[code]
            )
            statuses.setdefault(annotator_id, verdict.statuses[code])
    mask = []
    for annotator_id in annotator_ids:
        decision = decisions.get(annotator_id)
        fallback = True if decision is None else decision.included
        mask.append(included.get(annotator_id, fallback))
    return (
        np.array(mask, dtype=bool),
        [statuses.get(a, QC_UNTESTED) for a in annotator_ids],
    )
