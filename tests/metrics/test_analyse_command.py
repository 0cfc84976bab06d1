"""``manage.py analyse``: a campaign's background analysis in this process, the same results a
worker stores, and nothing done when they are current."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.demo.campaign import DEMO_CAMPAIGN_NAME
from annotation.models import Campaign
from metrics.models import AnalysisJob, AnalysisResult
from metrics.queries import dashboard_status

pytestmark = pytest.mark.django_db


def test_analyse_stores_the_demos_results_once() -> None:
    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get(name=DEMO_CAMPAIGN_NAME)
    assert dashboard_status(campaign=campaign)["has_results"] is False

    out = StringIO()
    call_command("analyse", "--demo", stdout=out)
    assert "results stored in" in out.getvalue()
    status = dashboard_status(campaign=campaign)
    assert status["has_results"] is True
    assert status["stale"] is False
    [job] = AnalysisJob.objects.filter(campaign=campaign)
    assert job.status == AnalysisJob.Status.DONE
    assert set(AnalysisResult.objects.filter(job=job).values_list("kind", flat=True)) == {
        "metrics",
        "human",
        "correlations",
    }

    again = StringIO()
    call_command("analyse", str(campaign.pk), stdout=again)
    assert "the stored results are up to date" in again.getvalue()
    assert AnalysisJob.objects.filter(campaign=campaign).count() == 1


def test_analyse_names_what_it_cannot_find() -> None:
    with pytest.raises(CommandError, match="no such campaign"):
        call_command("analyse", "00000000-0000-4000-8000-000000000000", stdout=StringIO())
    with pytest.raises(CommandError, match="--demo"):
        call_command("analyse", stdout=StringIO())
