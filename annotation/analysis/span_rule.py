"""Which error spans count: the one rule behind every span statistic (the analysis page's
header and per-system tables, the API, the dashboard) and the span report's ``included``
column, so that they add up to the same numbers.

A span counts when
- it was marked on a system output of a real item (not on a repeat, a bad reference or a
  reference: those are quality control, summarised apart), and
- its annotator is in the scores of its protocol config: the same QC verdict and organizer
  decision as the scores (:func:`annotation.analysis.qc.criterion_qc` under the analysis
  settings), so an annotator left out of the scores is left out of the spans.

A merged identical output (shown once for several systems) counts once for every system
credited with its text: one judged output and its spans for each, as the scores and the
judgment report credit its answer (:mod:`annotation.analysis.credits`). Totals are sums over
systems, credits included.
"""

from __future__ import annotations

from annotation.analysis.qc import criterion_qc
from annotation.analysis.results import CampaignAnalysis
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import campaign_criteria, criterion_table_load
from annotation.models import AnnotatorDecision, Campaign, ItemKind, ProtocolConfig
from annotation.protocols import PROTOCOLS


def span_annotators_left_out(
    *, campaign: Campaign, settings: AnalysisSettings
) -> dict[int, frozenset[int]]:
    """Per protocol config of a span kind: the annotators its scores leave out (failed or
    untested QC as ``settings`` say, or excluded by decision). Every other annotator's spans
    count. One table load per criterion of the span configs."""
    decisions = {d.annotator_id: d for d in AnnotatorDecision.objects.filter(campaign=campaign)}
    excluded_by_decision = {a for a, d in decisions.items() if not d.included}
    left_out: dict[int, set[int]] = {
        config.pk: set(excluded_by_decision)
        for config in ProtocolConfig.objects.filter(campaign=campaign)
        if config.protocol in PROTOCOLS and PROTOCOLS[config.protocol].marks_spans
    }
    for config, criterion in campaign_criteria(campaign=campaign):
        if config.pk not in left_out:
            continue
        table = criterion_table_load(config=config, criterion=criterion)
        verdict = criterion_qc(table=table, settings=settings, decisions=decisions)
        left_out[config.pk].update(
            annotator
            for annotator, included in zip(
                table.annotator_ids.tolist(), verdict.included.tolist(), strict=True
            )
            if not included
        )
    return {config: frozenset(ids) for config, ids in left_out.items()}


def span_annotators_left_out_of(analysis: CampaignAnalysis) -> dict[int, frozenset[int]]:
    """The same sets read from a computed analysis (its criteria's include verdicts, decisions
    applied), where the analysis is at hand (the dashboard's stored one): no query."""
    left_out: dict[int, set[int]] = {}
    for criterion in analysis.criteria:
        kind = PROTOCOLS.get(criterion.protocol)
        if kind is not None and kind.marks_spans:
            left_out.setdefault(criterion.config_id, set()).update(
                a.annotator_id for a in criterion.annotators if not a.included
            )
    return {config: frozenset(ids) for config, ids in left_out.items()}


def span_counts(*, kind: str, annotator: int, left_out: frozenset[int]) -> bool:
    """Whether a span on an output of ``kind`` by ``annotator`` counts (the module's rule),
    ``left_out`` being its config's annotators left out of the scores."""
    return kind == ItemKind.REAL and annotator not in left_out
