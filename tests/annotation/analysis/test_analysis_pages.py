"""The analysis pages and API: who may open what (owner, co-organizer, annotator, another
organizer, anonymous), the page's tables, include/exclude decisions with a reason, escaping."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.services import annotator_pseudonyms_ensure
from annotation.models import AnnotatorDecision, JudgmentImport
from evalcore.human import synthetic_scores
from tests.analysis_factories import build_judged_campaign
from tests.factories import PASSWORD, imports_run_queued

pytestmark = pytest.mark.django_db

ROLES = ["owner", "co_organizer", "annotator", "other_organizer", "anonymous"]
PAGE_STATUS = {
    "owner": 200,
    "co_organizer": 200,
    "annotator": 403,  # not an organizer at all
    "other_organizer": 404,  # an organizer, but the campaign is not theirs: no leak
    "anonymous": 302,
}
API_STATUS = {**PAGE_STATUS, "anonymous": 401}


@pytest.fixture
def judged(owner, co_organizer, annotator):  # type: ignore[no-untyped-def]
    table = synthetic_scores(
        n_annotators=4, n_systems=3, n_segments=20, tasks_per_annotator=2, careless=[3], seed=4
    ).judgments
    built = build_judged_campaign(
        owner=owner,
        judgments=table,
        system_names=["<b>bold</b>", "plain", "x&y"],
        campaign_name="Judged <i>campaign</i>",
    )
    built.campaign.organizers.add(co_organizer)
    built.campaign.annotators.add(annotator)
    return built


PAGES = [
    ("campaign_analysis", []),
    ("campaign_judgment_import", []),
    ("campaign_report_judgments", ["csv"]),
    ("campaign_report_systems", ["tex"]),
    ("campaign_report_annotators", []),
]
API = [
    ("api-campaign-analysis", [], "application/json"),
    ("api-campaign-report-judgments", ["jsonl"], "application/x-ndjson"),
    ("api-campaign-report-systems", ["tex"], "text/csv"),  # files answer any Accept header
    ("api-campaign-report-annotators", [], "*/*"),
]


@pytest.mark.parametrize(("page", "extra"), PAGES)
@pytest.mark.parametrize("role", ROLES)
def test_analysis_pages_open_only_for_owner_and_co_organizers(
    as_role, campaign, page, extra, role
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse(page, args=[campaign.pk, *extra]))
    assert response.status_code == PAGE_STATUS[role]
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(("endpoint", "extra", "accept"), API)
@pytest.mark.parametrize("role", ROLES)
def test_analysis_api_answers_only_owner_and_co_organizers(
    as_role, campaign, endpoint, extra, accept, role
) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse(endpoint, args=[campaign.pk, *extra]), HTTP_ACCEPT=accept)
    assert response.status_code == API_STATUS[role]


@pytest.mark.parametrize("role", ROLES)
def test_decisions_and_imports_are_refused_to_outsiders(as_role, judged, role) -> None:  # type: ignore[no-untyped-def]
    client = as_role(role)
    campaign = judged.campaign
    target = judged.users[0]
    page = client.post(
        reverse("campaign_analysis_decision", args=[campaign.pk]),
        {"annotator": target.pk, "action": "exclude", "reason": "r"},
    )
    upload = io.BytesIO(b"annotator\tsystem\tsegment\ttype\tscore\nw\tplain\t1\tSYSTEM\t50\n")
    upload.name = "a.tsv"
    imported = client.post(
        reverse("campaign_judgment_import", args=[campaign.pk]),
        {"file": upload, "file_format": "auto", "protocol": "direct_assessment", "line_base": 1},
    )
    api_decision = client.post(
        reverse("api-campaign-annotator-decisions", args=[campaign.pk]),
        {"annotator": target.username, "action": "exclude", "reason": "r"},
        content_type="application/json",
    )
    upload.seek(0)
    api_import = client.post(
        reverse("api-campaign-judgment-imports", args=[campaign.pk]), {"file": upload}
    )
    allowed = role in ("owner", "co_organizer")
    assert page.status_code == (302 if allowed else PAGE_STATUS[role])
    assert imported.status_code == (302 if allowed else PAGE_STATUS[role])
    assert api_decision.status_code == (200 if allowed else API_STATUS[role])
    assert api_import.status_code == (202 if allowed else API_STATUS[role])
    imports_run_queued()
    assert AnnotatorDecision.objects.filter(campaign=campaign).exists() == allowed
    assert JudgmentImport.objects.filter(campaign=campaign).count() == (2 if allowed else 0)


def login(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_the_page_shows_qc_rankings_agreement_and_downloads_escaped(judged, owner) -> None:  # type: ignore[no-untyped-def]
    response = login(owner).get(reverse("campaign_analysis", args=[judged.campaign.pk]))
    page = response.content.decode()
    assert "<b>bold</b>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "x&amp;y" in page
    assert "<i>campaign</i>" not in page
    assert 'class="badge qc-failed"' in page  # the careless annotator
    assert page.count('class="badge qc-passed"') == 3
    assert "inter-annotator α (interval)" in page
    for name in ("campaign_report_judgments", "campaign_report_systems"):
        assert reverse(name, args=[judged.campaign.pk, "csv"]) in page
    assert reverse("campaign_report_annotators", args=[judged.campaign.pk]) in page
    assert "judge03" in page  # organizers see usernames on the page
    assert "A004" in page  # and the pseudonyms the reports use


def test_the_interval_columns_name_the_chosen_confidence_level(judged, owner) -> None:  # type: ignore[no-untyped-def]
    url = reverse("campaign_analysis", args=[judged.campaign.pk])
    client = login(owner)
    page = client.get(url).content.decode()
    assert "95% CI (t)" in page
    assert "95% CI (bootstrap)" in page
    page = client.get(url, {"confidence": "0.8", "resamples": "100"}).content.decode()
    assert "errorlist" not in page
    assert "80% CI (t)" in page
    assert "80% CI (bootstrap)" in page
    assert "95% CI" not in page


def test_the_campaign_page_links_to_the_analysis(judged, owner) -> None:  # type: ignore[no-untyped-def]
    page = login(owner).get(reverse("campaign_detail", args=[judged.campaign.pk]))
    assert reverse("campaign_analysis", args=[judged.campaign.pk]) in page.content.decode()


def test_an_organizer_excludes_and_includes_an_annotator_with_a_reason(judged, owner) -> None:  # type: ignore[no-untyped-def]
    client = login(owner)
    campaign = judged.campaign
    careless, diligent = judged.users[3], judged.users[0]
    url = reverse("campaign_analysis_decision", args=[campaign.pk]) + "?seed=9"
    response = client.post(url, {"annotator": diligent.pk, "action": "exclude", "reason": ""})
    assert response.status_code == 302
    assert not AnnotatorDecision.objects.exists()  # a decision needs a reason
    response = client.post(
        url, {"annotator": diligent.pk, "action": "exclude", "reason": "<script>bad</script>"}
    )
    assert response["Location"] == reverse("campaign_analysis", args=[campaign.pk]) + "?seed=9"
    client.post(url, {"annotator": careless.pk, "action": "include", "reason": "checked by hand"})
    decisions = {d.annotator_id: d for d in AnnotatorDecision.objects.filter(campaign=campaign)}
    assert decisions[diligent.pk].included is False
    assert decisions[diligent.pk].decided_by == owner
    assert decisions[careless.pk].included is True
    page = client.get(response["Location"]).content.decode()
    assert "<script>bad</script>" not in page
    assert "&lt;script&gt;bad&lt;/script&gt;" in page
    assert page.count("(by decision)") == 2
    client.post(url, {"annotator": careless.pk, "action": "clear"})
    assert not AnnotatorDecision.objects.filter(annotator=careless).exists()
    # Someone without judgments in this campaign cannot be decided on.
    client.post(url, {"annotator": owner.pk, "action": "exclude", "reason": "x"})
    assert not AnnotatorDecision.objects.filter(annotator=owner).exists()


def test_the_api_takes_decisions_by_pseudonym_and_hides_usernames(judged, owner) -> None:  # type: ignore[no-untyped-def]
    client = login(owner)
    campaign = judged.campaign
    annotator_pseudonyms_ensure(campaign=campaign)
    url = reverse("api-campaign-annotator-decisions", args=[campaign.pk])
    response = client.post(
        url,
        {"annotator": "A004", "action": "include", "reason": "kept"},
        content_type="application/json",
    )
    assert response.json() == {"annotator": "A004", "included": True, "reason": "kept"}
    missing = client.post(
        url, {"annotator": "A004", "action": "exclude"}, content_type="application/json"
    )
    assert missing.status_code == 400
    assert "reason" in missing.json()
    unknown = client.post(
        url,
        {"annotator": "nobody", "action": "exclude", "reason": "x"},
        content_type="application/json",
    )
    assert unknown.status_code == 400
    analysis = client.get(reverse("api-campaign-analysis", args=[campaign.pk])).json()
    [criterion] = analysis["criteria"]
    careless = next(a for a in criterion["annotators"] if a["pseudonym"] == "A004")
    assert careless["qc_status"] == "failed"
    assert careless["included"] is True
    assert "username" not in careless
    named = client.get(reverse("api-campaign-analysis", args=[campaign.pk]), {"names": "real"})
    assert named.json()["criteria"][0]["annotators"][3]["username"] == "judge03"


@pytest.mark.parametrize(
    ("n_annotators", "phrase"), [(1, "by 1 annotator on"), (2, "by 2 annotators on")]
)
def test_the_page_counts_annotators_in_words_that_agree(owner, n_annotators, phrase) -> None:  # type: ignore[no-untyped-def]
    table = synthetic_scores(
        n_annotators=n_annotators, n_systems=2, n_segments=10, tasks_per_annotator=1, seed=3
    ).judgments
    built = build_judged_campaign(owner=owner, judgments=table, system_names=["a", "b"])
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("campaign_analysis", args=[built.campaign.pk])).content.decode()
    assert phrase in page
