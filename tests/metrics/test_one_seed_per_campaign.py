"""A campaign has one seed and one resample count: set once, through the API or the metric
settings' form, the human analysis and the metric analysis both run with them, and every stored
result says so (the job's params, the metric signatures, the human method, the correlations)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.results import HumanDocument
from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.models import Campaign
from metrics import pipeline
from metrics.models import AnalysisJob, AnalysisResult
from tests.dashboard_factories import analysis_job_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged() -> tuple[Campaign, Client]:
    owner = make_user("one-seed-owner", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
    ms = pipeline.metric_settings(campaign.pk)
    ms.metrics, ms.ar_trials = ["bleu", "chrf"], 50
    ms.save()
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    return campaign, client


def _analysed(campaign: Campaign) -> dict[str, Any]:
    """The background analysis run here with the campaign's settings as stored: its params and
    documents by kind."""
    campaign = Campaign.objects.get(pk=campaign.pk)  # as a worker reads it
    params = pipeline.analysis_params(campaign=campaign)
    job = analysis_job_run_sync(
        AnalysisJob.objects.create(
            campaign=campaign,
            fingerprint=pipeline.campaign_fingerprint(campaign=campaign, params=params),
            params=params,
            dispatched=True,
        )
    )
    assert job.status == AnalysisJob.Status.DONE, job.error
    documents = {r.kind: r.data for r in AnalysisResult.objects.filter(job=job)}
    return {"params": job.params, **documents}


def _used(stored: dict[str, Any]) -> set[tuple[str, int | None, int]]:
    """Every (where, resamples, seed) the stored results record."""
    used: set[tuple[str, int | None, int]] = {
        ("job", stored["params"]["resamples"], stored["params"]["seed"])
    }
    for metric in stored["metrics"]["metrics"]:
        fields = dict(part.split(":", 1) for part in metric["signature"].split("|")[1:])
        used.add(("signature", int(fields["bs"]), int(fields["seed"])))
    analysis = HumanDocument.from_json(stored["human"]).analysis
    used.add(("human settings", analysis.settings.resamples, analysis.settings.seed))
    for criterion in analysis.criteria:
        # A ranking criterion resamples by TrueSkill runs, not by the count (None here).
        used.add((f"human {criterion.kind}", criterion.method.resamples, criterion.method.seed))
    correlations = stored["correlations"]["params"]
    used.add(("correlations", correlations["resamples"], correlations["seed"]))
    return used


RESAMPLED = {"job", "signature", "human settings", "human scores", "correlations"}


def _everywhere(resamples: int, seed: int) -> set[tuple[str, int | None, int]]:
    return {(where, resamples, seed) for where in RESAMPLED} | {("human ranking", None, seed)}


def test_set_once_through_the_api_both_analyses_use_them(judged: tuple[Campaign, Client]) -> None:
    campaign, client = judged
    response = client.put(
        reverse("api-campaign-analysis-settings", args=[campaign.pk]),
        {"resamples": 60, "seed": 77},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert _used(_analysed(campaign)) == _everywhere(60, 77)


def test_set_once_through_the_metric_settings_form_both_analyses_use_them(
    judged: tuple[Campaign, Client],
) -> None:
    campaign, client = judged
    response = client.post(
        reverse("analysis_settings", args=[campaign.pk]),
        {"metrics": ["bleu", "chrf"], "tokenize": "13a", "ar_trials": 50, "resamples": 70},
    )
    assert response.status_code == 400  # the seed too: the form shows and saves both
    response = client.post(
        reverse("analysis_settings", args=[campaign.pk]),
        {
            "metrics": ["bleu", "chrf"],
            "tokenize": "13a",
            "ar_trials": 50,
            "resamples": 70,
            "seed": 78,
        },
    )
    assert response.status_code == 302
    campaign.refresh_from_db()
    setting = campaign_analysis_settings(campaign=campaign)
    assert (setting.resamples, setting.seed) == (70, 78)
    # The analysis page's own computation reads the same setting.
    shown = campaign_analysis_compute(campaign=campaign, settings=setting)
    assert {c.method.seed for c in shown.criteria} == {78}
    assert _used(_analysed(campaign)) == _everywhere(70, 78)
    # And the form shows them back from where they live.
    page = client.get(reverse("analysis_settings", args=[campaign.pk])).content.decode()
    assert 'name="resamples" value="70"' in page
    assert 'name="seed" value="78"' in page


def test_the_analysis_page_shows_the_one_setting_to_explore_and_save(
    judged: tuple[Campaign, Client],
) -> None:
    campaign, client = judged
    url = reverse("campaign_analysis", args=[campaign.pk])
    page = client.get(url).content.decode()
    assert 'name="resamples"' in page
    assert 'name="trueskill_runs"' in page
    assert "n_bootstrap" not in page
    assert "ranking_bootstrap" not in page
