"""The correlation panel: metric-human correlations with their intervals, and the scatter plots."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.protocols.registry import criterion_label_shown
from evalcore.numbers import finite_or_none
from evalsite.formatting import interval_text, number_text, p_text
from metrics.presenters.human import criterion_slug
from metrics.presenters.metrics import (
    ALPHA,
    short_number,
)

# Where the DARR pairs come from, as the stored results name it, in the page's language.
DARR_SOURCES = {
    "ranks on one screen": _("ranks on one screen"),
    "DA translations of one segment": _("DA translations of one segment"),
}

# The human side of a correlation as the stored results name it (metrics/correlations.py), in
# the page's language.
HUMAN_SCORES = {
    "Expected Wins": _("Expected Wins"),
    "mean z": _("mean z-score"),
    "mean raw": _("mean raw score"),
    "mean shifted": _("mean mean-shifted score"),
}


def _title(crit: dict[str, Any], protocols: Mapping[int, str]) -> str:
    """ "Config · criterion", the criterion named in the page's language (stored results keep
    the language they were computed in)."""
    label = criterion_label_shown(
        protocols.get(crit.get("config_id", 0), ""),
        crit.get("criterion", ""),
        crit.get("label", ""),
    )
    return f"{crit.get('config_name', '')} · {label}"


def _human_score(crit: dict[str, Any]) -> str:
    stored = str(crit.get("human_score", ""))
    return str(HUMAN_SCORES.get(stored, stored))


@dataclass(frozen=True)
class Interval:
    value: float | None
    low: float | None
    high: float | None

    @property
    def value_text(self) -> str:
        return number_text(self.value, 3)

    @property
    def range_text(self) -> str:
        return interval_text(self.low, self.high, 2)


@dataclass(frozen=True)
class CorrelationRow:
    key: str
    label: str
    oriented: bool  # an error metric, negated so that agreement with humans is positive
    n_systems: int | None
    pearson: Interval | None
    spearman: Interval | None
    kendall: Interval | None
    pairwise_accuracy: float | None
    segment_pearson_z: float | None
    segment_n: int | None
    darr_tau: float | None
    darr_pairs: int | None
    darr_from: str

    @property
    def pairwise_text(self) -> str:
        return number_text(self.pairwise_accuracy, 3)

    @property
    def segment_text(self) -> str:
        return number_text(self.segment_pearson_z, 3)

    @property
    def darr_text(self) -> str:
        return number_text(self.darr_tau, 3)


@dataclass(frozen=True)
class CorrelationCriterion:
    slug: str
    title: str
    human_score: str
    rows: list[CorrelationRow]
    williams_metrics: list[str]  # labels
    williams_p: list[list[float | None]]

    @property
    def has_system_level(self) -> bool:
        return any(r.pearson is not None for r in self.rows)

    @property
    def williams_rows(self) -> list[tuple[str, list[tuple[str, bool]]]]:
        """(metric, [(p-value text, p < α) per column metric])."""
        return [
            (label, [(p_text(p), p is not None and p < ALPHA) for p in row])
            for label, row in zip(self.williams_metrics, self.williams_p, strict=False)
        ]


def _interval(entry: dict[str, Any] | None) -> Interval | None:
    if not entry:
        return None
    return Interval(
        finite_or_none(entry.get("value")),
        finite_or_none(entry.get("low")),
        finite_or_none(entry.get("high")),
    )


def correlation_panel(
    doc: dict[str, Any], protocols: Mapping[int, str] | None = None
) -> list[CorrelationCriterion]:
    """The correlation table and the Williams test per human criterion of a ``correlations``
    document; ``protocols`` (config id → protocol kind) names the criteria in the page's
    language."""
    out = []
    for crit in doc.get("criteria", []):
        labels = {m["key"]: m.get("label", m["key"]) for m in crit.get("metrics", [])}
        rows = []
        for m in crit.get("metrics", []):
            system = m.get("system") or {}
            segment = m.get("segment") or {}
            darr = segment.get("darr") or {}
            pearson_z = segment.get("pearson_z") or {}
            rows.append(
                CorrelationRow(
                    key=m["key"],
                    label=m.get("label", m["key"]),
                    oriented=bool(m.get("oriented")),
                    n_systems=system.get("n"),
                    pearson=_interval(system.get("pearson")),
                    spearman=_interval(system.get("spearman")),
                    kendall=_interval(system.get("kendall")),
                    pairwise_accuracy=finite_or_none(system.get("pairwise_accuracy")),
                    segment_pearson_z=finite_or_none(pearson_z.get("value")),
                    segment_n=pearson_z.get("n"),
                    darr_tau=finite_or_none(darr.get("tau")),
                    darr_pairs=darr.get("pairs"),
                    darr_from=str(DARR_SOURCES.get(darr.get("from", ""), darr.get("from", ""))),
                )
            )
        williams = crit.get("williams") or {}
        out.append(
            CorrelationCriterion(
                slug=criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
                title=_title(crit, protocols or {}),
                human_score=_human_score(crit),
                rows=rows,
                williams_metrics=[labels.get(k, k) for k in williams.get("metrics", [])],
                williams_p=[[finite_or_none(p) for p in row] for row in williams.get("p", [])],
            )
        )
    return out


def scatter_plots(
    doc: dict[str, Any], protocols: Mapping[int, str] | None = None
) -> list[dict[str, Any]]:
    """Per human criterion, per metric: one point per system (metric, human) and the fitted
    least-squares line, for the plots (criteria named as :func:`correlation_panel` does)."""
    out = []
    for crit in doc.get("criteria", []):
        metrics = []
        for m in crit.get("metrics", []):
            system = m.get("system")
            if not system or not system.get("points"):
                continue
            pearson = system.get("pearson") or {}
            metrics.append(
                {
                    "key": m["key"],
                    "label": m.get("label", m["key"]),
                    "oriented": bool(m.get("oriented")),
                    "points": [
                        {
                            "name": p["name"],
                            "metric": short_number(finite_or_none(p["metric"]), 6),
                            "human": short_number(finite_or_none(p["human"]), 6),
                        }
                        for p in system["points"]
                    ],
                    "fit": system.get("fit") or {},
                    "pearson": finite_or_none(pearson.get("value")),
                }
            )
        if metrics:
            out.append(
                {
                    "id": criterion_slug(crit.get("config_id"), crit.get("criterion", "")),
                    "title": _title(crit, protocols or {}),
                    "human": _human_score(crit),
                    "metrics": metrics,
                }
            )
    return out
