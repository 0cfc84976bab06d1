"""Row counts of every annotation model (and users), to compare around a failed judgment import
(the import's own record, a :class:`JudgmentImportJob` kept to show how it ended, is left out),
and a judgment file sent through the API and through the import page, with what became of it."""

from __future__ import annotations

import io
from collections.abc import Callable

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Campaign
from tests.factories import imports_run_queued


def database_snapshot() -> dict[str, int]:
    counts = {
        model.__name__: model.objects.count()
        for model in apps.get_app_config("annotation").get_models()
        if model.__name__ != "JudgmentImportJob"
    }
    counts["User"] = get_user_model().objects.count()
    return counts


# What became of an upload ("stored" or "refused", at once or by its background job) and the
# problems as (file, line, message).
Answer = tuple[str, list[tuple[str, int | None, str]]]


def named_file(name: str, body: bytes) -> io.BytesIO:
    # Not a SimpleUploadedFile: the test client would read that through the class whose reads
    # the size-limit test counts.
    upload = io.BytesIO(body)
    upload.name = name
    return upload


def api_import(owner: AbstractBaseUser, campaign: Campaign, name: str, body: bytes) -> Answer:
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(owner)
    url = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    response = client.post(url, {"file": named_file(name, body)}, format="multipart")
    if response.status_code == 400:
        problems = response.json()["problems"]
        return "refused", [(p["file"], p["line"], p["message"]) for p in problems]
    assert response.status_code == 202, response.content
    imports_run_queued()
    job = client.get(response["Location"]).json()
    problems = job["problems"]
    outcome = {"done": "stored", "failed": "refused"}[job["status"]]
    return outcome, [(p["file"], p["line"], p["message"]) for p in problems]


def page_import(owner: AbstractBaseUser, campaign: Campaign, name: str, body: bytes) -> Answer:
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    url = reverse("campaign_judgment_import", args=[campaign.pk])
    form = {"file_format": "auto", "protocol": "direct_assessment", "line_base": 1}
    response = client.post(url, {"file": named_file(name, body), **form})
    if response.status_code == 400:
        return "refused", [(p.file, p.line, p.message) for p in response.context["problems"]]
    assert response.status_code == 302, response.content
    imports_run_queued()
    job = client.get(response["Location"]).context["job"]
    outcome = {"done": "stored", "failed": "refused"}[job["status"]]
    return outcome, [(p["file"], p["line"], p["message"]) for p in job["problems"]]


ENTRY_POINTS = {"api": api_import, "page": page_import}
Entry = Callable[[AbstractBaseUser, Campaign, str, bytes], Answer]


def assert_refused(
    entry: Entry,
    owner: AbstractBaseUser,
    campaign: Campaign,
    name: str,
    body: bytes,
    line: int | None,
    message: str,
) -> None:
    before = database_snapshot()
    outcome, problems = entry(owner, campaign, name, body)
    assert outcome == "refused"
    assert problems[0][:2] == (name, line)
    assert message in problems[0][2]
    assert database_snapshot() == before
