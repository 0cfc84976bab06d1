"""The correlation panel: metric-human correlations with their intervals, and the scatter plots."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.protocols.registry import criterion_label_shown
from evalcore.numbers import finite_or_none
from evalsite.formatting import interval_text, number_text, p_text
from metrics.documents import CorrelationsDocument, CriterionCorrelations, MetricCorrelation
from metrics.documents import Interval as StoredInterval
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


def _title(crit: CriterionCorrelations, protocols: Mapping[int, str]) -> str:
    """ "Config · criterion", the criterion named in the page's language (stored results keep
    the language they were computed in)."""
    label = criterion_label_shown(protocols.get(crit.config_id, ""), crit.criterion, crit.label)
    return f"{crit.config_name} · {label}"


def _human_score(crit: CriterionCorrelations) -> str:
    return str(HUMAN_SCORES.get(crit.human_score, crit.human_score))


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


def _interval(entry: StoredInterval | None) -> Interval | None:
    return None if entry is None else Interval(entry.value, entry.low, entry.high)


def _row(m: MetricCorrelation) -> CorrelationRow:
    system, darr, pearson_z = m.system, m.segment.darr, m.segment.pearson_z
    return CorrelationRow(
        key=m.key,
        label=m.label,
        oriented=m.oriented,
        n_systems=system.n if system else None,
        pearson=_interval(system.pearson if system else None),
        spearman=_interval(system.spearman if system else None),
        kendall=_interval(system.kendall if system else None),
        pairwise_accuracy=system.pairwise_accuracy if system else None,
        segment_pearson_z=pearson_z.value if pearson_z else None,
        segment_n=pearson_z.n if pearson_z else None,
        darr_tau=darr.tau if darr else None,
        darr_pairs=darr.pairs if darr else None,
        darr_from=str(DARR_SOURCES.get(darr.pairs_from, darr.pairs_from)) if darr else "",
    )


def correlation_panel(
    doc: CorrelationsDocument, protocols: Mapping[int, str] | None = None
) -> list[CorrelationCriterion]:
    """The correlation table and the Williams test per human criterion of a ``correlations``
    document; ``protocols`` (config id → protocol kind) names the criteria in the page's
    language."""
    out = []
    for crit in doc.criteria:
        labels = {m.key: m.label for m in crit.metrics}
        out.append(
            CorrelationCriterion(
                slug=criterion_slug(crit.config_id, crit.criterion),
                title=_title(crit, protocols or {}),
                human_score=_human_score(crit),
                rows=[_row(m) for m in crit.metrics],
                williams_metrics=[labels.get(k, k) for k in crit.williams.metrics],
                williams_p=crit.williams.p,
            )
        )
    return out


def scatter_plots(
    doc: CorrelationsDocument, protocols: Mapping[int, str] | None = None
) -> list[dict[str, Any]]:
    """Per human criterion, per metric: one point per system (metric, human) and the fitted
    least-squares line, for the plots (criteria named as :func:`correlation_panel` does)."""
    out = []
    for crit in doc.criteria:
        metrics = []
        for m in crit.metrics:
            system = m.system
            if system is None or not system.points:
                continue
            metrics.append(
                {
                    "key": m.key,
                    "label": m.label,
                    "oriented": m.oriented,
                    "points": [
                        {
                            "name": p.name,
                            "metric": short_number(finite_or_none(p.metric), 6),
                            "human": short_number(finite_or_none(p.human), 6),
                        }
                        for p in system.points
                    ],
                    "fit": {"slope": system.fit.slope, "intercept": system.fit.intercept},
                    "pearson": system.pearson.value,
                }
            )
        if metrics:
            out.append(
                {
                    "id": criterion_slug(crit.config_id, crit.criterion),
                    "title": _title(crit, protocols or {}),
                    "human": _human_score(crit),
                    "metrics": metrics,
                }
            )
    return out
