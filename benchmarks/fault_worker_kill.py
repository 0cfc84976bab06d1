"""Fault benchmark ``worker-kill`` (``benchmarks/faults.py worker-kill``): a Celery worker
SIGKILLed mid-analysis, the analysis must finish by itself with the results of an undisturbed
run."""

from __future__ import annotations

import argparse
import re
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.fault_campaign import campaign_create, fail, metric_settings_small
from benchmarks.fault_stack import Stack, api, django_connection_reset, emit, stack

# Redis hands a dead worker's unacknowledged tasks to another after the visibility timeout, which
# must exceed the hard time limit (a task may run that long). Production waits 40 minutes; the
# run shortens all three so that redelivery comes within two minutes (a chunk takes seconds on an
# idle machine, tens of seconds on a loaded one: the limits leave room for that).
FAST_REDELIVERY = {
    "CELERY_TASK_SOFT_TIME_LIMIT": "80",
    "CELERY_TASK_TIME_LIMIT": "90",
    "CELERY_VISIBILITY_TIMEOUT": "100",
}


def corpus_campaign(*, segments: int, systems: int) -> str:
    """A campaign of synthetic MT outputs (benchmarks/mt_data.py): ``systems`` systems with two
    runs each, one reference; its id."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns.services import campaign_data_import
    from annotation.campaigns.uploads import UploadFile
    from annotation.models import Campaign
    from benchmarks.mt_data import make_corpus

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode()

    outputs, refs = make_corpus(n_systems=2 * systems, n_segments=segments, seed=2024)
    files = [
        UploadFile("src.de", text([f"q{i} " + r for i, r in enumerate(refs[0])]), "source"),
        UploadFile("ref.en", text(refs[0]), "references"),
    ]
    for k, (_, hyps) in enumerate(outputs):
        files.append(UploadFile(f"sys{k // 2}.run{k % 2}.txt", text(hyps), "systems"))
    owner = get_user_model().objects.get(username="organizer")
    campaign = Campaign.objects.filter(owner=owner).get()
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return str(campaign.pk)


def redelivery_wait(log: Path, held: set[str]) -> float:
    """The moment the last of ``held`` (task ids) is received by the worker logging to ``log``."""
    while not all(f"[{task}] received" in log.read_text(errors="replace") for task in held):
        time.sleep(0.2)
    return time.monotonic()


def results(services: Stack, campaign: str, token: str) -> dict[str, Any]:
    documents = {}
    for kind in ("metrics", "human", "correlations"):
        status, body = api(services.base, f"/api/campaigns/{campaign}/results/{kind}/", token)
        documents[kind] = body.get("data") if status == 200 else f"HTTP {status}"
    return documents


def rescue_wait(log: Path, count: int) -> float:
    """The moment the worker logging to ``log`` has sent ``count`` tasks of its predecessor
    again."""
    while log.read_text(errors="replace").count("previous process died with it") < count:
        time.sleep(0.2)
    return time.monotonic()


def worker_kill(args: argparse.Namespace) -> int:
    """``--restart same-name`` (the default): the worker starts again under its node name, as
    compose's restart policy (the container's host name stays) or systemd's does, and sends the
    chunks its dead process held at once; the production time limits and visibility timeout
    apply. ``--restart new-name``: another worker takes over, and Redis delivers the chunks
    again after the visibility timeout, shortened for the run."""
    problems: list[str] = []
    same_name = args.restart == "same-name"
    timeouts = {} if same_name else FAST_REDELIVERY
    with stack(keep=args.keep, EVALSITE_AUTO_ANALYSIS="0", **timeouts) as services:
        campaign, token = analysis_campaign(services, args, same_name=same_name)
        services.start_web(workers=2)
        services.start_worker("doomed")
        emit("gunicorn and a Celery worker (doomed) up; the organizer starts the analysis")
        status, body = api(services.base, f"/api/campaigns/{campaign}/analysis/", token, "POST")
        if status != 202:
            return fail([f"starting the analysis answered {status}: {body}"])
        job = body["job"]["id"]
        log = services.log("doomed")
        deadline = time.monotonic() + 120
        while "metrics.analysis_chunk[" not in log.read_text(errors="replace"):
            if time.monotonic() > deadline:
                return fail(["no chunk reached the worker within 120 s"])
            time.sleep(0.05)
        time.sleep(args.kill_after)
        killed_at = doomed_kill(services, job, args, same_name=same_name, problems=problems)
        end = job_wait(services, campaign, token, timeout=args.timeout)
        recovered = time.monotonic() - killed_at
        emit(
            f"job {end['status']} {recovered:.1f} s after the kill "
            f"({end.get('progress_done')}/{end.get('progress_total')} steps)"
        )
        if end["status"] != "done" or end.get("id") != job:
            return fail([*problems, f"the job did not finish after the kill: {end}"])
        interrupted = results(services, campaign, token)
        return undisturbed_compare(services, campaign, token, job, args, interrupted, problems)


def analysis_campaign(
    services: Stack, args: argparse.Namespace, *, same_name: bool
) -> tuple[str, str]:
    """The corpus campaign and its settings for the analysis; its id and the organizer's
    token."""
    from django.conf import settings
    from rest_framework.authtoken.models import Token

    # An organizer with an empty campaign, then the corpus uploaded into it.
    campaign_create(annotators=0, with_data=False)
    campaign = corpus_campaign(segments=args.segments, systems=args.systems)
    token = Token.objects.get(user__username="organizer").key
    metric_settings_small(campaign, metrics=["bleu", "chrf", "ter"], resamples=200, ar_trials=500)
    services.extra_env["EVALSITE_CHUNK_SEGMENTS"] = str(args.chunk)
    visibility = (
        f"{settings.CELERY_VISIBILITY_TIMEOUT} s (the default)"
        if same_name
        else f"{FAST_REDELIVERY['CELERY_VISIBILITY_TIMEOUT']} s (shortened for the run)"
    )
    emit(
        f"campaign: {args.segments} segments, {args.systems} systems × 2 runs; BLEU, chrF "
        f"and TER in chunks of {args.chunk} segments; visibility timeout {visibility}"
    )
    return campaign, token


def doomed_kill(
    services: Stack,
    job: str,
    args: argparse.Namespace,
    *,
    same_name: bool,
    problems: list[str],
) -> float:
    """SIGKILL the worker ``doomed`` and start the one that takes over, which reports (in a
    thread) when the chunks come back; the moment of the kill."""
    from metrics.models import AnalysisJob, StatsChunk, TaskClaim

    log = services.log("doomed")
    # The chunks the doomed worker had received: their ids show when they come back.
    held = set(re.findall(r"analysis_chunk\[([0-9a-f-]+)\] received", log.read_text()))
    stored = StatsChunk.objects.filter(job_id=job).count()
    claimed = TaskClaim.objects.filter(job_id=job).count()
    killed_at = time.monotonic()
    services.kill("doomed")
    state = AnalysisJob.objects.get(pk=job)
    emit(
        f"worker SIGKILLed (with its pool processes) {args.kill_after} s into the first "
        f"chunks: job {state.status}, {stored} chunks stored, {state.progress_done}/"
        f"{state.progress_total} steps done"
    )
    if state.status != AnalysisJob.Status.RUNNING:
        problems.append(f"the job was {state.status} when the worker was killed, not running")
    if same_name:
        services.start_worker("restarted", node="doomed")
        emit(
            f"the worker started again under its name (doomed), as compose's restart policy "
            f"does; the killed process had started {claimed} chunks"
        )
        what = f"the killed process's {claimed} chunks sent again"
        back = partial(rescue_wait, services.log("restarted"), claimed)
    else:
        services.start_worker("rescuer")
        emit(
            f"a new worker (rescuer) started; the {len(held)} chunks the killed worker held "
            "wait in Redis for the visibility timeout"
        )
        what = "the killed worker's chunks delivered again"
        back = partial(redelivery_wait, services.log("rescuer"), held)
    redelivered = threading.Thread(
        target=lambda: emit(f"{what} {back() - killed_at:.1f} s after the kill"), daemon=True
    )
    redelivered.start()
    return killed_at


def undisturbed_compare(
    services: Stack,
    campaign: str,
    token: str,
    job: str,
    args: argparse.Namespace,
    interrupted: dict[str, Any],
    problems: list[str],
) -> int:
    """The same analysis again, undisturbed: its results must be the interrupted run's. The
    exit status."""
    from metrics.models import AnalysisJob

    emit("the same analysis again, undisturbed (recompute now)")
    started = time.monotonic()
    api(services.base, f"/api/campaigns/{campaign}/analysis/", token, "POST")
    again = job_wait(services, campaign, token, timeout=args.timeout)
    if again["status"] != "done" or again["id"] == job:
        return fail([*problems, f"the undisturbed run did not finish: {again}"])
    emit(f"undisturbed job done in {time.monotonic() - started:.1f} s")
    undisturbed = results(services, campaign, token)
    for kind, document in interrupted.items():
        same = document == undisturbed[kind]
        emit(f"{kind}: {'identical' if same else 'DIFFERENT'}")
        if not same or not isinstance(document, dict):
            problems.append(f"the {kind} results differ from the undisturbed run's")
    django_connection_reset()
    left = AnalysisJob.objects.filter(status__in=("queued", "running")).count()
    if left:
        problems.append(f"{left} jobs left queued or running")
    return fail(problems, "the job finished by itself, results identical, no job left running")


def job_wait(services: Stack, campaign: str, token: str, timeout: float) -> dict[str, Any]:
    """Poll the campaign's analysis status (as the dashboard does) until the job ends."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = api(services.base, f"/api/campaigns/{campaign}/analysis/", token)
        if status == 200 and body["status"] in ("done", "failed"):
            return dict(body)
        if time.monotonic() > deadline:
            return {"status": "timeout", "last": body}
        time.sleep(0.5)
