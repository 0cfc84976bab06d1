"""Which human-judgment analysis a page, a report or the API shows, and how fresh it is.

One route: with the campaign's analysis setting, the result the background analysis stored
(computed with that setting, the same code and the same judgments) is shown while it is fresh.
Where it is not (new judgments, a decision or a setting changed since, and its recomputation is
under way), a campaign small enough to analyse in well under a second — or whose analysis with
these settings is in the cache — is analysed for the request with the same function and
settings, so the page is current; a larger one shows the stored result marked out of date, and
the page swaps in the new one when its job ends. Other settings (an analyst exploring) are
analysed for the request when that is as quick, and otherwise by a job whose progress the page
shows (``annotation.analysis.explore``); either way the result is kept in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings as django_settings
from django.core.cache import cache as django_cache
from django.utils import timezone

from annotation.analysis.explore import ExploreState, analysis_explore_request
from annotation.analysis.results import CampaignAnalysis
from annotation.analysis.selectors import (
    analysis_cache_key,
    campaign_analysis_cached,
    campaign_analysis_settings,
    with_current_usernames,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.stored import StoredAnalysis, campaign_analysis_stored
from annotation.models import Campaign, JudgmentValue


@dataclass(frozen=True)
class ShownAnalysis:
    """An analysis as a page shows it.

    Attributes:
        analysis: the result; None while the campaign's first background analysis runs (on a
            campaign too large to analyse in the request).
        stored: it is the background analysis's stored result (else computed for the request).
        computed: when it was computed.
        fresh: it describes the campaign's judgments, decisions and uploads as they are now.
        recomputing: a background job is computing the campaign's result as it is now.
        campaign_setting: it was asked for with the campaign's analysis setting.
        job_id: the job of the stored result on show or superseded ("" when none).
        explore: the job analysing these settings for the page, when it has to wait for one.
    """

    analysis: CampaignAnalysis | None
    stored: bool
    computed: datetime | None
    fresh: bool
    recomputing: bool
    campaign_setting: bool
    job_id: str
    explore: ExploreState | None = None


def live_affordable(*, campaign: Campaign, settings: AnalysisSettings) -> bool:
    """Whether a request may analyse ``campaign`` itself: its analysis with ``settings`` is in
    the cache, or it holds at most ``EVALSITE_ANALYSIS_LIVE_VALUES`` judgment values."""
    limit = django_settings.EVALSITE_ANALYSIS_LIVE_VALUES
    values = JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign)
    if not values[limit : limit + 1].exists():
        return True
    try:
        return (
            django_cache.get(analysis_cache_key(campaign=campaign, settings=settings)) is not None
        )
    except Exception:  # the cache is an optimisation; without it, a large campaign waits
        return False


def campaign_analysis_shown(
    *, campaign: Campaign, settings: AnalysisSettings, wait: bool = False
) -> ShownAnalysis:
    """The analysis to show for ``settings`` (see the module's docstring); with ``wait``
    (a download, the API), never None: computed in the request when nothing better exists."""
    own = settings == campaign_analysis_settings(campaign=campaign)
    stored = campaign_analysis_stored(campaign=campaign) if own else None
    if stored is not None and stored.analysis is not None and stored.fresh:
        return _from_store(stored, fresh=True)
    if not wait and not live_affordable(campaign=campaign, settings=settings):
        if stored is not None:
            return _from_store(stored, fresh=False)
        # Nothing stored to show: a job analyses it, and the page follows its progress.
        return ShownAnalysis(
            analysis=None,
            stored=False,
            computed=None,
            fresh=False,
            recomputing=False,
            campaign_setting=own,
            job_id="",
            explore=analysis_explore_request(campaign=campaign, settings=settings),
        )
    return ShownAnalysis(
        analysis=campaign_analysis_cached(campaign=campaign, settings=settings),
        stored=False,
        computed=timezone.now(),
        fresh=True,
        recomputing=False,
        campaign_setting=own,
        job_id=stored.job_id if stored is not None else "",
    )


def _from_store(stored: StoredAnalysis, *, fresh: bool) -> ShownAnalysis:
    return ShownAnalysis(
        analysis=(with_current_usernames(stored.analysis) if stored.analysis is not None else None),
        stored=stored.analysis is not None,
        computed=stored.computed,
        fresh=fresh,
        recomputing=stored.recomputing,
        campaign_setting=True,
        job_id=stored.job_id,
    )


# The response header that says where a download's analysis comes from.
PROVENANCE_HEADER = "X-EvalSite-Analysis"


def provenance(shown: ShownAnalysis) -> str:
    """Where ``shown`` comes from and how fresh it is, in one line (a download's
    ``X-EvalSite-Analysis`` header, the LaTeX report's comment): "stored background result
    computed 2026-11-28T03:05:00+00:00, up to date", or "computed for this request …"."""
    when = shown.computed.isoformat(timespec="seconds") if shown.computed else "unknown"
    if not shown.stored:
        return f"computed for this request at {when}"
    state = "up to date" if shown.fresh else "out of date, being recomputed"
    return f"stored background result computed {when}, {state}"
