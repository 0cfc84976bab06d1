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
from annotation.campaigns.selectors import campaign_inputs_stamp, content_hash
from annotation.campaigns.services import campaign_data_import
from annotation.models import Run, System
from metrics import pipeline
from metrics.documents import CorrelationsDocument
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_campaign, make_user, plain_files

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


def test_flagging_a_system_human_changes_the_fingerprint_and_nothing_else_does() -> None:
    owner = make_user("fingerprint-owner", organizer=True)
    campaign = make_campaign(owner=owner)
    campaign_data_import(campaign=campaign, files=plain_files(), user=owner)
    params = pipeline.analysis_params(campaign=campaign)
    # Without human systems the hash is the one of the runs' (id, system) pairs, as before.
    runs = Run.objects.filter(system__campaign=campaign).order_by("pk")
    before = content_hash(
        {
            "params": params,
            **campaign_inputs_stamp(campaign=campaign),
            "runs": list(runs.values_list("pk", "system_id")),
        }
    )
    assert pipeline.campaign_fingerprint(campaign=campaign, params=params) == before
    System.objects.filter(pk=runs[0].system_id).update(human=True)
    assert pipeline.campaign_fingerprint(campaign=campaign, params=params) != before
