"""Selectors of the human-judgment analysis: the database's judgments into the numerical core.

A campaign's judgments are read per protocol config and criterion (one ``JudgmentValue`` row =
one annotator × item × shown output × criterion) into :class:`evalcore.human.Judgments`
tables with a handful of ``values_list`` queries and numpy, then analysed by
:func:`evalcore.human.analyse_scores` (1–5 and 0–100 criteria) or
:func:`evalcore.human.analyse_rankings` (ranks). No formula lives here: this module maps
database ids to codes and back, applies the organizer's include/exclude decisions, and turns the
core's arrays into small dataclasses for templates, reports and JSON.

Annotator QC runs on both kinds: the bad-reference test on scores for 1–5 and 0–100 criteria,
on ranks for rankings (a degraded output ranked worse than its original); annotators who fail
are left out of the aggregates by default, with the same settings and organizer decisions.

Item types come from ``ItemOutput.kind``: a system output on a real item is REAL, ``repeat`` is
REPEAT, ``bad_ref`` is BAD_REF, ``reference`` is REFERENCE. A QC row's original is the same
annotator's value, on the same criterion, of the output that ``ItemOutput.original`` names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, replace

from django.contrib.auth import get_user_model
from django.core.cache import cache as django_cache
from django.db.models import (
    Count,
    Max,
)

from annotation.analysis.families.registry import family_of_protocol
from annotation.analysis.qc import criterion_qc
from annotation.analysis.results import (
    CampaignAnalysis,
    CriterionAnalysis,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    campaign_criteria,
    campaign_names,
    criterion_table_load,
)
from annotation.campaigns.selectors import campaign_inputs_stamp, content_hash
from annotation.models import (
    AnnotatorPseudonym,
    Campaign,
    ProtocolConfig,
    System,
)
from evalcore.version import code_stamp

# --------------------------------------------------------------------------------------------
# Loading: the database into Judgments tables


# --------------------------------------------------------------------------------------------
# Results for templates, reports and JSON


# --------------------------------------------------------------------------------------------
# Analysis


logger = logging.getLogger(__name__)

# How long a campaign's analysis stays in the cache (seconds). Its key is a hash of everything
# the analysis reads, so a new or revised judgment, an include/exclude decision, an upload, a
# protocol config's change or other settings compute afresh at once; the limit only bounds
# changes made outside the application (the database edited by hand).
ANALYSIS_CACHE_SECONDS = 15 * 60


def campaign_analysis_settings(*, campaign: Campaign) -> AnalysisSettings:
    """The campaign's analysis setting: what the analysis page, the API, the reports and the
    background analysis use unless a request explores others."""
    return AnalysisSettings.from_dict(campaign.analysis_settings or {})


def campaign_analysis_cached(
    *,
    campaign: Campaign,
    settings: AnalysisSettings,
    progress: Callable[[int, int], None] | None = None,
) -> CampaignAnalysis:
    """:func:`campaign_analysis_compute` of the whole campaign, kept in the cache: the analysis
    page, its report downloads and the API compute it once for unchanged inputs (15 s for a
    million judgments, a few aggregate queries to find it again). Without a working cache it is
    computed every time."""
    key = analysis_cache_key(campaign=campaign, settings=settings)
    try:
        cached = django_cache.get(key)
    except Exception as exc:  # the cache is an optimisation: an outage must not fail the page
        logger.warning("analysis cache unreachable, computing: %s", exc)
        cached = None
    if isinstance(cached, CampaignAnalysis):
        return with_current_usernames(cached)
    analysis = campaign_analysis_compute(campaign=campaign, settings=settings, progress=progress)
    try:
        django_cache.set(key, analysis, ANALYSIS_CACHE_SECONDS)
    except Exception as exc:
        logger.warning("analysis cache unreachable, not kept: %s", exc)
    return analysis


def with_current_usernames(analysis: CampaignAnalysis) -> CampaignAnalysis:
    """``analysis`` with its annotators' usernames read again (one query): a user renamed since
    it was computed shows the new name at once. Usernames are display only, so they stay out of
    the cache key, which would otherwise need the campaign's distinct annotators."""
    ids = {a.annotator_id for c in analysis.criteria for a in c.annotators}
    if not ids:
        return analysis
    user_model = get_user_model()
    current = dict(
        user_model.objects.filter(pk__in=ids).values_list("pk", user_model.USERNAME_FIELD)
    )
    if all(
        current.get(a.annotator_id, "") == a.username
        for c in analysis.criteria
        for a in c.annotators
    ):
        return analysis
    return replace(
        analysis,
        criteria=[
            replace(
                c,
                annotators=[
                    replace(a, username=current.get(a.annotator_id, "")) for a in c.annotators
                ],
            )
            for c in analysis.criteria
        ],
    )


def analysis_cache_key(*, campaign: Campaign, settings: AnalysisSettings) -> str:
    """A content hash of what :func:`campaign_analysis_compute` reads: the settings, the code
    (its versions, with the digest of EvalSite's source), the protocol configs, the uploads
    (data only changes through them), the systems' names, the judgments (count, last id, last
    submit, revisions), the decisions (count, last change) and the annotators' pseudonyms.
    Usernames are left out: a found analysis has them read again
    (:func:`with_current_usernames`)."""
    state = {
        "campaign": str(campaign.pk),
        "settings": asdict(settings),
        "code": code_stamp(),
        "configs": list(ProtocolConfig.objects.filter(campaign=campaign).order_by("pk").values()),
        **campaign_inputs_stamp(campaign=campaign),
        "systems": list(
            System.objects.filter(campaign=campaign).order_by("pk").values_list("pk", "name")
        ),
        "pseudonyms": AnnotatorPseudonym.objects.filter(campaign=campaign).aggregate(
            n=Count("pk"), last=Max("pk")
        ),
    }
    return f"evalsite:analysis:{content_hash(state)}"


def campaign_analysis_compute(
    *,
    campaign: Campaign,
    settings: AnalysisSettings | None = None,
    config: ProtocolConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CampaignAnalysis:
    """Analyse every criterion of every protocol config of ``campaign`` (or of ``config``);
    ``progress(done, total)`` hears of each criterion analysed.

    Per criterion: annotator QC (``settings.qc_test`` in ``settings.qc_space`` at
    ``settings.threshold``), normalisation, the include mask (QC verdict, overridden by the
    organizer's :class:`~annotation.models.AnnotatorDecision`), system scores with t and
    bootstrap intervals, pairwise significance and WMT clusters, agreement with counts; for
    ranking criteria "no worse than others", Expected Wins and TrueSkill with rank ranges.
    The result carries the settings, the seed of each criterion and the code version.
    """
    settings = settings or AnalysisSettings()
    criteria = [
        pair for pair in campaign_criteria(campaign=campaign) if config is None or pair[0] == config
    ]
    tables = [criterion_table_load(config=c, criterion=k) for c, k in criteria]
    names = campaign_names(campaign, tables)
    results = []
    for done, table in enumerate(tables, start=1):
        results.append(criterion_analyse(table=table, settings=settings, names=names))
        if progress is not None:
            progress(done, len(tables))
    return CampaignAnalysis(
        campaign_id=str(campaign.pk), settings=settings, version=code_stamp(), criteria=results
    )


def criterion_analyse(
    *, table: CriterionTable, settings: AnalysisSettings, names: Names
) -> CriterionAnalysis:
    """Run the core on one table and turn its arrays into result rows (the family's)."""
    family = family_of_protocol(table.config.protocol)
    verdicts = criterion_qc(table=table, settings=settings, decisions=names.decisions)
    return family.analyse(table, settings, names, verdicts)
