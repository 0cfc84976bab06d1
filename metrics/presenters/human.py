"""The human-judgment panel: system rows with bars, annotator QC rows and the score histograms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

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
    agreement: list[dict[str, Any]]
    method: dict[str, Any]


def criterion_slug(config_id: Any, criterion: str) -> str:
    return f"c{config_id}-{criterion}"


def _bar_axis(systems: list[dict[str, Any]], ranking: bool) -> tuple[float, float] | None:
    if ranking:
        return (0.0, 1.0)  # Expected Wins is a share
    values = [
        v
        for s in systems
        if s.get("position", 0) > 0
        for v in (
            finite_or_none(s.get("boot_low")),
            finite_or_none(s.get("boot_high")),
            finite_or_none(s.get("score")),
        )
        if v is not None
    ]
    if not values:
        return None
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 0.5
    return (low - pad, high + pad)


def _position(value: float | None, axis: tuple[float, float] | None) -> float | None:
    if value is None or axis is None:
        return None
    return round(100 * (value - axis[0]) / (axis[1] - axis[0]), 2)


def human_panel(doc: dict[str, Any]) -> list[HumanCriterion]:
    """Rankings with intervals and clusters, and the annotator QC table, per criterion of a
    ``human`` document (the stored :class:`annotation.analysis.results.CampaignAnalysis`)."""
    return [_human_criterion(crit) for crit in (doc.get("analysis") or {}).get("criteria", [])]


def _human_criterion(crit: dict[str, Any]) -> HumanCriterion:
    """One criterion of the panel: its system rows on a shared bar axis and its QC rows."""
    ranking = crit.get("kind") == "ranking"
    ranked = [s for s in crit.get("systems", []) if s.get("position", 0) > 0]
    axis = _bar_axis(ranked, ranking)
    method = crit.get("method") or {}
    scale = crit.get("scale") or (0, 0)
    return HumanCriterion(
        slug=criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
        title=f"{crit.get('config_name', '')} · {crit.get('criterion_label', '')}",
        protocol=crit.get("protocol", ""),
        kind=crit.get("kind", ""),
        scale=(int(scale[0]), int(scale[1])),
        space=str(method.get("space", "")),
        test=str(method.get("significance_test", "")),
        n_rows=crit.get("n_rows", 0),
        n_annotators=crit.get("n_annotators", 0),
        n_segments=crit.get("n_segments", 0),
        axis_low=axis[0] if axis else None,
        axis_high=axis[1] if axis else None,
        systems=_system_rows(crit.get("systems", []), ranking, axis),
        annotators=[_qc_row(a) for a in crit.get("annotators", [])],
        agreement=crit.get("agreement", []),
        method=method,
    )


def _system_rows(
    systems: list[dict[str, Any]], ranking: bool, axis: tuple[float, float] | None
) -> list[HumanSystemRow]:
    """The system rows in document order; a row starts a cluster when its cluster differs
    from the previous row's."""
    rows = []
    previous_cluster = None
    for s in systems:
        low = finite_or_none(s.get("boot_low"))
        high = finite_or_none(s.get("boot_high"))
        left = _position(low, axis)
        right = _position(high, axis)
        score = finite_or_none(s.get("expected_wins") if ranking else s.get("score"))
        rows.append(
            HumanSystemRow(
                position=s.get("position", 0),
                rank_low=s.get("rank_low", 0),
                rank_high=s.get("rank_high", 0),
                cluster=s.get("cluster", 0),
                name=s.get("name", ""),
                score=score,
                t_low=finite_or_none(s.get("t_low")),
                t_high=finite_or_none(s.get("t_high")),
                boot_low=low,
                boot_high=high,
                mean_raw=finite_or_none(s.get("mean_raw")),
                expected_wins=finite_or_none(s.get("expected_wins")),
                trueskill_rank_low=s.get("trueskill_rank_low"),
                trueskill_rank_high=s.get("trueskill_rank_high"),
                n_judgments=s.get("n_judgments", 0),
                n_segments=s.get("n_segments", 0),
                bar_left=left,
                bar_width=None if left is None or right is None else round(right - left, 2),
                dot=_position(score, axis) if s.get("position", 0) > 0 else None,
                cluster_start=previous_cluster is not None and s.get("cluster") != previous_cluster,
            )
        )
        previous_cluster = s.get("cluster")
    return rows


def _qc_row(a: dict[str, Any]) -> QCRow:
    """One annotator's row of the QC table."""
    return QCRow(
        annotator_id=a["annotator_id"],
        username=a.get("username", ""),
        n_rows=a.get("n_rows", 0),
        qc_status=a.get("qc_status", ""),
        qc_n=a.get("qc_n", 0),
        qc_p=finite_or_none(a.get("qc_p")),
        qc_mean_difference=finite_or_none(a.get("qc_mean_difference")),
        repeats_n=a.get("repeats_n", 0),
        repeats_share_within=finite_or_none(a.get("repeats_share_within")),
        references_mean=finite_or_none(a.get("references_mean")),
        minutes=(a.get("time_seconds") or 0.0) / 60,
        included=bool(a.get("included")),
        by_decision=a.get("decision") is not None,
    )


def histogram_plots(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-annotator counts of raw scores (Koehn Fig. 8.3) per criterion, for the plots."""
    return [
        {
            "id": criterion_slug(h.get("config_id"), h.get("criterion", "")),
            "title": f"{h.get('config_name', '')} · {h.get('label', '')}",
            "bins": h.get("bins", []),
            "bin_width": h.get("bin_width", 1),
            "annotators": [
                {"username": a.get("username", ""), "counts": a.get("counts", [])}
                for a in h.get("annotators", [])
            ],
        }
        for h in doc.get("histograms", [])
    ]
