"""A judgments layout registered by the test suite alone is read like the shipped ones: the
import page offers it, detection finds it, and the API imports its rows. No module of EvalSite
names it: a new layout is one object behind ``annotation.judgment_import.layout.JudgmentFormat``
and one entry in ``annotation.judgment_import.formats.JUDGMENT_FORMATS``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import import formats
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.rows import SYSTEM, ImportRow, ParsedJudgments, Problems
from annotation.models import Campaign, JudgmentImport, JudgmentValue
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD, imports_run_queued

pytestmark = pytest.mark.django_db

MAGIC = "#pipes"


def looks_like_pipes(name: str, lines: list[str], first: int) -> bool:
    return lines[first].strip() == MAGIC


def parse_pipes(name: str, lines: list[str], first: int) -> ParsedJudgments:
    """``annotator|system|segment|score`` after the magic line."""
    problems = Problems(name)
    rows = []
    for index in range(first + 1, len(lines)):
        if not lines[index].strip():
            continue
        fields = lines[index].strip().split("|")
        if len(fields) != 4:
            problems.add(index + 1, f"{len(fields)} fields; a pipes row has 4")
            continue
        annotator, system, segment, score = fields
        rows.append(ImportRow(index + 1, annotator, system, segment, SYSTEM, float(score)))
    problems.raise_if_any()
    if not rows:
        raise UploadError([UploadProblem(name, None, "no rows")])
    return ParsedJudgments(name, "pipes", rows, has_items=False)


PIPES = JudgmentFormat(
    key="pipes", label="Pipes (a test layout)", looks_like=looks_like_pipes, parse=parse_pipes
)

# Each system's score on every segment: what the import must store.
SCORES = {"nmt": 80.0, "pbmt": 55.0}


@pytest.fixture
def pipes(monkeypatch: pytest.MonkeyPatch) -> JudgmentFormat:
    monkeypatch.setattr(formats, "JUDGMENT_FORMATS", (*formats.JUDGMENT_FORMATS, PIPES))
    return PIPES


@pytest.fixture
def campaign(owner: Any) -> Campaign:
    made, *_ = make_text_campaign(owner=owner, n_segments=4, system_names=list(SCORES))
    return made


def _file(rows: list[str]) -> io.BytesIO:
    upload = io.BytesIO("\n".join([MAGIC, *rows, ""]).encode())
    upload.name = "past.pipes"
    return upload


def _login(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_the_import_page_offers_the_registered_layout(
    pipes: JudgmentFormat, campaign: Campaign, owner: Any
) -> None:
    page = _login(owner).get(reverse("campaign_judgment_import", args=[campaign.pk]))
    assert '<option value="pipes">Pipes (a test layout)</option>' in page.content.decode()


def test_the_api_detects_and_imports_the_registered_layout(
    pipes: JudgmentFormat, campaign: Campaign, owner: Any
) -> None:
    rows = [
        f"{annotator}|{system}|{segment}|{score:g}"
        for annotator in ("a1", "a2")
        for system, score in SCORES.items()
        for segment in range(1, 5)
    ]
    client = _login(owner)
    url = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    response = client.post(url, {"file": _file(rows)})
    assert response.status_code == 202, response.content
    imports_run_queued()
    body = client.get(response["Location"]).json()
    assert (body["status"], body["problems"]) == ("done", [])
    assert body["import"]["file_format"] == "pipes"
    assert body["import"]["summary"]["judgments"] == 16
    record = JudgmentImport.objects.get(campaign=campaign)
    stored = JudgmentValue.objects.filter(judgment__item__task__config=record.config)
    by_system: dict[str, list[float]] = {}
    for name, value in stored.values_list("output__system__name", "value"):
        by_system.setdefault(name, []).append(value)
    assert by_system == {system: [score] * 8 for system, score in SCORES.items()}


def test_a_bad_row_of_the_registered_layout_is_refused_by_its_line(
    pipes: JudgmentFormat, campaign: Campaign, owner: Any
) -> None:
    client = _login(owner)
    url = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    response = client.post(url, {"file": _file(["a1|nmt|1|80", "a1|nmt|2"])})
    assert response.status_code == 202, response.content
    imports_run_queued()
    failed = client.get(response["Location"]).json()
    assert failed["status"] == "failed"
    assert failed["problems"] == [
        {"file": "past.pipes", "line": 3, "message": "3 fields; a pipes row has 4"}
    ]
    assert not JudgmentImport.objects.filter(campaign=campaign).exists()
