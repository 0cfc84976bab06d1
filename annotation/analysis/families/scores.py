"""The scores family: one score per shown output and criterion (adequacy, fluency, DA, MQM's
weighted errors), analysed by the core's ``analyse_scores`` (:mod:`annotation.analysis.scores`)
and read through a system's ``score`` in the analysis' space. A criterion whose lower scores
are better is tested and ranked on its negated scores and reported on its own scale
(:mod:`annotation.analysis.scores` says which figure is which)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from annotation.analysis.families.base import AnalysisFamily, CriterionQC, HumanSide
from annotation.analysis.scores import oriented_judgments, score_analysis
from annotation.analysis.tables import repeat_tolerance
from evalcore.human import Normalised, annotator_qc, normalise, segment_scores
from evalcore.human.systems import scored_rows

if TYPE_CHECKING:
    from annotation.analysis.results import CriterionAnalysis
    from annotation.analysis.settings import AnalysisSettings
    from annotation.analysis.tables import CriterionTable, Names


class ScoresFamily(AnalysisFamily):
    key = "scores"
    result_kind = "scores"
    min_outputs = 1
    analysis_template = "annotation/families/scores_analysis.html"
    dashboard_template = "metrics/families/scores_dashboard.html"

    def annotator_qc(
        self, table: CriterionTable, settings: AnalysisSettings
    ) -> tuple[Any, Normalised | None]:
        """The core's QC on the oriented scores (bad references expected to score higher than
        their originals where lower is better); the normalised scores on the criterion's own
        scale, as the judgment report shows them per row."""
        judgments = table.judgments
        qc = annotator_qc(
            oriented_judgments(table),
            tolerance=repeat_tolerance(table.definition),
            test=settings.qc_test,
            space=settings.qc_space,
            threshold=settings.threshold,
            basis=settings.basis,
            idle_cap=settings.idle_cap,
        )
        return qc, normalise(judgments, basis=settings.basis)

    def analyse(
        self,
        table: CriterionTable,
        settings: AnalysisSettings,
        names: Names,
        verdicts: CriterionQC,
    ) -> CriterionAnalysis:
        return score_analysis(table, settings, names, verdicts)

    def human_side(
        self,
        table: CriterionTable,
        criterion: CriterionAnalysis,
        include: np.ndarray,
        segment_position: np.ndarray,
        chosen_codes: np.ndarray,
        n_segments: int,
    ) -> HumanSide:
        """Per chosen system and segment, ``[segment score, 1]`` in the analysis' space from
        the REAL and REPEAT judgments of included annotators, normalised on its basis. On the
        criterion's own scale, as :meth:`point` is: a lower-is-better criterion (HTER)
        correlates negatively with a metric that agrees with it."""
        j = table.judgments
        normalised = normalise(j, basis=criterion.basis)
        rows = scored_rows(j, include=include, include_repeats=True)
        scores = segment_scores(j, normalised.values(criterion.space or "z"), rows)
        human = np.zeros((len(chosen_codes), n_segments, 2))
        known = segment_position >= 0
        mean = scores.mean[np.maximum(chosen_codes, 0)][:, known]  # (chosen, table segments)
        mean[chosen_codes < 0] = np.nan
        present = np.isfinite(mean)
        human[:, segment_position[known], 0] = np.where(present, mean, 0.0)
        human[:, segment_position[known], 1] = present
        return HumanSide(human=human, human_fn=None, rows=rows, z=normalised.z)
