"""Annotator quality control of one criterion: the numerical core's test on the bad-reference
pairs (its family's, :meth:`AnalysisFamily.annotator_qc`), with the organizer's
include/exclude decisions applied."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from annotation.analysis.families.base import CriterionQC
from annotation.analysis.families.registry import family_of_protocol
from annotation.analysis.results import (
    QC_FAILED,
    QC_PASSED,
    QC_UNTESTED,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    FloatArray,
)
from annotation.models import (
    AnnotatorDecision,
)


def qc_statuses(p_value: FloatArray, passed: npt.NDArray[np.bool_]) -> list[str]:
    """Per annotator: "passed", "failed" (a p-value above the threshold) or "untested"
    (no p-value: fewer than two bad-reference pairs, or no non-zero difference)."""
    return [
        QC_PASSED if ok else QC_UNTESTED if not math.isfinite(p) else QC_FAILED
        for ok, p in zip(passed.tolist(), p_value.tolist(), strict=True)
    ]


def criterion_qc(
    *,
    table: CriterionTable,
    settings: AnalysisSettings,
    decisions: dict[int, AnnotatorDecision],
) -> CriterionQC:
    """QC verdicts, the include mask and the normalised scores of one criterion."""
    family = family_of_protocol(table.config.protocol)
    qc, normalised = family.annotator_qc(table, settings)
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
