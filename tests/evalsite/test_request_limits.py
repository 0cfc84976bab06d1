"""Requests over Django's limits — too many files, a form field of megabytes, a submit body of
megabytes — answer with a readable reason: JSON with ``detail`` under ``/api/``, a page saying
what was wrong elsewhere (never Django's bare "Bad Request (400)"). An empty upload file is
refused naming the file, on the page and through the API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_campaign, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


def _client(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_a_submit_body_of_megabytes_answers_json_with_the_limit(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user("big-body")
    campaign.annotators.add(annotator)
    assignment = task_assign_next(
        config=make_config(campaign, items_per_task=5), annotator=annotator
    )
    assert assignment is not None
    response = _client("big-body").post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps({"item": 1, "answer": {"1": {"adequacy": "x" * 5_000_000}}}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "too large" in response.json()["detail"]
    assert "2.5" in response.json()["detail"]


def test_a_form_field_of_megabytes_answers_a_page_with_the_reason(owner: Any) -> None:
    campaign = make_campaign(owner=owner)
    response = _client(owner.get_username()).post(
        reverse("campaign_edit", args=[campaign.pk]), {"name": "x", "description": "d" * 3_000_000}
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert 'id="bad-request-message"' in html
    assert "The request is too large" in html


def test_too_many_files_answer_with_the_limit(owner: Any, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    campaign = make_campaign(owner=owner)
    files = [SimpleUploadedFile(f"s{n}.txt", b"a\\n") for n in range(4)]
    client = _client(owner.get_username())
    page = client.post(reverse("campaign_upload", args=[campaign.pk]), {"systems": files})
    assert page.status_code == 400
    assert "more than 3 files" in page.content.decode()
    files = [SimpleUploadedFile(f"s{n}.txt", b"a\\n") for n in range(4)]
    api = client.post(f"/api/campaigns/{campaign.pk}/upload/", {"systems": files})
    assert api.status_code == 400
    assert "more than 3 files" in api.json()["detail"]


def test_an_empty_upload_file_is_refused_by_name(owner: Any) -> None:
    campaign = make_campaign(owner=owner)
    client = _client(owner.get_username())
    page = client.post(
        reverse("campaign_upload", args=[campaign.pk]),
        {"source": SimpleUploadedFile("src.txt", b"")},
    )
    assert page.status_code == 400
    assert "src.txt: The submitted file is empty." in page.content.decode()
    api = client.post(
        f"/api/campaigns/{campaign.pk}/upload/", {"source": SimpleUploadedFile("src.txt", b"")}
    )
    assert api.status_code == 400
    assert api.json() == {"source": ["src.txt: The submitted file is empty."]}
