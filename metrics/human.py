"""The human side of the background analysis: the human-judgment analysis of the annotation app
and the per-annotator histograms of raw scores (Koehn Fig. 8.3), as one JSON document."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.db.models import Count

from annotation.analysis.results import Histogram, HistogramAnnotator, HumanDocument
from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.models import JudgmentValue, ProtocolConfig, pseudonym_code
from annotation.protocols import PROTOCOLS, SCORES_STANDARDISED
from annotation.reports.judgments import annotator_labels

# 0–100 scales are shown in bins of 10 (the last bin holds 90–100).
SLIDER_BIN = 10


def _standardised_configs(campaign: Any) -> Any:
    """The campaign's configs of scores imported standardised (a subquery: a key lookup
    inside ``exclude`` would also leave out the configs without the key, whose value is NULL)."""
    configs = ProtocolConfig.objects.filter(campaign=campaign)
    return configs.filter(settings__scores=SCORES_STANDARDISED).values("pk")


def histograms(*, campaign: Any) -> list[Histogram]:
    """Raw-score counts per protocol config, criterion and annotator (real items only); none
    of a config whose scores were imported standardised (z-scores, no raw score known)."""
    rows = (
        JudgmentValue.objects.filter(
            judgment__item__task__config__campaign=campaign, output__kind="real"
        )
        .exclude(judgment__item__task__config__in=_standardised_configs(campaign))
        .values(
            "judgment__item__task__config_id",
            "judgment__item__task__config__name",
            "judgment__item__task__config__protocol",
            "criterion",
            "judgment__annotator_id",
            "judgment__annotator__username",
            "value",
        )
        .annotate(n=Count("pk"))
        .order_by()
    )
    out: dict[tuple[int, str], Histogram] = {}
    counts: dict[tuple[int, str], dict[int, HistogramAnnotator]] = {}
    for row in rows:
        protocol = PROTOCOLS[row["judgment__item__task__config__protocol"]]
        criterion = next(
            (c for c in protocol.histogram_criteria() if c.key == row["criterion"]), None
        )
        if criterion is None:
            continue  # not a criterion whose histogram says something (a rank, by the kind)
        key = (row["judgment__item__task__config_id"], row["criterion"])
        slider = criterion.maximum - criterion.minimum > 10
        if slider:
            bins = list(range(criterion.minimum, criterion.maximum, SLIDER_BIN))
        else:
            bins = list(range(criterion.minimum, criterion.maximum + 1))
        out.setdefault(
            key,
            Histogram(
                config_id=key[0],
                config_name=row["judgment__item__task__config__name"],
                criterion=row["criterion"],
                label=str(criterion.label),
                bins=bins,
                bin_width=SLIDER_BIN if slider else 1,
                annotators=[],
            ),
        )
        annotator = counts.setdefault(key, {}).setdefault(
            row["judgment__annotator_id"],
            HistogramAnnotator(
                id=row["judgment__annotator_id"],
                username=row["judgment__annotator__username"],
                counts=[0] * len(bins),
            ),
        )
        value = int(row["value"])
        index = (
            min((value - criterion.minimum) // SLIDER_BIN, len(bins) - 1)
            if slider
            else value - criterion.minimum
        )
        annotator.counts[index] += row["n"]
    return [
        replace(histogram, annotators=[a for _, a in sorted(counts[key].items())])
        for key, histogram in out.items()
    ]


def human_compute(*, campaign: Any) -> dict[str, Any]:
    """The stored ``human`` document (:class:`HumanDocument`): the campaign's human-judgment
    analysis with the campaign's analysis setting (as the analysis page, the reports and the
    API use it), plus histograms."""
    settings = campaign_analysis_settings(campaign=campaign)
    analysis = campaign_analysis_compute(campaign=campaign, settings=settings)
    return HumanDocument(analysis=analysis, histograms=histograms(campaign=campaign)).to_json()


def human_document_named(
    *, campaign: Any, data: dict[str, Any], real_names: bool
) -> dict[str, Any]:
    """A stored human document as downloads give it, by the rule of every report: annotators
    by pseudonym (A001, …), their usernames (as they are now) only with ``real_names``, after
    their other keys. The stored document keeps the usernames the dashboard page shows its
    organizers."""
    codes = {
        annotator: pseudonym_code(number)
        for annotator, number in annotator_pseudonyms_ensure(campaign=campaign).items()
    }
    names = annotator_labels(campaign=campaign, real_names=True) if real_names else {}
    document = HumanDocument.from_json(data)

    def username(annotator_id: int, stored: str) -> str:
        return names.get(annotator_id, stored) if real_names else stored

    analysis = replace(
        document.analysis,
        criteria=[
            replace(
                criterion,
                annotators=[
                    replace(
                        a,
                        pseudonym=codes.get(a.annotator_id, a.pseudonym),
                        username=username(a.annotator_id, a.username),
                    )
                    for a in criterion.annotators
                ],
            )
            for criterion in document.analysis.criteria
        ],
    )
    histograms = [
        replace(
            h,
            annotators=[
                replace(
                    a,
                    pseudonym=codes.get(a.id, a.pseudonym or ""),
                    username=username(a.id, a.username),
                )
                for a in h.annotators
            ],
        )
        for h in document.histograms
    ]
    return HumanDocument(analysis=analysis, histograms=histograms).to_json(
        usernames="last" if real_names else "omitted"
    )
