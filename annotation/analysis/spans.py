"""What the error spans of a campaign's span protocols (ESA, MQM) say beside their scores: errors
per system by severity and category, agreement on spans between annotators (the same output
judged by two) and within one (a repeat against its original), and per annotator the share of
bad references whose degraded part they marked.

Which spans count is :mod:`annotation.analysis.span_rule`'s rule (system outputs, annotators in
the scores, merged outputs credited to each system); agreement between and within annotators
reads the counted annotators' markings, the bad-reference table every annotator's (it is QC
evidence). Read in the request: four queries per campaign, whatever the number of protocols,
plus the QC verdicts of the span configs; the numbers come from :mod:`evalcore.human.spans`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Length
from django.utils.translation import gettext_lazy as _

from annotation.analysis.selectors import campaign_analysis_settings
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.span_rule import (
    span_annotators_left_out,
    span_counts,
)
from annotation.models import (
    Campaign,
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    Judgment,
    JudgmentSpan,
    ProtocolConfig,
)
from annotation.protocols import PROTOCOLS
from annotation.protocols.spans import Category, SpanProtocol
from annotation.tasking.plan import is_character_based
from evalcore.human.spans import Marking, SpanAgreement, degraded_range, finds, span_agreement


@dataclass(frozen=True)
class SystemErrors:
    """One system's errors: outputs judged, spans by severity and by (category, severity)."""

    name: str
    n_judged: int
    by_severity: dict[str, int]
    by_category: dict[tuple[str, str], int]

    @property
    def n_errors(self) -> int:
        return sum(self.by_severity.values())

    @property
    def per_judged(self) -> float | None:
        return self.n_errors / self.n_judged if self.n_judged else None


@dataclass(frozen=True)
class AnnotatorFinds:
    """Bad references one annotator judged and how many had a span over the degraded part."""

    annotator_id: int
    username: str
    n_bad: int
    n_found: int

    @property
    def share(self) -> float | None:
        return self.n_found / self.n_bad if self.n_bad else None


