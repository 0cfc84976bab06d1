"""A human translation rated as a system (``System.human``: Google's ``ref-A``, WMT's
``Human-B``) is ranked by the human analysis like any system, but left out of the metric–human
correlations, which name it; the dashboard says so.

The demo's data and protocols, judged by its simulated raters, with one of its four systems
flagged human before the real pipeline runs in this process."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from scipy import stats as sps

from annotation.analysis.results import HumanDocument
from annotation.models import System
from metrics.documents import CorrelationsDocument
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def test_a_human_system_is_ranked_but_left_out_of_the_correlations(client: Any) -> None:
    owner = make_user("human-sys-owner", organizer=True)
    campaign = make_judged_demo_campaign(owner=owner)
    systems = list(System.objects.filter(campaign=campaign).order_by("name"))
    human = systems[0]
    System.objects.filter(pk=human.pk).update(human=True)
    job = analysis_run_sync(campaign=campaign, user=owner, metrics=("bleu", "chrf"))
    docs = {r.kind: r.data for r in AnalysisResult.objects.filter(job=job)}
    correlations = CorrelationsDocument.from_json(docs[AnalysisResult.Kind.CORRELATIONS])
    assert [(s.id, s.name) for s in correlations.human_systems_left_out] == [(human.pk, human.name)]
    analysis = HumanDocument.read(docs[AnalysisResult.Kind.HUMAN]).analysis
    ranked = {
        (c.config_id, c.criterion): {s.system_id for s in c.systems if s.position > 0}
        for c in analysis.criteria
    }
    n_system_level = 0
    for crit in correlations.criteria:
        # The human analysis ranks it like any system.
        assert human.pk in ranked[(crit.config_id, crit.criterion)]
        for metric in crit.metrics:
            if metric.system is None:
                continue
            n_system_level += 1
            points = metric.system.points
            assert {p.system_id for p in points} == ranked[(crit.config_id, crit.criterion)] - {
                human.pk
            }
            assert metric.system.n == len(points) == len(systems) - 1
            r = sps.pearsonr([p.human for p in points], [p.metric for p in points]).statistic
            assert metric.system.pearson.value == pytest.approx(r, abs=1e-9)
    assert n_system_level > 0
    client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert f"rated as systems: {human.name}." in page
