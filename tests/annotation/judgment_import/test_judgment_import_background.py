"""Judgment imports from the upload page and the API run in the background: the request queues
a job and answers at once (the page with a redirect to the job's page, the API with 202 and the
job's URL); the job's page and its API view show it queued, its step while it runs, what it
stored, or a refused file's problems (escaped), with nothing stored; the file is dropped when the
job ends; a job that cannot be sent fails saying so; a message delivered again does nothing; a
queued job is abandoned once it has not moved for the stale time, a running one whose heartbeat
stopped fails at once, naming its step; one waiting for a retry is queued again.

The queued imports run here through the Celery task applied in this process (these tests are
about the views and services); test_judgment_import_worker.py runs them in a real worker."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.background import (
    judgment_import_fail,
    judgment_import_request,
    judgment_import_requeue,
    judgment_import_run,
    judgment_import_state,
    progress_key,
)
from annotation.judgment_import.plan import ImportOptions
from annotation.models import Campaign, JudgmentImport, JudgmentImportJob
from evalsite.jobs import heartbeat_limit
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD, imports_run_queued
from tests.support.judgment_files import (
    N_SEGMENTS,
    SYSTEMS,
    appraise_file,
    evalsite_file,
    make_rows,
)
from tests.support.judgment_import import database_snapshot

pytestmark = pytest.mark.django_db

FORM = {"file_format": "auto", "protocol": "direct_assessment", "line_base": 1}
HEADER = "annotator\tsystem\tsegment\ttype\tscore\n"


@pytest.fixture
def texts(owner: Any) -> Campaign:
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    return campaign


def login(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def named(name: str, body: bytes) -> io.BytesIO:
    upload = io.BytesIO(body)
    upload.name = name
    return upload


def test_the_upload_page_queues_the_import_and_its_page_follows_it_to_the_end(
    texts: Campaign, owner: Any
) -> None:
    client = login(owner)
    url = reverse("campaign_judgment_import", args=[texts.pk])
    response = client.post(url, {"file": named("past.tsv", evalsite_file(make_rows())), **FORM})
    assert response.status_code == 302
    [job] = JudgmentImportJob.objects.filter(campaign=texts)
    job_url = reverse("campaign_judgment_import_job", args=[texts.pk, job.pk])
    assert response["Location"] == job_url
    # Queued: nothing stored yet; the page says it waits and links to itself for a refresh.
    assert not JudgmentImport.objects.filter(campaign=texts).exists()
    page = client.get(job_url).content.decode()
    assert "Waiting for a worker." in page
    assert 'data-job-status="queued"' in page
    assert f'<a href="{job_url}">Refresh</a>' in page
    # The import page lists it.
    assert job_url in client.get(url).content.decode()

    imports_run_queued()
    page = client.get(job_url).content.decode()
    assert "Imported 120 judgments of 3 annotators as “Imported: past.tsv”." in page
    assert reverse("campaign_analysis", args=[texts.pk]) in page
    assert 'data-job-status="done"' in page
    # The checks of alignment that ran are listed.
    assert 'id="import-checks"' in page
    assert "the file carries no texts" in page
    job.refresh_from_db()
    record = JudgmentImport.objects.get(campaign=texts)
    assert (job.status, job.result, bytes(job.content)) == ("done", record, b"")
    assert record.summary["judgments"] == 120


def test_a_refused_file_shows_its_problems_escaped_on_the_jobs_page_and_stores_nothing(
    texts: Campaign, owner: Any
) -> None:
    client = login(owner)
    before = database_snapshot()
    bad = (HEADER + "w\t<script>x</script>\t1\tSYSTEM\t50\n").encode()
    response = client.post(
        reverse("campaign_judgment_import", args=[texts.pk]),
        {"file": named("bad.tsv", bad), **FORM},
    )
    [job] = imports_run_queued()
    assert job.status == "failed"
    [problem] = job.problems
    assert (problem["file"], problem["line"]) == ("bad.tsv", 2)
    assert problem["message"].startswith("unknown system '<script>x</script>'; upload its")
    assert bytes(job.content) == b""
    page = client.get(response["Location"]).content.decode()
    assert "Nothing was imported. Fix these problems and upload again:" in page
    assert (
        "<code>bad.tsv</code>, line 2: unknown system &#x27;&lt;script&gt;x&lt;/script&gt;" in page
    )
    assert "<script>x</script>" not in page
    assert reverse("campaign_judgment_import", args=[texts.pk]) in page
    assert database_snapshot() == before


def test_the_api_answers_202_with_the_job_and_its_url_tells_how_it_ended(
    texts: Campaign, owner: Any
) -> None:
    client = login(owner)
    url = reverse("api-campaign-judgment-imports", args=[texts.pk])
    response = client.post(
        url, {"file": named("scores.csv", appraise_file(make_rows())), "file_format": "appraise"}
    )
    assert response.status_code == 202, response.content
    queued = response.json()
    assert (queued["status"], queued["import"], queued["file_name"]) == (
        "queued",
        None,
        "scores.csv",
    )
    assert response["Location"] == "http://testserver" + reverse(
        "api-campaign-judgment-import-job", args=[texts.pk, queued["id"]]
    )
    imports_run_queued()
    body = client.get(response["Location"]).json()
    assert (body["status"], body["percent"], body["problems"]) == ("done", 100, [])
    assert body["import"]["summary"]["judgments"] == 120
    assert body["import"]["file_format"] == "appraise"
    assert body["import"]["protocol_config"] == JudgmentImport.objects.get().config_id

    bad = named("bad.tsv", (HEADER + "w\tnmt\t99\tSYSTEM\t50\n").encode())
    response = client.post(url, {"file": bad})
    assert response.status_code == 202
    imports_run_queued()
    failed = client.get(response["Location"]).json()
    assert (failed["status"], failed["import"]) == ("failed", None)
    assert failed["problems"] == [
        {
            "file": "bad.tsv",
            "line": 2,
            "message": "unknown segment: line 99 (counting from 1); the campaign has 20 segments",
        }
    ]
    assert failed["error"] == "bad.tsv, line 2: " + failed["problems"][0]["message"]
    assert JudgmentImport.objects.count() == 1


def test_a_running_import_shows_its_step_from_the_cache(texts: Campaign, owner: Any) -> None:
    job = judgment_import_request(
        campaign=texts,
        upload=UploadFile("past.tsv", evalsite_file(make_rows())),
        options=ImportOptions(),
        user=owner,
    )
    JudgmentImportJob.objects.filter(pk=job.pk).update(status=JudgmentImportJob.Status.RUNNING)
    job.refresh_from_db()
    assert judgment_import_state(job)["message"] == "Starting…"
    cache.set(progress_key(job.pk), {"stage": "Writing the judgments", "step": 5, "steps": 5})
    try:
        state = judgment_import_state(job)
    finally:
        cache.delete(progress_key(job.pk))
    assert (state["step"], state["steps"], state["percent"]) == (5, 5, 80)
    assert state["message"] == "Step 5 of 5: Writing the judgments…"
    page = login(owner).get(reverse("campaign_judgment_import_job", args=[texts.pk, job.pk]))
    assert 'data-job-status="running"' in page.content.decode()


def test_an_import_that_cannot_be_sent_fails_saying_so(
    texts: Campaign, owner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kombu.exceptions import OperationalError

    from annotation.tasks import judgment_import

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(judgment_import, "apply_async", unreachable)
    response = login(owner).post(
        reverse("campaign_judgment_import", args=[texts.pk]),
        {"file": named("past.tsv", evalsite_file(make_rows())), **FORM},
        follow=True,
    )
    assert "The task queue cannot be reached right now" in response.content.decode()
    job = JudgmentImportJob.objects.get()
    assert (job.status, bytes(job.content)) == ("failed", b"")
    assert not JudgmentImport.objects.exists()


def test_a_message_delivered_again_after_the_import_ended_does_nothing(
    texts: Campaign, owner: Any
) -> None:
    job = judgment_import_request(
        campaign=texts,
        upload=UploadFile("past.tsv", evalsite_file(make_rows())),
        options=ImportOptions(name="Once"),
        user=owner,
    )
    [done] = imports_run_queued()
    assert done.status == "done"
    assert judgment_import_run(job_id=job.pk) is None
    assert JudgmentImport.objects.get().config.name == "Once"


def test_an_import_that_stopped_moving_is_abandoned_when_next_shown(
    texts: Campaign, owner: Any, settings: Any
) -> None:
    job = judgment_import_request(
        campaign=texts,
        upload=UploadFile("past.tsv", evalsite_file(make_rows())),
        options=ImportOptions(),
        user=owner,
    )
    # Its message was lost: no worker ever took it.
    long_ago = timezone.now() - timedelta(seconds=settings.EVALSITE_JOB_STALE_SECONDS + 60)
    JudgmentImportJob.objects.filter(pk=job.pk).update(progressed=long_ago)
    body = (
        login(owner)
        .get(reverse("api-campaign-judgment-import-job", args=[texts.pk, job.pk]))
        .json()
    )
    assert body["status"] == "failed"
    assert body["message"].startswith("abandoned: no progress since")
    assert bytes(JudgmentImportJob.objects.get(pk=job.pk).content) == b""
    # A late delivery of its message finds it ended.
    assert judgment_import_run(job_id=job.pk) is None
    assert not JudgmentImport.objects.exists()


def test_a_running_import_whose_heartbeat_stopped_fails_naming_its_step(
    texts: Campaign, owner: Any, settings: Any
) -> None:
    def job_with_heartbeat(seconds_ago: float) -> JudgmentImportJob:
        job = judgment_import_request(
            campaign=texts, upload=UploadFile("past.tsv", b"x"), options=ImportOptions()
        )
        JudgmentImportJob.objects.filter(pk=job.pk).update(
            status=JudgmentImportJob.Status.RUNNING,
            progressed=timezone.now() - timedelta(seconds=seconds_ago),
        )
        return job

    limit = heartbeat_limit().total_seconds()
    assert limit <= 60
    dead, alive = job_with_heartbeat(limit + 1), job_with_heartbeat(limit - 5)
    cache.set(progress_key(dead.pk), {"stage": "Writing the judgments", "step": 5, "steps": 5})
    unmoved = judgment_import_request(
        campaign=texts, upload=UploadFile("past.tsv", b"x"), options=ImportOptions()
    )
    JudgmentImportJob.objects.filter(pk=unmoved.pk).update(
        progressed=timezone.now() - timedelta(seconds=limit + 1)
    )
    body = (
        login(owner)
        .get(reverse("api-campaign-judgment-import-job", args=[texts.pk, dead.pk]))
        .json()
    )
    assert body["status"] == "failed"
    assert body["message"] == (
        "The worker running the import stopped during step 5 of 5 (Writing the judgments); "
        "nothing was stored. Import the file again."
    )
    assert bytes(JudgmentImportJob.objects.get(pk=dead.pk).content) == b""
    # A heartbeat within the limit is a living worker's; a queued job keeps none.
    assert JudgmentImportJob.objects.get(pk=alive.pk).status == "running"
    assert JudgmentImportJob.objects.get(pk=unmoved.pk).status == "queued"
    # A late delivery of the dead job's message finds it ended.
    assert judgment_import_run(job_id=dead.pk) is None


def test_an_import_waiting_for_a_retry_is_queued_again(texts: Campaign) -> None:
    job = judgment_import_request(
        campaign=texts, upload=UploadFile("past.tsv", b"x"), options=ImportOptions()
    )
    JudgmentImportJob.objects.filter(pk=job.pk).update(status=JudgmentImportJob.Status.RUNNING)
    assert judgment_import_requeue(job_id=job.pk)
    assert JudgmentImportJob.objects.get(pk=job.pk).status == "queued"
    judgment_import_fail(job_id=job.pk, error="gone")
    assert not judgment_import_requeue(job_id=job.pk)
    assert JudgmentImportJob.objects.get(pk=job.pk).status == "failed"
