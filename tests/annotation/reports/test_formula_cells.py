"""CSV and TSV downloads never hand a spreadsheet a formula: a text cell that begins with
``= + - @``, a tab or a carriage return (a system named ``=cmd|' /c calc'!A1``) gets a leading
apostrophe, on the database's fast path and in Python alike, while numbers stay numbers."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import reverse

from annotation.reports.stream import judgment_report_stream
from evalcore.human import synthetic_scores
from evalsite.formatting import FORMULA_STARTS, formula_safe
from metrics.models import SegmentScores
from tests.analysis_factories import build_judged_campaign
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

NAMES = ["=cmd|' /c calc'!A1", "+plus", "-minus", "@at"]
SAFE = {name: "'" + name for name in NAMES}


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_a_text_that_starts_like_a_formula_gets_an_apostrophe(start: str) -> None:
    assert formula_safe(f"{start}1+1") == f"'{start}1+1"


def test_other_texts_are_left_alone() -> None:
    for text in ("nmt-large", "'quoted", "", "A=1", "—dash", "1-2"):
        assert formula_safe(text) == text


@pytest.fixture
def campaign(owner: AbstractBaseUser) -> Any:
    judgments = synthetic_scores(
        n_annotators=3, n_systems=4, n_segments=12, tasks_per_annotator=1, seed=3
    ).judgments
    built = build_judged_campaign(
        owner=owner,
        judgments=judgments,
        system_names=NAMES,
        usernames=["=rater", "rater-b", "rater-c"],
    )
    return built.campaign


def _rows(text: str, delimiter: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text), delimiter=delimiter))


@pytest.mark.parametrize("python_text", [False, True])
@pytest.mark.parametrize(("file_format", "delimiter"), [("csv", ","), ("tsv", "\t")])
def test_the_judgment_report_neutralises_formulas_and_keeps_numbers(
    campaign: Any, python_text: bool, file_format: str, delimiter: str
) -> None:
    text = b"".join(
        judgment_report_stream(
            campaign=campaign, file_format=file_format, real_names=True, python_text=python_text
        )
    ).decode()
    rows = _rows(text, delimiter)
    assert {row["system"] for row in rows} <= {*SAFE.values(), ""}
    assert {row["system"] for row in rows} >= set(SAFE.values())
    assert "'=rater" in {row["annotator"] for row in rows}
    # Negative z-scores are numbers, written as such.
    negative = [row["z"] for row in rows if row["z"].startswith("-")]
    assert negative
    assert all(float(z) < 0 for z in negative)


def test_the_fast_path_and_python_write_the_same_bytes(campaign: Any) -> None:
    for file_format in ("csv", "tsv"):
        fast = b"".join(judgment_report_stream(campaign=campaign, file_format=file_format))
        slow = b"".join(
            judgment_report_stream(campaign=campaign, file_format=file_format, python_text=True)
        )
        assert fast == slow


def test_the_system_report_and_segment_scores_neutralise_formulas(
    campaign: Any, owner: AbstractBaseUser
) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    report = client.get(
        reverse("campaign_report_systems", args=[campaign.pk, "csv"]), {"resamples": "50"}
    )
    rows = _rows(report.content.decode(), ",")
    assert {row["system"] for row in rows} == set(SAFE.values())
    assert any(row["score"].startswith("-") and float(row["score"]) < 0 for row in rows)

    analysis_run_sync(campaign=campaign, metrics=("bleu",), resamples=20, ar_trials=20)
    assert SegmentScores.objects.filter(job__campaign=campaign).exists()
    response = client.get(
        reverse("api-segment-scores", args=[campaign.pk]), {"metric": "bleu", "output": "csv"}
    )
    segments = _rows(b"".join(response.streaming_content).decode(), ",")
    assert {row["system"] for row in segments} == set(SAFE.values())
