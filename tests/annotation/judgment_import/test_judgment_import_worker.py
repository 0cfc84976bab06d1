"""Judgment imports on a real Celery worker process, PostgreSQL and Redis: a file uploaded on
the import page is imported by the worker, with the judgments a direct import stores, and a
refused file ends with its problems and nothing stored."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import JudgmentImport, JudgmentImportJob, JudgmentValue
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD, record_once_ended
from tests.support.judgment_files import N_SEGMENTS, SYSTEMS, evalsite_file, make_rows
from tests.support.judgment_import import database_snapshot

pytestmark = pytest.mark.django_db(transaction=True)

FORM = {"file_format": "auto", "protocol": "direct_assessment", "line_base": 1}


def upload(client: Client, url: str, name: str, body: bytes) -> JudgmentImportJob:
    file = io.BytesIO(body)
    file.name = name
    response = client.post(url, {"file": file, **FORM})
    assert response.status_code == 302, response.content
    job_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    job: JudgmentImportJob = record_once_ended(
        JudgmentImportJob, job_id, ended=lambda job: not job.active, timeout=120
    )
    return job


def test_a_worker_imports_the_file_uploaded_on_the_page(celery_worker_process, owner: Any) -> None:  # type: ignore[no-untyped-def]
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    celery_worker_process()
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("campaign_judgment_import", args=[campaign.pk])

    before = database_snapshot()
    bad = b"annotator\tsystem\tsegment\ttype\tscore\nw\tnmt\t99\tSYSTEM\t50\n"
    refused = upload(client, url, "bad.tsv", bad)
    assert refused.status == JudgmentImportJob.Status.FAILED
    assert [(p["file"], p["line"]) for p in refused.problems] == [("bad.tsv", 2)]
    assert database_snapshot() == before

    job = upload(client, url, "past.tsv", evalsite_file(make_rows()))
    assert job.status == JudgmentImportJob.Status.DONE, (job.error, job.problems)
    record = JudgmentImport.objects.get(campaign=campaign)
    assert job.result_id == record.pk
    assert record.summary["judgments"] == 120
    assert JudgmentValue.objects.filter(judgment__item__task__config=record.config).count() == 120
    page = client.get(reverse("campaign_judgment_import_job", args=[campaign.pk, job.pk]))
    assert "Imported 120 judgments of 3 annotators" in page.content.decode()
