"""The dashboard's metric settings offer sacreBLEU's options for BLEU, chrF and TER; the
background analysis scores with them, and its corpus scores equal sacreBLEU's with the same
options. Settings at sacreBLEU's defaults leave the analysis parameters (and so the stored
results' freshness) as they were."""

from __future__ import annotations

from typing import Any

import pytest
import sacrebleu
from django.test import Client
from django.urls import reverse

from annotation.models import Segment, Translation
from metrics import pipeline
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, make_rich_campaign

pytestmark = pytest.mark.django_db


def test_settings_at_the_defaults_add_nothing_to_the_parameters(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner)
    params = pipeline.analysis_params(campaign=campaign)
    assert "sacrebleu" not in params


def test_the_metric_settings_options_give_sacrebleus_scores(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner)
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    form = {
        "metrics": ["bleu", "chrf", "ter"],
        "tokenize": "13a",
        "smooth_method": "floor",
        "smooth_value": "0.3",
        "chrf_char_order": "4",
        "chrf_word_order": "2",
        "chrf_beta": "1",
        "chrf_whitespace": "on",
        "ter_case_sensitive": "on",
        "ter_no_punct": "on",
        "resamples": "20",
        "ar_trials": "20",
        "seed": "1",
    }
    saved = client.post(reverse("analysis_settings", args=[campaign.pk]), form)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    params = pipeline.analysis_params(campaign=campaign)
    assert params["sacrebleu"] == {
        "smooth_method": "floor",
        "smooth_value": 0.3,
        "chrf_char_order": 4,
        "chrf_word_order": 2,
        "chrf_beta": 1,
        "chrf_whitespace": True,
        "ter_case_sensitive": True,
        "ter_no_punct": True,
    }
    job = analysis_run_sync(
        campaign=campaign, metrics=("bleu", "chrf", "ter"), resamples=20, ar_trials=20
    )
    doc = AnalysisResult.objects.get(job=job, kind="metrics").data
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    # Every reference set of the campaign (it has two), as the analysis scores against them.
    refs = [[s.references.get(index=i).text for s in segments] for i in (0, 1)]
    expected = {
        "bleu": sacrebleu.BLEU(smooth_method="floor", smooth_value=0.3),
        "chrf": sacrebleu.CHRF(char_order=4, word_order=2, beta=1, whitespace=True),
        "ter": sacrebleu.TER(case_sensitive=True, no_punct=True),
    }
    checked = 0
    for entry in doc["metrics"]:
        made = expected[entry["key"]]
        for system in entry["systems"]:
            for run in system["runs"]:
                hyps = [Translation.objects.get(run_id=run["id"], segment=s).text for s in segments]
                theirs = made.corpus_score(hyps, refs).score
                assert run["score"] == pytest.approx(theirs, abs=1e-9), (entry["key"], run)
                checked += 1
    assert checked >= 3 * 4