@dataclass(frozen=True)
class SpanSummary:
    config_id: int
    config_name: str
    protocol: str
    severities: tuple[str, ...]
    categories: tuple[Category, ...]
    # Judged system outputs and their spans as counted (span_rule: credits included, annotators
    # left out of the scores left out): the sums of ``systems``.
    n_judged: int
    n_spans: int
    systems: tuple[SystemErrors, ...]
    inter: SpanAgreement
    intra: SpanAgreement
    annotators: tuple[AnnotatorFinds, ...]
    # The kind's settings as the config runs it (MQM: the weights its scores were computed
    # with), as stored, and as (label, value) for the page.
    settings: dict[str, Any] = field(default_factory=dict)
    settings_shown: tuple[tuple[str, str], ...] = ()
    # Spans not counted: on QC items (repeats, bad references, references), and on system
    # outputs by annotators left out of the scores (once per credited system, as the report
    # lists them).
    n_spans_on_qc: int = 0
    n_spans_left_out: int = 0
    n_annotators_left_out: int = 0

    @property
    def severity_columns(self) -> list[tuple[str, Any]]:
        """(key, label in the page's language) of the kind's severities, in order."""
        labels = {s.key: s.label for s in _span_kind(self.protocol).severities}
        return [(key, labels.get(key, key)) for key in self.severities]

    @property
    def system_rows(self) -> list[tuple[SystemErrors, list[int]]]:
        """Each system with its error counts in ``severities`` order."""
        return [(s, [s.by_severity.get(sev, 0) for sev in self.severities]) for s in self.systems]

    @property
    def inter_shown(self) -> AgreementShown:
        return AgreementShown.of(self.inter)

    @property
    def intra_shown(self) -> AgreementShown:
        return AgreementShown.of(self.intra)

    @property
    def chart_height(self) -> int:
        return 24 * len(self.systems) + 4

    @property
    def category_rows(self) -> list[tuple[Category, list[int]]]:
        """Per category with errors: its count for each system (in ``systems`` order)."""
        rows = []
        for category in self.categories:
            counts = [
                sum(n for (c, _sev), n in s.by_category.items() if c == category.key)
                for s in self.systems
            ]
            if any(counts):
                rows.append((category, counts))
        return rows

    @property
    def chart(self) -> list[dict[str, Any]]:
        """A stacked bar per system: errors per judged output by severity, as widths on a
        0–100 scale (the longest bar is 100), for the page's SVG."""
        longest = max((s.per_judged or 0.0 for s in self.systems), default=0.0)
        bars = []
        for row, system in enumerate(self.systems):
            x = 0.0
            parts = []
            for severity in self.severities:
                rate = system.by_severity.get(severity, 0) / system.n_judged
                width = 100 * rate / longest if longest else 0.0
                parts.append({"severity": severity, "x": x, "width": width, "rate": rate})
                x += width
            bars.append(
                {"name": system.name, "y": 24 * row, "parts": parts, "per": system.per_judged}
            )
        return bars

    def as_json(self, names: dict[int, str] | None = None) -> dict[str, Any]:
        """The summary for the API; annotators by ``names`` (user id → name, their pseudonyms)
        or, without, by username."""

        def agreement(a: SpanAgreement) -> dict[str, Any]:
            return {
                "f1": _finite(a.f1),
                "f1_undefined": _text(undefined_reason(a, "f1")),
                "kappa": _finite(a.kappa),
                "kappa_undefined": _text(undefined_reason(a, "kappa")),
                "pairs": a.n_pairs,
                "pairs_without_spans": a.n_both_clean,
                "positions": a.n_positions,
            }

        return {
            "config": self.config_id,
            "name": self.config_name,
            "protocol": self.protocol,
            "settings": self.settings,
            "judged_outputs": self.n_judged,
            "spans": self.n_spans,
            # What was not counted (annotation.analysis.span_rule).
            "spans_on_qc_items": self.n_spans_on_qc,
            "spans_left_out": self.n_spans_left_out,
            "annotators_left_out": self.n_annotators_left_out,
            "systems": [
                {
                    "system": s.name,
                    "judged_outputs": s.n_judged,
                    "errors": s.n_errors,
                    "by_severity": s.by_severity,
                    "by_category": [
                        {"category": c, "severity": sev, "count": n}
                        for (c, sev), n in sorted(s.by_category.items())
                    ],
                }
                for s in self.systems
            ],
            "inter_annotator": agreement(self.inter),
            "intra_annotator": agreement(self.intra),
            "bad_references": [
                {
                    "annotator": a.username if names is None else names[a.annotator_id],
                    "judged": a.n_bad,
                    "found": a.n_found,
                }
                for a in self.annotators
            ],
        }


def _finite(x: float) -> float | None:
    return None if x != x else x


def _text(reason: Any) -> str | None:
    return None if reason is None else str(reason)


def undefined_reason(agreement: SpanAgreement, statistic: str) -> Any:
    """Why ``statistic`` ("f1" or "kappa") of ``agreement`` has no value (None when it has
    one), in the page's language: shown instead of a number, and beside the API's null."""
    value = agreement.f1 if statistic == "f1" else agreement.kappa
    if value == value:
        return None
    if not agreement.n_pairs:
        return _("no pair of markings to compare")
    if statistic == "f1":
        return _("no pair has a marked character on either side: F1 is undefined")
    return _("every character has the same label on both sides of every pair: κ is undefined")


@dataclass(frozen=True)
class AgreementShown:
    """One row of the page's agreement table: the numbers and, for each missing one, why."""

    agreement: SpanAgreement
    f1: float | None
    kappa: float | None
    f1_undefined: Any
    kappa_undefined: Any

    @classmethod
    def of(cls, agreement: SpanAgreement) -> AgreementShown:
        return cls(
            agreement,
            _finite(agreement.f1),
            _finite(agreement.kappa),
            undefined_reason(agreement, "f1"),
            undefined_reason(agreement, "kappa"),
        )


@dataclass(frozen=True)
class _Shown:
    item_id: int
    kind: str
    system: str
    original_id: int | None
    length: int
    text: str
    # The systems credited with a merged output's answer besides the one shown.
    credited: tuple[str, ...] = ()


