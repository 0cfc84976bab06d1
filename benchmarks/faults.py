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
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fault_campaign import (
    Annotator,
    acknowledged_wait,
    annotators_run,
    campaign_create,
    fail,
    judgments_check,
    metric_settings_small,
    responses_summary,
)
from benchmarks.fault_stack import (
    Stack,
    django_connection_reset,
    emit,
    http_get,
    stack,
)
from benchmarks.fault_worker_kill import worker_kill

# The page a signed-in annotator opens: a well-formed session key makes it read the database.
SESSION = {"Cookie": "sessionid=" + "a" * 32}


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

        busy_wait(args.timeout)
        down_at, up_at = redis_outage(services, clients, args, problems)
        analysis_after_restart_wait(up_at, args.timeout, problems)
        time.sleep(args.after)
        stop.set()
        supervisor.set()
        for thread in threads:
            thread.join(timeout=180)
        problems += worker_exits_report(services, exits, down_at)
        stuck_jobs_report()

        problems += submits_account(clients)
        return fail(problems)


def busy_wait(timeout: float) -> None:
    """Wait until the worker is running an analysis, so that Redis goes away while the worker
    holds a task (the case that used to stop it); printed."""
    from metrics.models import AnalysisJob

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        django_connection_reset()
        job = AnalysisJob.objects.filter(status="running").first()
        if job is not None:
            emit(f"the worker is running analysis job {job.pk} (stage {job.stage})")
            return
        time.sleep(0.05)
    emit(f"no analysis was running within {timeout:.0f} s; Redis is stopped anyway")


def redis_outage(
    services: Stack, clients: list[Annotator], args: argparse.Namespace, problems: list[str]
) -> tuple[float, float]:
    """Redis stopped, down for ``--down`` seconds and started again, empty; what the annotators
    got meanwhile, printed. The moments it went down and came back."""
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
    return down_at, up_at


def analysis_after_restart_wait(up_at: float, timeout: float, problems: list[str]) -> None:
    """Wait for an automatic analysis created after Redis came back to finish."""
    from metrics.models import AnalysisJob

    # A job that starts after the restart: scheduled by the new judgments.
    restarted = time.time()
    deadline = time.monotonic() + timeout
    after = datetime.fromtimestamp(restarted, tz=UTC)
    job = None
    while time.monotonic() < deadline:
        django_connection_reset()
        job = AnalysisJob.objects.filter(created__gte=after, status="done").first()
        if job is not None:
            break
        time.sleep(0.5)
    if job is None:
        problems.append(f"no automatic analysis finished within {timeout} s of the restart")
    else:
        emit(
            f"an analysis scheduled after the restart finished "
            f"{time.monotonic() - up_at:.1f} s after Redis was back"
        )


def worker_exits_report(
    services: Stack, exits: list[tuple[float, str]], down_at: float
) -> list[str]:
    """Each exit of the supervised worker, with the reason it logged; the worker must reconnect
    by itself, so an exit is a problem (the supervisor only keeps the run going to its end)."""
    if not exits:
        log = services.log("w1").read_text(errors="replace")
        lost = log.count("Connection to broker lost")
        unacked = log.count("Couldn't ack")
        emit(
            f"the worker never exited: it lost Redis {lost} time(s), reconnected by itself and "
            f"went on ({unacked} acknowledgement(s) of tasks it held could not reach the old "
            "connection and were logged)"
        )
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
    return [f"the worker exited {len(exits)} time(s) when Redis went away"] if exits else []


def stuck_jobs_report() -> None:
    """The jobs left queued or running, once those under way have had time to finish."""
    from metrics.models import AnalysisJob

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


# --------------------------------------------------------------------------------------------
# PostgreSQL restarted under load


# A health check and a signed-in page, as the prober saw them: (moment, /healthz status, page
# status, page text).
Probe = tuple[float, int, int, str]


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
        probes, prober = probing_start(services, stop)
        down_at, starting_at, up_at = postgres_outage(services, clients, args)
        time.sleep(args.after)
        stop.set()
        for thread in [*threads, prober]:
            thread.join(timeout=180)

        problems: list[str] = []
        outage_answers_check(clients, down_at, starting_at, problems)
        outage_probes_check(probes, down_at, starting_at, problems)
        recovery_check(clients, probes, starting_at, up_at, problems)
        problems += submits_account(clients)
        if services.processes["web"].poll() is not None:
            problems.append("gunicorn died")
        return fail(problems)


def probing_start(services: Stack, stop: threading.Event) -> tuple[list[Probe], threading.Thread]:
    """The prober started; the list it fills until ``stop`` is set, and its thread."""
    # A prober: the health check and a signed-in page, every 0.1 s.
    probes: list[Probe] = []

    def probe() -> None:
        while not stop.is_set():
            at = time.monotonic()
            health, _ = http_get(f"{services.base}/healthz")
            page, text = http_get(f"{services.base}/my/tasks/", SESSION)
            probes.append((at, health, page, text))
            time.sleep(0.1)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    return probes, prober


def postgres_outage(
    services: Stack, clients: list[Annotator], args: argparse.Namespace
) -> tuple[float, float, float]:
    """Once ``--before`` submits are acknowledged, PostgreSQL stopped for ``--down`` seconds
    and started again; the moments it stopped, was being started, and accepted connections."""
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
    return down_at, starting_at, up_at


def outage_answers_check(
    clients: list[Annotator], down_at: float, starting_at: float, problems: list[str]
) -> None:
    """What the annotators got while PostgreSQL was down: clear errors, quickly."""
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


def outage_probes_check(
    probes: list[Probe], down_at: float, starting_at: float, problems: list[str]
) -> None:
    """What the prober got while PostgreSQL was down: 503 with a readable page."""
    down_probes = [p for p in probes if down_at <= p[0] <= starting_at]
    health = sorted({p[1] for p in down_probes})
    pages = sorted({p[2] for p in down_probes})
    page = next((p[3] for p in down_probes if p[2] == 503), "")
    heading = page[page.find("<h1>") : page.find("</p>") + 4] if "<h1>" in page else page
    emit(f"while it was down: /healthz answered {health}, a signed-in page {pages}: {heading}")
    if health != [503] or pages != [503] or "Temporarily unavailable" not in heading:
        problems.append("no 503 with a readable page and health check while it was down")


def recovery_check(
    clients: list[Annotator],
    probes: list[Probe],
    starting_at: float,
    up_at: float,
    problems: list[str],
) -> None:
    """Requests served again once PostgreSQL was back, without restarting gunicorn."""
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
