"""The human-judgment panel: system rows with bars, annotator QC rows and the score histograms."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from annotation.analysis.families.base import AnalysisFamily
from annotation.analysis.families.registry import family_of_result
from annotation.analysis.results import (
    AgreementResult,
    AnnotatorResult,
    CriterionAnalysis,
    HumanDocument,
    Method,
    SystemResult,
)
from annotation.protocols.registry import criterion_label_shown as _label
from evalcore.numbers import finite_or_none
from evalsite.formatting import interval_text, number_text, p_text


@dataclass(frozen=True)
class HumanSystemRow:
    """One system in a human ranking, with the bar of its interval (percent of the panel's
    axis) so the table reads like a forest plot."""

    position: int
    rank_low: int
    rank_high: int
    cluster: int
    name: str
    score: float | None
    t_low: float | None
    t_high: float | None
    boot_low: float | None
    boot_high: float | None
    mean_raw: float | None
    expected_wins: float | None
    trueskill_rank_low: int | None
    trueskill_rank_high: int | None
    n_judgments: int
    n_segments: int
    bar_left: float | None
    bar_width: float | None
    dot: float | None
    cluster_start: bool

    @property
    def score_text(self) -> str:
        return number_text(self.score, 3)

    @property
    def t_text(self) -> str:
        return interval_text(self.t_low, self.t_high, 3)

    @property
    def boot_text(self) -> str:
        return interval_text(self.boot_low, self.boot_high, 3)

    @property
    def raw_text(self) -> str:
        return number_text(self.mean_raw, 2)


@dataclass(frozen=True)
class QCRow:
    annotator_id: int
    username: str
    n_rows: int
    qc_status: str
    qc_n: int
    qc_p: float | None
    qc_mean_difference: float | None
    repeats_n: int
    repeats_share_within: float | None
    references_mean: float | None
    minutes: float
    included: bool
    by_decision: bool

    @property
    def p_text(self) -> str:
        return p_text(self.qc_p)

    @property
    def delta_text(self) -> str:
        return number_text(self.qc_mean_difference, 1)

    @property
    def within_text(self) -> str:
        return number_text(self.repeats_share_within, 2)

    @property
    def reference_text(self) -> str:
        return number_text(self.references_mean, 1)

    @property
    def minutes_text(self) -> str:
        return number_text(self.minutes, 0)

    @property
    def row_class(self) -> str:
        return "" if self.included else "excluded"

    @property
    def included_text(self) -> str:
        text = _("yes") if self.included else _("no")
        return f"{text} ({_('by decision')})" if self.by_decision else text


@dataclass(frozen=True)
class HumanCriterion:
    slug: str
    title: str
    protocol: str
    kind: str
    scale: tuple[int, int]
    space: str
    test: str
    n_rows: int
    n_annotators: int
    n_segments: int
    axis_low: float | None
    axis_high: float | None
    systems: list[HumanSystemRow]
    annotators: list[QCRow]
    agreement: list[AgreementResult]
    method: Method

    @property
    def nobody_included(self) -> bool:
        """Every annotator is left out (failed QC or excluded): no system has a score."""
        return bool(self.annotators) and not any(a.included for a in self.annotators)


def criterion_slug(config_id: Any, criterion: str) -> str:
    return f"c{config_id}-{criterion}"


def _position(value: float | None, axis: tuple[float, float] | None) -> float | None:
    if value is None or axis is None:
        return None
    return round(100 * (value - axis[0]) / (axis[1] - axis[0]), 2)


def human_panel(doc: HumanDocument | Mapping[str, Any]) -> list[HumanCriterion]:
    """Rankings with intervals and clusters, and the annotator QC table, per criterion of a
    ``human`` document (:class:`annotation.analysis.results.HumanDocument`, or its stored
    JSON)."""
    return [_human_criterion(crit) for crit in HumanDocument.read(doc).analysis.criteria]


def _human_criterion(crit: CriterionAnalysis) -> HumanCriterion:
    """One criterion of the panel: its system rows on a shared bar axis and its QC rows."""
    family = family_of_result(crit)
    axis = family.bar_axis(crit.ranked_systems)
    return HumanCriterion(
        slug=criterion_slug(crit.config_id, crit.criterion),
        title=f"{crit.config_name} · {_label(crit.protocol, crit.criterion, crit.criterion_label)}",
        protocol=crit.protocol,
        kind=crit.kind,
        scale=(int(crit.scale[0]), int(crit.scale[1])),
        space=crit.space,
        test=crit.significance_test,
        n_rows=crit.n_rows,
        n_annotators=crit.n_annotators,
        n_segments=crit.n_segments,
        axis_low=axis[0] if axis else None,
        axis_high=axis[1] if axis else None,
        systems=_system_rows(crit.systems, family, axis),
        annotators=[_qc_row(a) for a in crit.annotators],
        agreement=crit.agreement,
        method=crit.method,
    )


def _system_rows(
    systems: list[SystemResult], family: AnalysisFamily, axis: tuple[float, float] | None
) -> list[HumanSystemRow]:
    """The system rows in document order; a row starts a cluster when its cluster differs
    from the previous row's."""
    rows = []
    previous_cluster = None
    for s in systems:
        low = finite_or_none(s.boot_low)
        high = finite_or_none(s.boot_high)
        left = _position(low, axis)
        right = _position(high, axis)
        score = finite_or_none(family.point(s))
        rows.append(
            HumanSystemRow(
                position=s.position,
                rank_low=s.rank_low,
                rank_high=s.rank_high,
                cluster=s.cluster,
                name=s.name,
                score=score,
                t_low=finite_or_none(s.t_low),
                t_high=finite_or_none(s.t_high),
                boot_low=low,
                boot_high=high,
                mean_raw=finite_or_none(s.mean_raw),
                expected_wins=finite_or_none(s.expected_wins),
                trueskill_rank_low=s.trueskill_rank_low,
                trueskill_rank_high=s.trueskill_rank_high,
                n_judgments=s.n_judgments,
                n_segments=s.n_segments,
                bar_left=left,
                bar_width=None if left is None or right is None else round(right - left, 2),
                dot=_position(score, axis) if s.position > 0 else None,
                cluster_start=previous_cluster is not None and s.cluster != previous_cluster,
            )
        )
        previous_cluster = s.cluster
    return rows


def _qc_row(a: AnnotatorResult) -> QCRow:
    """One annotator's row of the QC table."""
    return QCRow(
        annotator_id=a.annotator_id,
        username=a.username,
        n_rows=a.n_rows,
        qc_status=a.qc_status,
        qc_n=a.qc_n,
        qc_p=finite_or_none(a.qc_p),
        qc_mean_difference=finite_or_none(a.qc_mean_difference),
        repeats_n=a.repeats_n,
        repeats_share_within=finite_or_none(a.repeats_share_within),
        references_mean=finite_or_none(a.references_mean),
        minutes=(a.time_seconds or 0.0) / 60,
        included=bool(a.included),
        by_decision=a.decision is not None,
    )


def histogram_plots(doc: HumanDocument | Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-annotator counts of raw scores (Koehn Fig. 8.3) per criterion, for the plots."""
    human = HumanDocument.read(doc)
    protocol = {c.config_id: c.protocol for c in human.analysis.criteria}
    return [
        {
            "id": criterion_slug(h.config_id, h.criterion),
            "title": f"{h.config_name} · "
            f"{_label(protocol.get(h.config_id, ''), h.criterion, h.label)}",
            "bins": h.bins,
            "bin_width": h.bin_width,
            "annotators": [{"username": a.username, "counts": a.counts} for a in h.annotators],
        }
        for h in human.histograms
    ]
