"""The campaign's own human scores as the human side of a meta-evaluation: every criterion of
the stored human analysis is offered, its system scores are the stored document's, and the
table computed from them against an uploaded metric file is scipy's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import reverse
from scipy import stats as sps

from annotation.models import Campaign, System
from metrics.metaeval.sources import campaign_human_sources
from metrics.models import AnalysisResult
from tests.dashboard_factories import analysis_run_sync, make_judged_demo_campaign
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def judged(django_db_setup, django_db_blocker) -> Iterator[Campaign]:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock(), transaction.atomic():
        owner = make_user("meta-campaign-owner", organizer=True)
        campaign = make_judged_demo_campaign(owner=owner, items_per_task=10)
        analysis_run_sync(campaign=campaign, user=owner)
        yield campaign
        transaction.set_rollback(True)


def stored_scores(campaign: Campaign) -> dict[str, dict[str, float]]:
    """Per criterion key, the stored human document's ranked systems' scores, read raw."""
    data = AnalysisResult.objects.get(campaign=campaign, kind="human").data
    found = {}
    for criterion in data["analysis"]["criteria"]:
        scores = {
            s["name"]: s["score"] if s["score"] is not None else s["expected_wins"]
            for s in criterion["systems"]
            if s["position"] > 0
        }
        found[f"{criterion['config_id']}:{criterion['criterion']}"] = scores
    return found


def test_every_scored_criterion_is_a_source_with_the_stored_scores(judged):
    sources = campaign_human_sources(campaign=judged)
    stored = stored_scores(judged)
    assert {s.key: s.scores for s in sources} == {k: v for k, v in stored.items() if v}
    assert len(sources) >= 2


def test_the_table_against_a_criterion_is_scipys(judged):
    source = campaign_human_sources(campaign=judged)[0]
    names = list(System.objects.filter(campaign=judged).values_list("name", flat=True))
    metric = {name: float(i * i % 7) + 0.5 * i for i, name in enumerate(sorted(names))}
    text = "".join(f"{name}\t{value!r}\n" for name, value in metric.items())
    client = Client()
    assert client.login(username="meta-campaign-owner", password=PASSWORD)
    page = client.get(reverse("campaign_meta_evaluation", args=[judged.pk])).content.decode()
    assert f'value="{source.key}"' in page
    response = client.post(
        reverse("api-meta-evaluation", args=[judged.pk]),
        {
            "human_source": source.key,
            "metrics": [SimpleUploadedFile("toy.sys.score", text.encode())],
            "cluster_test": "williams",
        },
    )
    assert response.status_code == 200, response.content
    result = response.json()
    systems = result["systems"]
    assert sorted(systems) == sorted(source.scores)
    assert result["rows"][0]["pearson"] == pytest.approx(
        sps.pearsonr([source.scores[s] for s in systems], [metric[s] for s in systems]).statistic,
        abs=1e-12,
    )


def test_neither_a_file_nor_a_criterion_is_refused(judged):
    client = Client()
    assert client.login(username="meta-campaign-owner", password=PASSWORD)
    response = client.post(
        reverse("api-meta-evaluation", args=[judged.pk]),
        {"metrics": [SimpleUploadedFile("toy.sys.score", b"a\t1\n")], "cluster_test": "williams"},
    )
    assert response.status_code == 400
    assert "Upload the human scores" in response.json()["non_field_errors"][0]
