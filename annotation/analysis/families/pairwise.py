"""The pairwise family: the outputs of one screen compared by their ranks, analysed by the
core's ``analyse_rankings`` (:mod:`annotation.analysis.ranking`) and read through a system's
Expected Wins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from annotation.analysis.families.base import (
    AnalysisFamily,
    CriterionQC,
    FloatArray,
    HumanSide,
    latex_fixed,
    latex_rank_range,
)
from annotation.analysis.ranking import ranking_analysis
from evalcore.human import ItemType, Normalised, pairwise_comparisons, ranking_qc
from evalcore.human.rankings import expected_wins_from_counts
from evalcore.latex import latex_escape

if TYPE_CHECKING:
    from annotation.analysis.results import (
        AnnotatorResult,
        CriterionAnalysis,
        Method,
        SystemResult,
    )
    from annotation.analysis.settings import AnalysisSettings
    from annotation.analysis.tables import CriterionTable, Names


class PairwiseFamily(AnalysisFamily):
    key = "pairwise"
    result_kind = "ranking"
    # A screen of one text compares nothing.
    min_outputs = 2
    analysis_template = "annotation/families/pairwise_analysis.html"
    dashboard_template = "metrics/families/pairwise_dashboard.html"

    def annotator_qc(
        self, table: CriterionTable, settings: AnalysisSettings
    ) -> tuple[Any, Normalised | None]:
        judgments = table.judgments
        qc = ranking_qc(
            judgments,
            comparisons=pairwise_comparisons(judgments),
            test=settings.qc_test,
            space=settings.ranking_qc_space,
            threshold=settings.threshold,
            idle_cap=settings.idle_cap,
        )
        return qc, None

    def analyse(
        self,
        table: CriterionTable,
        settings: AnalysisSettings,
        names: Names,
        verdicts: CriterionQC,
    ) -> CriterionAnalysis:
        return ranking_analysis(table, settings, names, verdicts)

    # The QC figures model scores; rankings compare ranks on a screen.
    qc_power_applies = False

    def qc_space(self, settings: AnalysisSettings) -> str:
        return str(settings.ranking_qc_space)

    def human_side(
        self,
        table: CriterionTable,
        criterion: CriterionAnalysis,
        include: np.ndarray,
        segment_position: np.ndarray,
        chosen_codes: np.ndarray,
        n_segments: int,
    ) -> HumanSide:
        """Per segment, the win counts of the REAL comparisons of included annotators, with
        Expected Wins of the chosen systems as the statistic."""
        j = table.judgments
        comparisons = pairwise_comparisons(j)
        c = comparisons.select(
            (comparisons.item_type == ItemType.REAL)
            & include[comparisons.annotator]
            & (comparisons.outcome != 0)
            & (segment_position[comparisons.segment] >= 0)
        )
        y = j.n_systems
        winner = np.where(c.outcome > 0, c.system_a, c.system_b)
        loser = np.where(c.outcome > 0, c.system_b, c.system_a)
        cell = segment_position[c.segment] * (y * y) + winner * y + loser
        wins = np.bincount(cell, minlength=n_segments * y * y).astype(np.float64)

        def expected_wins_of_chosen(summed: FloatArray) -> FloatArray:
            score, _ = expected_wins_from_counts(summed.reshape(*summed.shape[:-1], y, y))
            picked: FloatArray = np.where(
                chosen_codes >= 0, score[..., np.maximum(chosen_codes, 0)], np.nan
            )
            return picked

        return HumanSide(
            human=wins.reshape(n_segments, y * y),
            human_fn=expected_wins_of_chosen,
            rows=(j.item_type == ItemType.REAL) & include[j.annotator],
            z=None,
        )

    def point(self, system: SystemResult) -> float | None:
        return system.expected_wins

    def human_score(self, criterion: CriterionAnalysis) -> str:
        return "Expected Wins"

    def score_space(self, criterion: CriterionAnalysis) -> str:
        return "expected_wins"

    def bar_axis(self, systems: list[SystemResult]) -> tuple[float, float] | None:
        return (0.0, 1.0)  # Expected Wins is a share

    def annotator_report_cells(
        self, annotator: AnnotatorResult, method: Method
    ) -> tuple[int | None, float | None]:
        return annotator.qc_uninformative, None

    def latex_header(self, criterion: CriterionAnalysis) -> tuple[str, str]:
        return (
            r"\# & Range & System & EW & No worse & TrueSkill $\mu$ & TS range & $n$ \\",
            "rrlrrrrr",
        )

    def latex_cells(self, system: SystemResult) -> list[str]:
        """Expected Wins, no-worse share and TrueSkill."""
        if system.trueskill_rank_low is None:
            skill_range = "---"  # no bootstrap runs, no range
        elif system.trueskill_rank_low != system.trueskill_rank_high:
            skill_range = f"{system.trueskill_rank_low}--{system.trueskill_rank_high}"
        else:
            skill_range = str(system.trueskill_rank_low)
        return [
            str(system.position),
            latex_rank_range(system),
            latex_escape(system.name),
            latex_fixed(system.expected_wins),
            latex_fixed(system.no_worse_share),
            latex_fixed(system.trueskill_mu, 2),
            skill_range,
            str(system.n_judgments),
        ]

    def latex_method(self, criterion: CriterionAnalysis) -> str:
        return "Expected Wins; clusters from the one-sided sign test"
