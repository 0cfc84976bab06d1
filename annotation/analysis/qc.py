"""Annotator quality control of one criterion: the numerical core's test on the bad-reference
pairs, with the organizer's include/exclude decisions applied."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from annotation.analysis.results import (
    QC_FAILED,
    QC_PASSED,
    QC_UNTESTED,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    FloatArray,
    repeat_tolerance,
)
from annotation.models import (
    AnnotatorDecision,
)
from evalcore.human import (
    AnnotatorQC,
    Normalised,
    RankingQC,
    annotator_qc,
    normalise,
    pairwise_comparisons,
    ranking_qc,
)


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
    if table.is_pairwise:
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
