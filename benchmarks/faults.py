"""Fault benchmarks: break one service of a running EvalSite and show that nothing is lost.

    .venv/bin/python benchmarks/faults.py worker-kill        # a worker SIGKILLed mid-analysis
    .venv/bin/python benchmarks/faults.py redis-restart      # Redis restarted during annotation
    .venv/bin/python benchmarks/faults.py postgres-restart   # PostgreSQL restarted under load
    .venv/bin/python benchmarks/faults.py all

Each run starts its own PostgreSQL cluster and Redis on free ports (never the machine's), gunicorn
and Celery workers with the compose file's commands (production settings), drives them over HTTP,
prints what happened step by step, removes everything at exit (also after Ctrl-C) and exits
non-zero when an acknowledged judgment or an analysis is lost, a judgment is stored twice, an
error was unclear (a 500, no answer) or the system did not recover by itself. ``--keep`` leaves
the logs. Results in docs/benchmarks.md ("Faults").
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fault_stack import (
    Annotator,
    Stack,
    acknowledged_wait,
    annotators_run,
    api,
    campaign_create,
    django_connection_reset,
    emit,
    http_get,
    judgments_check,
    responses_summary,
    stack,
)

# The page a signed-in annotator opens: a well-formed session key makes it read the database.
SESSION = {"Cookie": "sessionid=" + "a" * 32}


def fail(problems: list[str], passed: str = "nothing lost, no duplicates") -> int:
    """Print the problems found and the verdict; the exit status."""
    for problem in problems:
        emit(f"PROBLEM: {problem}")
    emit("RESULT: " + ("FAILED" if problems else f"passed: {passed}"))
    return 1 if problems else 0


def submits_account(clients: list[Annotator]) -> list[str]:
    """How the annotators' submits ended, printed: each acknowledged (after retries if need
    be) and stored once. The problems found."""
    from annotation.models import Judgment

    problems: list[str] = []
    submits = [s for c in clients for s in c.submits]
    retried = [s for s in submits if s.tries > 1]
    unacknowledged = [s for s in submits if s.status not in (200, 201)]
    emit(
        f"{len(submits)} submits, {len(retried)} of them resent after an error "
        f"(at most {max((s.tries for s in submits), default=0)} tries); "
        f"{len(unacknowledged)} never acknowledged"
    )
    if unacknowledged:
        problems.append(f"{len(unacknowledged)} submits never acknowledged despite retries")
    problems += judgments_check(clients)
    stored = Judgment.objects.count()
    emit(f"judgments stored: {stored}; acknowledged submits: {len(submits)}")
    if stored != len(submits):
        problems.append(f"{stored} judgments stored for {len(submits)} acknowledged submits")
    return problems


def metric_settings_small(campaign_id: str, **fields: Any) -> None:
    from metrics.pipeline import metric_settings

    ms = metric_settings(campaign_id)
    values = {"metrics": ["bleu", "chrf"], "bootstrap_samples": 100, "ar_trials": 200, **fields}
    for name, value in values.items():
        setattr(ms, name, value)
    ms.save()


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


# --------------------------------------------------------------------------------------------
# A worker SIGKILLed mid-analysis

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
        from django.conf import settings

        from metrics.models import AnalysisJob, StatsChunk, TaskClaim

        # An organizer with an empty campaign, then the corpus uploaded into it.
        campaign_create(annotators=0, with_data=False)
        campaign = corpus_campaign(segments=args.segments, systems=args.systems)
        from rest_framework.authtoken.models import Token

        token = Token.objects.get(user__username="organizer").key
        metric_settings_small(
            campaign, metrics=["bleu", "chrf", "ter"], bootstrap_samples=200, ar_trials=500
        )
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
        end = job_wait(services, campaign, token, timeout=args.timeout)
        recovered = time.monotonic() - killed_at
        emit(
            f"job {end['status']} {recovered:.1f} s after the kill "
            f"({end.get('progress_done')}/{end.get('progress_total')} steps)"
        )
        if end["status"] != "done" or end.get("id") != job:
            return fail([*problems, f"the job did not finish after the kill: {end}"])
        interrupted = results(services, campaign, token)

        emit("the same analysis again, undisturbed (recompute now)")
        started = time.monotonic()
        status, body = api(services.base, f"/api/campaigns/{campaign}/analysis/", token, "POST")
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


# --------------------------------------------------------------------------------------------
# Redis restarted during annotation


def redis_restart(args: argparse.Namespace) -> int:
    problems: list[str] = []
    debounce = 3
    with stack(
        keep=args.keep,
        EVALSITE_AUTO_ANALYSIS="1",
        EVALSITE_ANALYSIS_DEBOUNCE_SECONDS=str(debounce),
    ) as services:
        from metrics.models import AnalysisJob

        campaign = campaign_create(annotators=args.annotators)
        metric_settings_small(campaign.id)
        services.start_web(workers=args.web_workers)
        services.start_worker("w1")
        supervisor = threading.Event()
        exits = services.supervise("w1", supervisor)
        emit(
            f"gunicorn, a Celery worker and {args.annotators} annotators; each new judgment "
            f"schedules an analysis at most every {debounce} s"
        )
        clients = [
            Annotator(services.base, token, campaign.config_id)
            for token in campaign.annotator_tokens
        ]
        stop = threading.Event()
        threads = annotators_run(clients, stop, think=0.1)
        acknowledged_wait(clients, args.before)
        django_connection_reset()
        done_before = AnalysisJob.objects.filter(status="done").count()
        emit(f"{args.before} submits acknowledged; {done_before} automatic analyses done so far")

        down_at = time.monotonic()
        services.redis.stop()
        emit(f"Redis stopped (its data gone: no persistence); down for {args.down:.0f} s")
        time.sleep(args.down)
        starting_at = time.monotonic()
        services.redis.start()
        up_at = time.monotonic()
        emit(f"Redis started again, empty ({up_at - starting_at:.2f} s)")
        during = responses_summary(clients, down_at, starting_at)
        emit(
            f"while it was down: {during['answers']} answers to the annotators, by status "
            f"{during['by_status']}, {during['unclear']} unclear, slowest "
            f"{during['slowest']:.2f} s"
        )
        if during["unclear"]:
            problems.append(f"{during['unclear']} unclear errors while Redis was down")

        # A job that starts after the restart: scheduled by the new judgments.
        restarted = time.time()
        deadline = time.monotonic() + args.timeout
        after = datetime.fromtimestamp(restarted, tz=UTC)
        job = None
        while time.monotonic() < deadline:
            django_connection_reset()
            job = AnalysisJob.objects.filter(created__gte=after, status="done").first()
            if job is not None:
                break
            time.sleep(0.5)
        if job is None:
            problems.append(
                f"no automatic analysis finished within {args.timeout} s of the restart"
            )
        else:
            emit(
                f"an analysis scheduled after the restart finished "
                f"{time.monotonic() - up_at:.1f} s after Redis was back"
            )
        time.sleep(args.after)
        stop.set()
        supervisor.set()
        for thread in threads:
            thread.join(timeout=180)
        for moment, name in exits:
            reason = next(
                (
                    line.split("]", 1)[-1].strip()
                    for line in services.log(name).read_text(errors="replace").splitlines()
                    if "CRITICAL" in line
                ),
                "no reason logged",
            )
            emit(
                f"worker {name} exited {moment - down_at:.1f} s after Redis was stopped "
                f"({reason}); started again like compose's restart policy does"
            )
        # Jobs still under way get a minute to finish; one that has not moved since the outage
        # is stuck.
        deadline = time.monotonic() + 60
        while True:
            django_connection_reset()
            stuck = AnalysisJob.objects.filter(status__in=("queued", "running"))
            if not stuck.exists() or time.monotonic() > deadline:
                break
            time.sleep(1)
        for job in stuck:
            emit(
                f"job {job.pk} left {job.status} (stage {job.stage}, {job.progress_done}/"
                f"{job.progress_total}): its tasks were in Redis when Redis lost its data; a "
                "newer job covers its data, and it is marked failed after "
                "EVALSITE_JOB_STALE_SECONDS"
            )

        problems += submits_account(clients)
        return fail(problems)


# --------------------------------------------------------------------------------------------
# PostgreSQL restarted under load


def postgres_restart(args: argparse.Namespace) -> int:
    with stack(keep=args.keep, EVALSITE_AUTO_ANALYSIS="0") as services:
        campaign = campaign_create(annotators=args.annotators)
        # Persistent connections, as a busy site would use: after the restart every web
        # process holds a dead one (CONN_HEALTH_CHECKS replaces it before use).
        services.postgres.url += "?conn_max_age=600"
        services.start_web(workers=args.web_workers)
        emit(
            f"gunicorn with {args.web_workers} workers up; {args.annotators} annotators start "
            "submitting (a failed submit is resent with the same submission id)"
        )
        clients = [
            Annotator(services.base, token, campaign.config_id)
            for token in campaign.annotator_tokens
        ]
        stop = threading.Event()
        threads = annotators_run(clients, stop, think=0.05)

        # A prober: the health check and a signed-in page, every 0.1 s.
        probes: list[tuple[float, int, int, str]] = []

        def probe() -> None:
            while not stop.is_set():
                at = time.monotonic()
                health, _ = http_get(f"{services.base}/healthz")
                page, text = http_get(f"{services.base}/my/tasks/", SESSION)
                probes.append((at, health, page, text))
                time.sleep(0.1)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()

        started = time.monotonic()
        acknowledged_wait(clients, args.before)
        running = responses_summary(clients, started, time.monotonic())
        emit(
            f"{args.before} submits acknowledged in {time.monotonic() - started:.1f} s "
            f"({running['answers']} answers, by status {running['by_status']}); "
            f"stopping PostgreSQL ({args.mode} shutdown)"
        )
        services.postgres.stop(args.mode)
        down_at = time.monotonic()
        emit(f"PostgreSQL stopped; down for {args.down:.0f} s")
        time.sleep(args.down)
        starting_at = time.monotonic()
        services.postgres.start()
        up_at = time.monotonic()
        emit(f"PostgreSQL started again (pg_ctl start took {up_at - starting_at:.1f} s)")
        time.sleep(args.after)
        stop.set()
        for thread in [*threads, prober]:
            thread.join(timeout=180)

        problems: list[str] = []
        during = responses_summary(clients, down_at, starting_at)
        emit(
            f"while it was down: {during['answers']} answers to the annotators, by status "
            f"{during['by_status']}, {during['unclear']} unclear (a 500 or no answer), slowest "
            f"{during['slowest']:.2f} s"
        )
        sample = next((c.error for c in clients if c.error), None)
        emit(f"an annotator's failed submit was answered: {sample}")
        if during["unclear"]:
            problems.append(f"{during['unclear']} unclear errors while PostgreSQL was down")
        if during["slowest"] > 10:
            problems.append(f"a request took {during['slowest']:.1f} s while PostgreSQL was down")

        down_probes = [p for p in probes if down_at <= p[0] <= starting_at]
        health = sorted({p[1] for p in down_probes})
        pages = sorted({p[2] for p in down_probes})
        page = next((p[3] for p in down_probes if p[2] == 503), "")
        heading = page[page.find("<h1>") : page.find("</p>") + 4] if "<h1>" in page else page
        emit(f"while it was down: /healthz answered {health}, a signed-in page {pages}: {heading}")
        if health != [503] or pages != [503] or "Temporarily unavailable" not in heading:
            problems.append("no 503 with a readable page and health check while it was down")

        successes = [
            r.at for c in clients for r in c.responses if r.at >= starting_at and r.status < 300
        ]
        if not successes:
            problems.append("nothing succeeded after PostgreSQL came back")
        else:
            emit(
                f"first request served {min(successes) - starting_at:.2f} s after pg_ctl start "
                "was issued; gunicorn was not restarted"
            )
        late = [p for p in probes if p[0] >= up_at and (p[1], p[2]) != (200, 200)]
        if late:
            problems.append(f"{len(late)} probes failed after PostgreSQL accepted connections")
        after = responses_summary(clients, up_at, time.monotonic())
        emit(
            f"after it came back: {after['answers']} answers, by status {after['by_status']}, "
            f"health probes failing: {len(late)}"
        )

        problems += submits_account(clients)
        if services.processes["web"].poll() is not None:
            problems.append("gunicorn died")
        return fail(problems)


def run_all(args: argparse.Namespace) -> int:
    """Each fault in a process of its own (Django's settings are read once per process)."""
    codes = {}
    for command in ("worker-kill", "redis-restart", "postgres-restart"):
        emit(f"=== {command}")
        keep = ["--keep"] if args.keep else []
        codes[command] = subprocess.run([sys.executable, __file__, *keep, command]).returncode
    emit("=== " + ", ".join(f"{c}: {'passed' if r == 0 else 'FAILED'}" for c, r in codes.items()))
    return max(codes.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the folder with the logs")
    commands = parser.add_subparsers(dest="command", required=True)
    pg = commands.add_parser("postgres-restart", help="PostgreSQL restarted under load")
    pg.add_argument("--annotators", type=int, default=20)
    pg.add_argument("--web-workers", type=int, default=4)
    pg.add_argument("--mode", choices=("fast", "immediate"), default="immediate")
    pg.add_argument("--before", type=int, default=100, help="submits acknowledged before the stop")
    pg.add_argument("--down", type=float, default=5, help="seconds PostgreSQL stays down")
    pg.add_argument("--after", type=float, default=8, help="seconds of load after the start")
    pg.set_defaults(run=postgres_restart)
    wk = commands.add_parser("worker-kill", help="a Celery worker SIGKILLed mid-analysis")
    wk.add_argument("--segments", type=int, default=600)
    wk.add_argument("--systems", type=int, default=4)
    wk.add_argument("--chunk", type=int, default=100, help="segments per statistics chunk")
    wk.add_argument("--kill-after", type=float, default=0.5, help="seconds into the chunks")
    wk.add_argument("--timeout", type=float, default=600)
    wk.add_argument(
        "--restart",
        choices=("same-name", "new-name"),
        default="same-name",
        help="the worker started again under its node name (as compose does), or another one",
    )
    wk.set_defaults(run=worker_kill)
    rd = commands.add_parser("redis-restart", help="Redis restarted during annotation")
    rd.add_argument("--annotators", type=int, default=10)
    rd.add_argument("--web-workers", type=int, default=3)
    rd.add_argument("--before", type=int, default=50, help="submits acknowledged before")
    rd.add_argument("--down", type=float, default=5, help="seconds Redis stays down")
    rd.add_argument("--after", type=float, default=3, help="seconds of load at the end")
    rd.add_argument("--timeout", type=float, default=180)
    rd.set_defaults(run=redis_restart)
    commands.add_parser("all", help="the three, one after the other").set_defaults(run=run_all)
    args = parser.parse_args()
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
