"""What an analysis family is: the hooks through which the rest of EvalSite analyses a
criterion and reads its result. A kind names its family by its ``analysis`` attribute; a
stored result names it by ``CriterionAnalysis.kind``. Nothing outside the family modules asks
which family it is: it asks the family (:mod:`annotation.analysis.families.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from evalcore.latex import latex_escape
from evalcore.numbers import finite_or_none
from evalsite.formatting import fixed_text

if TYPE_CHECKING:
    from annotation.analysis.results import (
        AnnotatorResult,
        CriterionAnalysis,
        Method,
        SystemResult,
    )
    from annotation.analysis.settings import AnalysisSettings
    from annotation.analysis.tables import CriterionTable, Names
    from evalcore.human import Normalised


FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class HumanSide:
    """What a criterion gives the metric correlations (``metrics/correlations.py``):
    ``human`` and ``human_fn`` are the arguments of
    :func:`evalcore.stats.meta.system_correlation_bootstrap` for the chosen systems, ``rows``
    the judgment rows of the segment level, ``z`` their z-scores (None when the segment level
    compares the ranks of one screen instead)."""

    human: FloatArray
    human_fn: Callable[[FloatArray], FloatArray] | None
    rows: npt.NDArray[np.bool_]
    z: FloatArray | None


@dataclass(frozen=True)
class CriterionQC:
    """Who passed QC on one criterion and whose judgments enter the aggregates.

    Attributes:
        statuses: "passed", "failed" or "untested" per annotator code (the bad-reference test
            on scores, or on ranks for ranking criteria).
        included: per annotator code: the QC verdict (failed annotators out unless
            ``include_failed``, untested ones in unless ``exclude_untested``), overridden by
            the organizer's decision where there is one.
        qc: the family's QC result (:meth:`AnalysisFamily.annotator_qc`).
        normalised: mean-shifted and z-scores of every row (None for rankings).
    """

    statuses: list[str]
    included: npt.NDArray[np.bool_]
    # The family's QC result (the core's AnnotatorQC for scores, RankingQC for rankings).
    qc: Any
    normalised: Normalised | None


class AnalysisFamily:
    """One family. A subclass sets the names and fills the hooks; the defaults read a system's
    ``score`` as its point value, as the scores family does."""

    # The kind's ``analysis`` attribute that chooses this family.
    key: str = ""
    # ``CriterionAnalysis.kind`` of the results this family computes (stored in documents).
    result_kind: str = ""
    # The fewest outputs a screen of such a kind compares (a kind declares its own
    # ``min_outputs``, at least this; tests/annotation/analysis/test_families.py checks it).
    min_outputs: int = 1
    # The template parts of this family's sections, each included with ``part`` set to the
    # piece it renders ("method", "systems_head", "system_cells", "qc_delta_head",
    # "qc_repeats_head", "qc_reference_head", "qc_cells"); a part it has not renders nothing.
    # A part is a template name or a compiled template, as a kind's screen parts are.
    analysis_template: Any = ""
    dashboard_template: Any = ""
    # Whether the setup page's QC figures (annotation/analysis/qc_power.py), which model
    # workers' scores, describe this family's bad-reference test.
    qc_power_applies: bool = True

    # The analysis.
    def annotator_qc(
        self, table: CriterionTable, settings: AnalysisSettings
    ) -> tuple[Any, Normalised | None]:
        """The core's QC of one criterion's annotators (with ``bad_reference.p_value`` and
        ``passed`` per annotator code) and the normalised scores (None if there are none)."""
        raise NotImplementedError

    def analyse(
        self,
        table: CriterionTable,
        settings: AnalysisSettings,
        names: Names,
        verdicts: CriterionQC,
    ) -> CriterionAnalysis:
        """The analysis of one criterion, with the QC verdicts and decisions of ``verdicts``."""
        raise NotImplementedError

    def qc_space(self, settings: AnalysisSettings) -> str:
        """What the QC test compares for this family under ``settings`` (a crowd worker's)."""
        return str(settings.qc_space)

    def human_side(
        self,
        table: CriterionTable,
        criterion: CriterionAnalysis,
        include: np.ndarray,
        segment_position: np.ndarray,
        chosen_codes: np.ndarray,
        n_segments: int,
    ) -> HumanSide:
        """The human side of the correlations with metrics, defined as :meth:`point` is:
        ``include`` per annotator code, ``segment_position`` per segment code (−1 outside the
        campaign's segments), ``chosen_codes`` the system codes of the chosen systems (−1 for
        one without judgments)."""
        raise NotImplementedError

    # Reading a result.
    def point(self, system: SystemResult) -> float | None:
        """A system's point value, as stored: what the rankings show and correlations use."""
        return system.score

    def human_score(self, criterion: CriterionAnalysis) -> str:
        """The name of :meth:`point` as correlations store it ("mean z")."""
        return f"mean {criterion.space or 'z'}"

    def score_space(self, criterion: CriterionAnalysis) -> str:
        """The system report's ``space`` column."""
        return str(criterion.method.space)

    def bar_axis(self, systems: list[SystemResult]) -> tuple[float, float] | None:
        """The axis of the dashboard's interval bars: the ranked systems' values, padded."""
        values = [
            v
            for s in systems
            if s.position > 0
            for v in (
                finite_or_none(s.boot_low),
                finite_or_none(s.boot_high),
                finite_or_none(s.score),
            )
            if v is not None
        ]
        if not values:
            return None
        low, high = min(values), max(values)
        pad = (high - low) * 0.05 or 0.5
        return (low - pad, high + pad)

    def annotator_report_cells(
        self, annotator: AnnotatorResult, method: Method
    ) -> tuple[int | None, float | None]:
        """The annotator report's ``qc_uninformative`` and ``tolerance`` cells."""
        return None, method.tolerance

    # The system report's LaTeX table.
    def latex_header(self, criterion: CriterionAnalysis) -> tuple[str, str]:
        """The header row and column spec."""
        return (
            rf"\# & Range & System & Score & {criterion.confidence_percent}\% CI & Raw & $n$ "
            r"& Segs \\",
            "rrlrrrrr",
        )

    def latex_cells(self, system: SystemResult) -> list[str]:
        """A ranked system's cells: score with its t interval, raw mean and counts."""
        interval = (
            "--"
            if system.t_low is None or system.t_high is None
            else f"[{latex_fixed(system.t_low)}, {latex_fixed(system.t_high)}]"
        )
        return [
            str(system.position),
            latex_rank_range(system),
            latex_escape(system.name),
            latex_fixed(system.score),
            interval,
            latex_fixed(system.mean_raw, 1),
            str(system.n_judgments),
            str(system.n_segments),
        ]

    def latex_method(self, criterion: CriterionAnalysis) -> str:
        """What the caption says the table shows and how its clusters were found."""
        method = criterion.method
        # A lower-is-better criterion's systems are listed lowest mean first.
        direction = "lower is better; " if method.lower_is_better else ""
        return (
            f"mean {method.space} score over segments with "
            f"{criterion.confidence_percent}\\% t interval; {direction}"
            f"clusters from the one-sided {method.significance_test} test"
        )


def latex_fixed(value: float | None, digits: int = 3) -> str:
    """A cell of the LaTeX table: rounded as the pages round (``fixed_text``), "--" if missing."""
    return "--" if value is None else fixed_text(value, digits)


def latex_rank_range(system: SystemResult) -> str:
    return (
        str(system.rank_low)
        if system.rank_low == system.rank_high
        else f"{system.rank_low}--{system.rank_high}"
    )
