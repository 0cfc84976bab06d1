"""Redis stopped: annotators' submits are still saved, "recompute now" answers with a clear
message, and when Redis is back the job runs. Real processes: our own redis-server, gunicorn with
the compose web command and a Celery worker with the compose worker command."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from annotation.models import Campaign, Item, Judgment
from annotation.tasking.services import task_assign_next
from benchmarks.fault_stack import PrivateRedis, api
from metrics.models import AnalysisJob
from metrics.pipeline import metric_settings
from tests.conftest import ROOT, compose_command, free_port, stop, wait_for_http
from tests.factories import full_answer, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def _outage_environment(database_url: str, broker_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker_url,
        "EVALSITE_ENV": "production",
        "SECRET_KEY": "outage-" + "k" * 50,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_COOKIES": "0",
        "EVALSITE_VAR_DIR": str(tmp_path / "var"),
        "EVALSITE_AUTO_ANALYSIS": "1",
        "EVALSITE_ANALYSIS_DEBOUNCE_SECONDS": "1",
    }


def _submit_with_the_queue_down(
    base: str, assignment: Any, annotator: Any, token: str, tmp_path: Path
) -> None:
    # An annotator's submit is saved, promptly, with the queue down.
    item = Item.objects.get(task=assignment.task, position=0)
    started = time.monotonic()
    status, _ = api(
        base,
        f"/api/assignments/{assignment.pk}/submit/",
        token,
        "POST",
        {
            "item": item.pk,
            "revision": 0,
            "submission_id": "7c6f1a52-6b1c-4e0a-9f41-2f1b0f0e3a11",
            "answer": full_answer(item, 70),
        },
    )
    assert status == 201, (tmp_path / "web.log").read_text()[-3000:]
    assert time.monotonic() - started < 10
    assert Judgment.objects.filter(item=item, annotator=annotator).exists()


def _recompute_with_the_queue_down(base: str, campaign: Campaign, token: str) -> AnalysisJob:
    # "Recompute now" says what happened, promptly, and keeps the request.
    started = time.monotonic()
    status, body = api(base, f"/api/campaigns/{campaign.pk}/analysis/", token, "POST")
    assert status == 202, body
    # Not a speed test: it must not hang on the broker's retries or TCP timeouts (minutes);
    # 3.5 s was seen on a loaded machine, so the bound is the submit's above.
    assert time.monotonic() - started < 10
    assert body["queued"] is False
    assert "unreachable" in body["detail"]
    job = AnalysisJob.objects.get(pk=body["job"]["id"])
    assert job.status == AnalysisJob.Status.QUEUED
    assert not job.dispatched
    return job


def _the_job_runs_when_redis_returns(
    broker: PrivateRedis,
    base: str,
    campaign: Campaign,
    token: str,
    job: AnalysisJob,
    tmp_path: Path,
) -> None:
    # Redis returns; the worker reconnects by itself and the next status poll sends the job.
    broker.start()
    deadline = time.monotonic() + 240
    while True:
        status, body = api(base, f"/api/campaigns/{campaign.pk}/analysis/", token)
        assert status == 200, body
        if body["status"] in ("done", "failed"):
            break
        assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
        time.sleep(1)
    assert body["status"] == "done", body["error"]
    assert body["id"] == str(job.pk)
    assert set(body["result_kinds"]) == {"metrics", "human", "correlations"}


def test_submits_survive_a_redis_outage_and_the_recompute_runs_when_it_returns(
    test_database_url: str,
    tmp_path: Path,
    owner,
    annotator,  # type: ignore[no-untyped-def]
) -> None:
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1, items_per_task=10)
    ms = metric_settings(campaign.pk)
    ms.metrics, ms.ar_trials = ["bleu", "chrf"], 200
    ms.save()
    Campaign.objects.filter(pk=campaign.pk).update(analysis_settings={"resamples": 100})
    assignment = task_assign_next(config=config, annotator=annotator)
    annotator_token = Token.objects.create(user=annotator).key
    owner_token = Token.objects.create(user=owner).key

    web_port = free_port()
    broker = PrivateRedis(tmp_path)
    broker.start()
    env = _outage_environment(test_database_url, broker.url, tmp_path)
    web_command = [
        f"127.0.0.1:{web_port}" if part == "0.0.0.0:8000" else part
        for part in compose_command("web")
    ]
    web_log = open(tmp_path / "web.log", "wb")  # noqa: SIM115 - closed at the end
    web = subprocess.Popen(web_command, cwd=ROOT, env=env, stdout=web_log, stderr=subprocess.STDOUT)
    worker_log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - closed at the end
    worker = subprocess.Popen(
        [*compose_command("worker"), "--hostname=outage@%h"],
        cwd=ROOT,
        env=env,
        stdout=worker_log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{web_port}"
    try:
        wait_for_http(f"{base}/healthz", web)

        broker.stop()
        _submit_with_the_queue_down(base, assignment, annotator, annotator_token, tmp_path)
        job = _recompute_with_the_queue_down(base, campaign, owner_token)
        _the_job_runs_when_redis_returns(broker, base, campaign, owner_token, job, tmp_path)
    finally:
        stop(worker)
        stop(web)
        broker.stop()
        worker_log.close()
        web_log.close()