def campaign_span_summaries(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    left_out: dict[int, frozenset[int]] | None = None,
) -> list[SpanSummary]:
    """One summary per protocol config of a span kind that has judgments, in config order,
    counting spans by :mod:`annotation.analysis.span_rule` under ``settings`` (the campaign's
    analysis setting unless given), or with ``left_out`` given, by those verdicts (a stored
    analysis', ``span_rule.span_annotators_left_out_of``). With ``left_out`` given it makes the
    same five queries whatever the campaign holds (the dashboard pins its count)."""
    span_kinds = [key for key, kind in PROTOCOLS.items() if kind.marks_spans]
    in_campaign = ProtocolConfig.objects.filter(campaign=campaign, protocol__in=span_kinds)
    configs = list(in_campaign.order_by("created", "pk"))
    if left_out is None:
        if not configs:
            return []
        if settings is None:
            settings = campaign_analysis_settings(campaign=campaign)
        left_out = span_annotators_left_out(campaign=campaign, settings=settings)
    # The campaign's span configs as a subquery: each query below runs even when there are
    # none, so that their number does not depend on the campaign.
    configs_query = in_campaign.values("pk")
    shown = _outputs(configs_query)
    judged = list(
        Judgment.objects.filter(item__task__config__in=configs_query)
        .order_by()
        .values_list("pk", "item_id", "annotator_id", "annotator__username", "item__task__config")
    )
    markings: dict[int, dict[int, list[tuple[int, int, str, str]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for judgment, output, start, end, severity, category in (
        JudgmentSpan.objects.filter(judgment__item__task__config__in=configs_query)
        .order_by()
        .values_list("judgment_id", "output_id", "start", "end", "severity", "category")
    ):
        markings[judgment][output].append((start, end, severity, category))
    summaries = []
    for config in configs:
        rows = [j for j in judged if j[4] == config.pk]
        if rows:
            summaries.append(
                _summary(
                    config,
                    rows,
                    shown,
                    markings,
                    campaign.target_language,
                    left_out.get(config.pk, frozenset()),
                )
            )
    return summaries


def _outputs(configs: QuerySet[ProtocolConfig, Any]) -> dict[int, dict[int, _Shown]]:
    """The shown outputs of the configs' items, by item id and output id."""
    found: dict[int, dict[int, _Shown]] = defaultdict(dict)
    rows = (
        ItemOutput.objects.filter(item__task__config__in=configs)
        .order_by()
        .annotate(length=Length("text"))
        .values_list("pk", "item_id", "kind", "system__name", "original_id", "length", "text")
    )
    credited: dict[int, list[str]] = defaultdict(list)
    for output, name in ItemOutputCredit.objects.filter(
        output__item__task__config__in=configs
    ).values_list("output_id", "system__name"):
        credited[output].append(name)
    for pk, item, kind, system, original, length, text in rows:
        # The text is needed only to find a bad reference's degraded part (against its
        # original, a real output).
        keep = text if kind in (ItemKind.BAD_REFERENCE, ItemKind.REAL) else ""
        found[item][pk] = _Shown(
            item, kind, system or "", original, length, keep, tuple(credited.get(pk, ()))
        )
    return found


def _span_kind(key: str) -> SpanProtocol:
    """The registered kind ``key``, one that marks spans (the only kinds summarised here)."""
    protocol = PROTOCOLS[key]
    if not isinstance(protocol, SpanProtocol):
        raise TypeError(f"protocol kind {key!r} marks no spans")
    return protocol


class _Tally:
    """Judged outputs and errors per system, of the spans that count."""

    def __init__(self) -> None:
        self.judged: Counter[str] = Counter()
        self.by_severity: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_category: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)

    def add(self, names: Iterable[str], spans: list[tuple[int, int, str, str]]) -> None:
        """One judged output credited to each of ``names``, with its spans."""
        for name in names:
            self.judged[name] += 1
            for _s, _e, severity, category in spans:
                self.by_severity[name][severity] += 1
                self.by_category[name][(category, severity)] += 1

    def systems(self) -> tuple[SystemErrors, ...]:
        """Every system with a judged output, fewest errors per judged output first."""
        return tuple(
            sorted(
                (
                    SystemErrors(
                        name, n, dict(self.by_severity[name]), dict(self.by_category[name])
                    )
                    for name, n in self.judged.items()
                ),
                key=lambda s: (s.n_errors / s.n_judged, s.name),
            )
        )


def _summary(
    config: ProtocolConfig,
    judgments: list[tuple[int, int, int, str, int]],
    shown: dict[int, dict[int, _Shown]],
    markings: dict[int, dict[int, list[tuple[int, int, str, str]]]],
    target_language: str,
    left_out: frozenset[int],
) -> SpanSummary:
    protocol = _span_kind(config.protocol)
    severities = tuple(s.key for s in protocol.severities)
    categories = tuple(getattr(protocol, "categories", ()))
    tally = _Tally()
    # Per output: every counted annotator's marking of it (for agreement); per (annotator,
    # output).
    per_output: dict[int, list[tuple[int, Marking]]] = defaultdict(list)
    mine: dict[tuple[int, int], Marking] = {}
    found: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    n_on_qc = n_left_out = 0
    character_based = is_character_based(target_language)
    outputs = {o: out for item_outputs in shown.values() for o, out in item_outputs.items()}
    for judgment, item, annotator, username, _config in judgments:
        for output_id, output in shown.get(item, {}).items():
            spans = markings.get(judgment, {}).get(output_id, [])
            marking = [(s, e) for s, e, _sev, _cat in spans]
            # A merged output's errors count for every system that produced its text.
            names = (output.system, *output.credited)
            if output.kind != ItemKind.REAL:
                n_on_qc += len(spans)
            elif not span_counts(kind=output.kind, annotator=annotator, left_out=left_out):
                n_left_out += len(spans) * len(names)
            else:
                per_output[output_id].append((annotator, marking))
                tally.add(names, spans)
            if annotator not in left_out:
                mine[(annotator, output_id)] = marking
            if output.kind == ItemKind.BAD_REFERENCE and output.original_id in outputs:
                # QC evidence about every annotator, those left out included.
                degraded = degraded_range(
                    outputs[output.original_id].text, output.text, whole_words=not character_based
                )
                found[(username, annotator)][0] += 1
                found[(username, annotator)][1] += int(finds(marking, degraded))
    lengths = {o: shown_output.length for o, shown_output in outputs.items()}
    inter = span_agreement(_inter_pairs(per_output, lengths))
    intra = span_agreement(_intra_pairs(mine, outputs))
    systems = tally.systems()
    return SpanSummary(
        config_id=config.pk,
        config_name=config.name,
        protocol=config.protocol,
        settings=config.definition.current_settings(),
        settings_shown=tuple(config.definition.settings_shown()),
        severities=severities,
        categories=categories,
        n_judged=sum(s.n_judged for s in systems),
        n_spans=sum(s.n_errors for s in systems),
        n_spans_on_qc=n_on_qc,
        n_spans_left_out=n_left_out,
        n_annotators_left_out=len({j[2] for j in judgments} & left_out),
        systems=systems,
        inter=inter,
        intra=intra,
        annotators=tuple(
            AnnotatorFinds(user_id, name, counts[0], counts[1])
            for (name, user_id), counts in sorted(found.items())
        ),
    )


def _inter_pairs(
    per_output: dict[int, list[tuple[int, Marking]]], lengths: dict[int, int]
) -> Iterable[tuple[Marking, Marking, int]]:
    """Every two annotators' markings of the same real output, the annotator with the lower id
    first: pooled κ depends on which side of a pair a marking is on (each side's share of
    marked positions), so the sides are fixed, not left to the order of the database's rows."""
    for output_id, marks in per_output.items():
        for (a, first), (b, second) in combinations(sorted(marks, key=lambda m: m[0]), 2):
            if a != b:
                yield first, second, lengths[output_id]


def _intra_pairs(
    mine: dict[tuple[int, int], Marking], outputs: dict[int, _Shown]
) -> Iterable[tuple[Marking, Marking, int]]:
    """An annotator's marking of a repeat against their marking of its original."""
    for (annotator, output_id), marking in mine.items():
        output = outputs[output_id]
        if output.kind != ItemKind.REPEAT or output.original_id is None:
            continue
        original = mine.get((annotator, output.original_id))
        if original is not None:
            yield original, marking, output.length
