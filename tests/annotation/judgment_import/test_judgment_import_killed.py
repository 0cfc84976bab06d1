"""A judgment import whose real Celery worker is killed with SIGKILL in the middle: the job's
heartbeat stops, the next look at the job (the API the page polls) marks it failed naming the
step, and nothing of the file was stored (the import's one transaction died with the worker).
An import taken for dead that ends after all rolls back."""

from __future__ import annotations

import io
import os
import signal
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.background import (
    judgment_import_request,
    judgment_import_run,
    judgment_imports_abandon_stale,
    progress_key,
)
from annotation.judgment_import.formats import judgment_file_text
from annotation.judgment_import.plan import ImportOptions
from annotation.models import JudgmentImportJob
from evalsite.jobs import HEARTBEATS_MISSED, heartbeat_limit
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD
from tests.support.judgment_import import database_snapshot
from tests.support.threads import started

pytestmark = pytest.mark.django_db(transaction=True)

SYSTEMS = ["nmt", "pbmt", "rbmt"]
N_SEGMENTS = 40
# Annotators who each judge every output once: enough rows for an import of several seconds.
N_ANNOTATORS = 1000
BEAT = 1  # EVALSITE_JOB_HEARTBEAT_SECONDS of the worker and of this process


def big_file() -> bytes:
    return judgment_file_text(
        [
            {
                "annotator": f"worker{a}",
                "system": system,
                "segment": f"doc{s // 10 + 1}:{s % 10 + 1}",
                "type": "SYSTEM",
                "score": str((a * 7 + s * 3 + len(system)) % 101),
                "hit": f"hit-{a}",
                "seconds": "12",
            }
            for a in range(N_ANNOTATORS)
            for s in range(N_SEGMENTS)
            for system in SYSTEMS
        ]
    )


def job_state(client: Client, campaign_id: Any, job_id: Any) -> dict[str, Any]:
    response = client.get(
        reverse("api-campaign-judgment-import-job", args=[campaign_id, job_id]),
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200, response.content
    state: dict[str, Any] = response.json()
    return state


def test_a_worker_killed_mid_import_leaves_a_failed_job_and_nothing_stored(  # type: ignore[no-untyped-def]
    celery_worker_process, owner: Any, settings: Any
) -> None:
    settings.EVALSITE_JOB_HEARTBEAT_SECONDS = BEAT
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    body = big_file()
    worker = celery_worker_process(env={"EVALSITE_JOB_HEARTBEAT_SECONDS": str(BEAT)})
    before = database_snapshot()

    file = io.BytesIO(body)
    file.name = "big.tsv"
    response = client.post(
        reverse("campaign_judgment_import", args=[campaign.pk]),
        {"file": file, "file_format": "auto", "protocol": "direct_assessment", "line_base": 1},
    )
    assert response.status_code == 302, response.content
    job_id = response["Location"].rstrip("/").rsplit("/", 1)[1]

    # The running job beats while it works: read through the API for longer than the limit,
    # it stays running, and its heartbeat moves past its start.
    deadline = time.monotonic() + 60
    while True:
        state = job_state(client, campaign.pk, job_id)
        job = JudgmentImportJob.objects.get(pk=job_id)
        assert state["status"] in ("queued", "running"), (job.started, job.progressed, state)
        if (
            job.started
            and (job.progressed - job.started).total_seconds() >= (HEARTBEATS_MISSED + 1) * BEAT
        ):
            break
        assert time.monotonic() < deadline, f"no heartbeat within 60 s: {job.__dict__}"
        time.sleep(0.2)
    assert state["status"] == "running", state
    assert state["step"] >= 1, state

    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    killed = time.monotonic()
    while (state := job_state(client, campaign.pk, job_id))["status"] != "failed":
        assert time.monotonic() - killed < 60, state
        time.sleep(0.5)
    # Failed once the heartbeat is HEARTBEATS_MISSED beats old: seconds, not minutes.
    assert time.monotonic() - killed < 2 * HEARTBEATS_MISSED * BEAT + 5
    assert state["message"].startswith("The worker running the import stopped during step "), state
    assert f"of {state['steps']} (" in state["message"]
    assert state["message"].endswith("nothing was stored. Import the file again.")
    assert database_snapshot() == before
    job = JudgmentImportJob.objects.get(pk=job_id)
    assert job.finished is not None
    assert bytes(job.content) == b""


def test_an_import_taken_for_dead_stores_nothing_when_it_ends_after_all(owner: Any) -> None:
    """A worker that lived on after a reader failed its job (its heartbeat had stopped: set
    back here) rolls its import back, so the message "nothing was stored" stays true."""
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    before = database_snapshot()
    job = judgment_import_request(
        campaign=campaign, upload=UploadFile("big.tsv", big_file()), options=ImportOptions()
    )
    worker, ended = started(lambda: judgment_import_run(job_id=job.pk))
    deadline = time.monotonic() + 60
    while not (cache.get(progress_key(job.pk)) or {}).get("step", 0) >= 2:
        assert worker.is_alive(), ended
        assert time.monotonic() < deadline, "the import did not reach its second step in 60 s"
        time.sleep(0.1)
    long_ago = timezone.now() - 2 * heartbeat_limit()
    JudgmentImportJob.objects.filter(pk=job.pk).update(progressed=long_ago)
    assert judgment_imports_abandon_stale(campaign=campaign) == 1
    worker.join(timeout=120)
    assert not worker.is_alive()
    [result] = ended
    assert result is not None
    assert result.status == JudgmentImportJob.Status.FAILED
    assert result.error.startswith("The worker running the import stopped during step ")
    assert database_snapshot() == before
