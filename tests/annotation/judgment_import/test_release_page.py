"""The page "New campaign from a release": an organizer's Google MQM TSV becomes a campaign
with its judgments, and the browser lands on its analysis; a refused file shows its problems
by line and leaves no campaign; someone who may not organize campaigns is refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign, JudgmentValue
from tests.factories import PASSWORD, make_user
from tests.support.google_mqm_release import HEADER, TARGETS, tsv

pytestmark = pytest.mark.django_db

URL = reverse("campaign_from_release")


def _post(client: Any, content: bytes, name: str = "TED en-de") -> Any:
    upload = SimpleUploadedFile("mqm_ted_ende.tsv", content)
    return client.post(URL, {"campaign_name": name, "file": upload, "source_language": "en"})


def test_an_organizer_creates_the_campaign_and_lands_on_its_analysis(client: Any) -> None:
    owner = make_user("page-owner", organizer=True)
    client.login(username=owner.username, password=PASSWORD)
    listing = client.get(reverse("campaign_list")).content.decode()
    assert f'href="{URL}"' in listing
    assert client.get(URL).status_code == 200
    answer = _post(client, tsv().content)
    campaign = Campaign.objects.get()
    assert answer.status_code == 302
    assert answer["Location"] == reverse("campaign_analysis", args=[campaign.pk])
    assert (campaign.name, campaign.owner, campaign.source_language) == ("TED en-de", owner, "en")
    values = JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign)
    assert values.count() == 17


def test_a_refused_file_shows_its_problems_and_creates_nothing(client: Any) -> None:
    make_user("page-owner", organizer=True)
    client.login(username="page-owner", password=PASSWORD)
    bad = HEADER.encode() + b"\nref-A\td\t1\tx\tr\ts\tt\tStyle\tMinor\t\n"
    answer = _post(client, bad)
    assert answer.status_code == 400
    assert "seg_id &#x27;x&#x27; is not a line number" in answer.content.decode()
    assert not Campaign.objects.exists()


def test_someone_who_may_not_organize_is_refused(client: Any) -> None:
    make_user("annotator")
    client.login(username="annotator", password=PASSWORD)
    assert client.get(URL).status_code == 403
    assert _post(client, tsv().content).status_code == 403
    assert not Campaign.objects.exists()


def test_the_campaign_page_marks_the_human_systems(client: Any) -> None:
    owner = make_user("page-owner", organizer=True)
    client.login(username=owner.username, password=PASSWORD)
    _post(client, tsv().content)
    campaign = Campaign.objects.get()
    page = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    marked = {name for name in TARGETS if f'{name} <span class="tag human-system"' in page}
    assert marked == {"ref-A", "Human-B"}


def test_the_preview_shows_what_the_release_builds_and_keeps_nothing(client: Any) -> None:
    make_user("page-owner", organizer=True)
    client.login(username="page-owner", password=PASSWORD)
    upload = SimpleUploadedFile("mqm_ted_ende.tsv", tsv().content)
    answer = client.post(URL, {"campaign_name": "TED en-de", "file": upload, "preview": "1"})
    html = answer.content.decode()
    assert answer.status_code == 200, html[:2000]
    assert 'id="release-preview"' in html
    assert 'id="import-checks"' in html
    assert html.count('class="import-sample"') == 3
    # A system's very text, as the annotators saw it, and the human system marked.
    assert any(text in html for texts in TARGETS.values() for text in texts)
    assert "ref-A · human" in html
    assert not Campaign.objects.exists()


def test_the_api_dry_run_answers_the_preview_and_keeps_nothing(client: Any) -> None:
    owner = make_user("page-owner", organizer=True)
    client.login(username=owner.username, password=PASSWORD)
    upload = SimpleUploadedFile("mqm_ted_ende.tsv", tsv().content)
    answer = client.post(
        reverse("api-campaign-from-release"),
        {"file": upload, "campaign_name": "TED", "dry_run": "true"},
    )
    assert answer.status_code == 200, answer.content[:2000]
    body = answer.json()
    assert body["judgments"]["judgments"] == 17
    assert len(body["judgments"]["samples"]) == 3
    assert {"name": "ref-A", "human": True} in body["systems"]
    assert body["segments"] > 0
    assert not Campaign.objects.exists()
