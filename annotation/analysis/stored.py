"""The campaign's stored human-judgment analysis: what the background analysis computed with the
campaign's analysis setting, and whether it still describes the campaign.

The app that runs the background analysis and keeps its results (``metrics``) registers the
reader here when Django starts (``stored_reader_register`` in its ``AppConfig.ready``): the
analysis pages read stored results without importing the app above them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from annotation.analysis.results import CampaignAnalysis
from annotation.models import Campaign


@dataclass(frozen=True)
class StoredAnalysis:
    """The newest stored analysis of a campaign.

    Attributes:
        analysis: the result, with the settings it was computed with; None when nothing is
            stored yet but a job is computing it.
        computed: when its job stored it.
        fresh: computed from the campaign's judgments, decisions and analysis setting as they
            are now.
        recomputing: a queued or running job is computing them as they are now.
        job_id: the job that stored it (the pages notice a newer one by it).
    """

    analysis: CampaignAnalysis | None
    computed: datetime | None
    fresh: bool
    recomputing: bool
    job_id: str


StoredReader = Callable[[Campaign], StoredAnalysis | None]

_readers: list[StoredReader] = []


def stored_reader_register(reader: StoredReader) -> None:
    """Make ``reader`` the one that finds a campaign's stored analysis (a later call
    replaces an earlier one)."""
    _readers[:] = [reader]


def campaign_analysis_stored(*, campaign: Campaign) -> StoredAnalysis | None:
    """The campaign's newest stored analysis; None when there is none and none is being
    computed (or no reader is registered)."""
    return _readers[0](campaign) if _readers else None
