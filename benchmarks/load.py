"""Load benchmark: concurrent annotators submitting judgments over HTTP to gunicorn + PostgreSQL.

    .venv/bin/python benchmarks/load.py --annotators 50 --items 100

What it does, in order:

1. drops and creates the database of ``--database-url`` (default ``evalsite_load`` on the local
   PostgreSQL; never point it at data you keep), migrates it and seeds a campaign: a synthetic
   corpus (``benchmarks/mt_data.py``, 4 systems, enough segments for every annotator), one
   protocol (direct assessment by default), tasks of ``--task-size`` items each taken by one
   annotator, and ``--annotators`` annotators with API tokens;
2. starts gunicorn with the web command of ``docker-compose.yml`` (production settings: DEBUG
   off), bound to a free loopback port, with ``--web-workers`` processes (the compose file's
   ``--workers`` value or ``${WEB_CONCURRENCY}`` is replaced by it);
3. reference: ``--reference-requests`` GETs of ``/healthz`` (one ``SELECT 1``) at the same
   concurrency through the same client, so the figures can be compared across machines;
4. load: every annotator takes a task (``POST /api/protocols/<id>/take/``), reads its current
   item (``GET …/current/``) and submits a random valid answer (``POST …/submit/``), whose
   answer carries the next item to answer (``--flow next``, the default: one request per item);
   ``--flow page`` reads the current item before every submit instead (two requests per item, as
   a client that ignores ``next`` does), ``--flow submit`` only submits (items read from the
   database beforehand); after ``--repeat`` of the submits (10 %) the same request
   is sent again (it must be answered 200 as a replay of the same judgment, in the next flow
   with the same next item) and after
   ``--stale`` of them (5 %) a second, different answer to the item just answered, based on
   revision 0 — a second window still showing the item (it must be answered 409 ``stale``). A
   finished task is followed by a new take;
5. checks the database: exactly one judgment per (annotator, item), every acknowledged judgment
   stored with its submission id, nothing stored that was not acknowledged, stale submits
   changed nothing, every judgment has its values, each assignment's progress equals its
   judgments. Exits 1 on any violation or unexpected answer.

The client is our own (asyncio on uvloop, with raw HTTP/1.1 on loopback, a new connection per
request as gunicorn's sync workers close each one) and runs in this process, on the same cores
as the server: its share of the CPU is printed, with gunicorn's and PostgreSQL's.
``--client-nice -10`` (root only) raises the client's scheduling priority once gunicorn has
started, so that a response waiting for the client to get a core would not be counted as server
latency (it is not for annotators on their own machines); in four alternating runs it made no
difference that showed above the host's own variation, so by default the client runs beside the
server. New judgments schedule an analysis as in production (one Redis ``SET NX`` per submit);
the queued task is purged afterwards, no worker runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The benchmark's parts, each in a module of its own; their names are importable from here.
from benchmarks.dashboard import emit, recreate_database  # noqa: E402 - after the path
from benchmarks.load_client import (  # noqa: E402
    REQUEST_TIMEOUT,
    Answer,
    Client,
    Outcomes,
    annotate,
    load_run,
    reference_run,
    warm_up,
)
from benchmarks.load_cpu import (  # noqa: E402
    CpuShares,
    group_cpu_seconds,
    machine_ticks,
    postgres_cpu_seconds,
    process_cpu,
    raise_client_priority,
)
from benchmarks.load_seed import N_SYSTEMS, Seeded, seed, setup_django  # noqa: E402
from benchmarks.load_server import (  # noqa: E402
    free_port,
    interpolate,
    start_web,
    stop_web,
    web_command,
    web_environment,
)

__all__ = [
    "DEFAULT_DATABASE_URL",
    "DEFAULT_REDIS_URL",
    "FLOWS",
    "N_SYSTEMS",
    "REQUEST_TIMEOUT",
    "Answer",
    "Client",
    "CpuShares",
    "Outcomes",
    "Seeded",
    "annotate",
    "check",
    "free_port",
    "group_cpu_seconds",
    "interpolate",
    "load_average",
    "load_run",
    "machine_ticks",
    "main",
    "percentiles",
    "postgres_cpu_seconds",
    "process_cpu",
    "purge_queue",
    "raise_client_priority",
    "reference_run",
    "seed",
    "setup_django",
    "start_web",
    "stop_web",
    "use_fast_event_loop",
    "warm_up",
    "web_command",
    "web_environment",
]

# Persistent connections, as docker-compose.yml's DATABASE_URL sets them.
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/evalsite_load?conn_max_age=60"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/3"
FLOWS = {
    "next": "one request per item, each submit's answer carries the next item",
    "page": "GET of the current item before each submit, two requests per item",
    "submit": "submits only, items read from the database beforehand",
}


# --------------------------------------------------------------------------------------------
# The invariants


def check(seeded: Seeded, outcomes: Outcomes) -> list[str]:
    """Everything the database must hold after the run; the violations found."""
    from django.db.models import Count

    from annotation.models import Assignment, ItemOutput, Judgment, JudgmentRevision, JudgmentValue

    problems: list[str] = []
    judgments = Judgment.objects.filter(item__task__config_id=seeded.config_id)
    twice = list(judgments.values("annotator", "item").annotate(n=Count("id")).filter(n__gt=1)[:5])
    if twice:
        problems.append(f"more than one judgment per (annotator, item): {twice}")
    stored = {
        pk: (annotator, item, str(submission), revision)
        for pk, annotator, item, submission, revision in judgments.values_list(
            "pk", "annotator_id", "item_id", "submission_id", "revision"
        )
    }
    acked = {
        judgment: (user, item, submission)
        for user, item, submission, judgment in outcomes.acknowledged
    }
    lost = [j for j, row in acked.items() if stored.get(j, (None,) * 3)[:3] != row]
    if lost:
        problems.append(f"{len(lost)} acknowledged judgments lost or changed, e.g. {lost[:5]}")
    extra = sorted(set(stored) - set(acked))
    if extra:
        problems.append(f"{len(extra)} judgments stored without an acknowledgement: {extra[:5]}")
    revised = sorted(pk for pk, row in stored.items() if row[3] != 1)
    if revised or JudgmentRevision.objects.filter(judgment__in=judgments).exists():
        problems.append(f"stale submits changed judgments: {revised[:5]}")
    outputs = Counter(
        ItemOutput.objects.filter(item__task__config_id=seeded.config_id).values_list(
            "item_id", flat=True
        )
    )
    values = Counter(
        JudgmentValue.objects.filter(judgment__in=judgments).values_list("judgment_id", flat=True)
    )
    short = [
        pk for pk, row in stored.items() if values[pk] != outputs[row[1]] * seeded.values_per_output
    ]
    if short:
        problems.append(f"{len(short)} judgments without every value, e.g. {short[:5]}")
    if seeded.spans:
        problems += spans_check(judgments)
    per_assignment = Counter(judgments.values_list("assignment_id", flat=True))
    wrong = [
        str(pk)
        for pk, done in Assignment.objects.filter(task__config_id=seeded.config_id).values_list(
            "pk", "items_done"
        )
        if done != per_assignment[pk]
    ]
    if wrong:
        problems.append(
            f"{len(wrong)} assignments whose progress is not their judgments: {wrong[:5]}"
        )
    for name, counts, expected in (
        ("repeated", outcomes.repeats, "200 replay of the same judgment"),
        ("stale", outcomes.stales, "409 stale"),
    ):
        others = {k: v for k, v in counts.items() if k != expected}
        if others:
            problems.append(f"{name} submits not answered as expected: {others}")
    if outcomes.unexpected:
        problems.append(
            f"{len(outcomes.unexpected)} unexpected answers, e.g. {outcomes.unexpected[:3]}"
        )
    return problems


# --------------------------------------------------------------------------------------------
# Report


def spans_check(judgments: Any) -> list[str]:
    """Every judgment's error spans stored as rows, one per span of its answer."""
    from annotation.models import JudgmentSpan

    rows = Counter(
        JudgmentSpan.objects.filter(judgment__in=judgments).values_list("judgment_id", flat=True)
    )
    wrong = [
        pk
        for pk, answer in judgments.values_list("pk", "answer")
        if rows[pk] != sum(len(given.get("spans", ())) for given in answer.values())
    ]
    return [f"{len(wrong)} judgments whose span rows differ from their answer"] if wrong else []


def percentiles(values: list[float]) -> str:
    if not values:
        return "no requests"
    ms = np.asarray(values) * 1000
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return (
        f"p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  p99 {p99:6.1f} ms  max {ms.max():7.1f} ms"
        f"  (n={len(ms)})"
    )


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def use_fast_event_loop() -> str:
    """Run the client on uvloop (a dev dependency): on asyncio's own loop the client took
    0.67–0.74 ms of CPU per request here, on uvloop 0.45–0.66 ms (both with asyncio's streams;
    the protocol client since costs about 14 % less), CPU taken from the server it measures.
    Says which loop runs."""
    try:
        import uvloop
    except ImportError:
        return (
            "client event loop: asyncio's own (uvloop is not installed: make .venv/.installed-test)"
        )
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return f"client event loop: uvloop {uvloop.__version__}"


def main() -> None:
    args = arguments()
    emit(f"load benchmark: {' '.join(sys.argv[1:]) or '(defaults)'}")
    emit(f"machine: {os.cpu_count()} cores, load average {load_average()} before the run")
    seeded = database_seed(args)
    folder = Path(tempfile.mkdtemp(prefix="evalsite-load-"))
    env = web_environment(database_url=args.database_url, redis_url=args.redis_url, folder=folder)
    server, base, command = start_web(env=env, workers=args.web_workers, log=folder / "web.log")
    try:
        emit(f"gunicorn: {args.web_workers} workers (WEB_CONCURRENCY={env['WEB_CONCURRENCY']})")
        emit(f"  {' '.join(Path(command[0]).name if n == 0 else w for n, w in enumerate(command))}")
        # After the start: gunicorn's processes keep the priority they were started with.
        emit(raise_client_priority(args.client_nice))
        emit(use_fast_event_loop())
        client = Client(base)
        asyncio.run(warm_up(client, seeded, workers=args.web_workers))

        emit()
        healthz_rate = reference_phase(client, server.pid, args)
        emit()
        outcomes = load_phase(client, server.pid, seeded, args, healthz_rate)
    finally:
        stop_web(server)
        shutil.rmtree(folder, ignore_errors=True)
    purge_queue()

    emit()
    outcomes.unexpected += client.errors
    checked(seeded, outcomes)


def arguments() -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=100, help="fresh answers per annotator")
    parser.add_argument("--task-size", type=int, default=50)
    parser.add_argument("--repeat", type=float, default=0.10, help="share of repeated submits")
    parser.add_argument("--stale", type=float, default=0.05, help="share of stale submits")
    parser.add_argument(
        "--flow",
        choices=("next", "page", "submit"),
        default="next",
        help="next: one request per item, each submit's answer carries the next item (the "
        "first one of a task is read with GET); page: GET the current item before each "
        "submit (two requests per item); submit: only submits (items read from the database "
        "beforehand)",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds an annotator spends on an item before answering (exponential; "
        "default 0: every annotator submits as fast as it is answered, the capacity test); "
        "e.g. 0.5 gives the latency at an offered rate of about annotators/0.5 submits/s",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="offered submits per second of every kind (steady: each annotator's answers are "
        "due at exponential gaps counted from the previous due time, repeats and stale submits "
        "follow their answer); the latency at that rate, as long as the server keeps up "
        "(the achieved rate is printed beside it). Instead of --think",
    )
    parser.add_argument("--protocol", default="direct_assessment")
    parser.add_argument(
        "--web-workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn processes"
    )
    parser.add_argument(
        "--client-nice",
        type=int,
        default=0,
        help="scheduling priority of the client once the server runs (default 0: beside the "
        "server; e.g. -10 runs it before the server, which keeps 0; below 0 needs root)",
    )
    parser.add_argument("--reference-requests", type=int, default=3000)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    if args.annotators < 1 or args.items < 1 or args.task_size < 1 or args.web_workers < 1:
        parser.error("--annotators, --items, --task-size and --web-workers must be at least 1")
    if args.think < 0 or args.rate < 0:
        parser.error("--think and --rate must not be negative")
    if args.think and args.rate:
        parser.error("--think and --rate are two ways of pacing the annotators: give one")
    if min(args.repeat, args.stale) < 0 or args.repeat + args.stale > 1:
        parser.error("--repeat and --stale are shares between 0 and 1, together at most 1")
    return args


def database_seed(args: argparse.Namespace) -> Seeded:
    """The database created afresh, migrated and seeded (step 1 of the module docstring)."""
    started = time.perf_counter()
    recreate_database(args.database_url)
    setup_django(args.database_url, args.redis_url)
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    seeded = seed(
        annotators=args.annotators,
        items_per_annotator=args.items,
        task_size=args.task_size,
        protocol=args.protocol,
        rng_seed=args.seed,
    )
    connections.close_all()
    emit(
        f"seeded {urlsplit(args.database_url).path.lstrip('/')}: {args.annotators} annotators, "
        f"{seeded.items} items of {args.protocol} in tasks of {args.task_size}, "
        f"{time.perf_counter() - started:.1f} s"
    )
    return seeded


def reference_phase(client: Client, server_pid: int, args: argparse.Namespace) -> float:
    """The /healthz reference (step 3), printed; its rate in requests per second."""
    emit(f"reference (/healthz) — load average {load_average()}")
    cpu = CpuShares(server_pid)
    wall = asyncio.run(
        reference_run(client, concurrency=args.annotators, requests=args.reference_requests)
    )
    healthz_rate = len(client.latencies.get("healthz", [])) / wall
    emit(f"  {healthz_rate:7.1f} requests/s   {percentiles(client.latencies.get('healthz', []))}")
    emit(f"  {cpu.line(len(client.latencies.get('healthz', [])))}")
    return healthz_rate


def pacing(args: argparse.Namespace) -> tuple[float, str]:
    """The seconds between an annotator's due answers (0: not paced) and how the annotators
    are paced, in words."""
    # Answers due per annotator: every submit kind counts towards --rate.
    per_answer = 1 + args.repeat + args.stale
    pace_seconds = args.annotators * per_answer / args.rate if args.rate else 0.0
    if args.rate:
        pace = (
            f"{args.rate:g} submits/s offered: each annotator's answers due every "
            f"{pace_seconds * 1000:.0f} ms on average"
        )
    elif args.think:
        pace = f"think {args.think:g} s per item"
    else:
        pace = "no think time"
    return pace_seconds, pace


def load_phase(
    client: Client,
    server_pid: int,
    seeded: Seeded,
    args: argparse.Namespace,
    healthz_rate: float,
) -> Outcomes:
    """The load (step 4), printed; what the annotators sent and how it was answered."""
    pace_seconds, pace = pacing(args)
    emit(f"load ({args.flow} flow: {FLOWS[args.flow]}; {pace}) — load average {load_average()}")
    client.clear()
    cpu = CpuShares(server_pid)
    outcomes, wall = asyncio.run(
        load_run(
            client,
            seeded,
            items=args.items,
            flow=args.flow,
            repeat=args.repeat,
            stale=args.stale,
            rng_seed=args.seed,
            think=args.think,
            pace=pace_seconds,
        )
    )
    lat = client.latencies
    requests = sum(len(v) for v in lat.values())
    shares = cpu.line(requests)
    submits = sum(len(lat.get(k, [])) for k in ("submit", "repeat", "stale"))
    submit_rate = submits / wall
    emit(
        f"  {submits} submits in {wall:.1f} s: {submit_rate:.1f} submits/s "
        f"({len(outcomes.acknowledged) / wall:.1f} new judgments/s; "
        f"{requests / wall:.1f} requests/s of every kind)"
    )
    all_submits = lat.get("submit", []) + lat.get("repeat", []) + lat.get("stale", [])
    emit(f"  every submit   {percentiles(all_submits)}")
    steady_report(client, outcomes, annotators=len(seeded.tokens))
    windows_report(client, outcomes)
    answers_report(client, outcomes)
    emit(f"  {shares}")
    emit(
        f"  ratio to the reference: {submit_rate / healthz_rate:.3f} submits per /healthz, "
        f"{requests / wall / healthz_rate:.3f} requests per /healthz"
    )
    emit(f"  load average after the run {load_average()}")
    return outcomes


def steady_report(client: Client, outcomes: Outcomes, *, annotators: int) -> None:
    """The submits of the steady phase: their rate and latency."""
    # Until the first annotator is done, all of them are at work: the rate asked for.
    steady_end = min(outcomes.finished)
    steady = [
        seconds
        for kind, at, seconds in client.sent
        if kind in ("submit", "repeat", "stale") and at < steady_end
    ]
    steady_wall = steady_end - outcomes.started
    emit(
        f"  steady phase (all {annotators} annotators at work, the first "
        f"{steady_wall:.1f} s): {len(steady) / steady_wall:.1f} submits/s, "
        f"every submit {percentiles(steady)}"
    )


def windows_report(client: Client, outcomes: Outcomes) -> None:
    """The submits' rate and latency in 5 s windows of their sends."""
    emit("  over time (5 s windows of the sends): submits/s, p50 / p95 ms")
    windows: dict[int, list[float]] = {}
    for kind, at, seconds in client.sent:
        if kind in ("submit", "repeat", "stale"):
            windows.setdefault(int((at - outcomes.started) // 5), []).append(seconds)
    for window, seconds in sorted(windows.items()):
        ordered = sorted(seconds)
        emit(
            f"    {window * 5:4d}–{window * 5 + 5:<4d} s  {len(ordered) / 5:6.1f}  "
            f"{ordered[len(ordered) // 2] * 1000:6.1f} / "
            f"{ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000:6.1f}"
        )


def answers_report(client: Client, outcomes: Outcomes) -> None:
    """The latency of each kind of request, how repeats and stale submits were answered, and
    the unexpected answers."""
    lat = client.latencies
    for kind in ("submit", "repeat", "stale", "current", "take"):
        if kind in lat:
            label = {"submit": "new answer"}.get(kind, kind)
            emit(f"  {label:<14} {percentiles(lat[kind])}")
    emit(f"  repeated: {dict(outcomes.repeats) or 'none'}")
    emit(f"  stale:    {dict(outcomes.stales) or 'none'}")
    emit(f"  errors:   {len(client.errors) + len(outcomes.unexpected)} unexpected")
    for error in (client.errors + outcomes.unexpected)[:5]:
        emit(f"    {error}")


def checked(seeded: Seeded, outcomes: Outcomes) -> None:
    """The database checks (step 5), printed; exits 1 on a violation."""
    problems = check(seeded, outcomes)
    stored = len(outcomes.acknowledged)
    if problems:
        emit("FAILED:")
        for problem in problems:
            emit(f"  {problem}")
        sys.exit(1)
    emit(
        f"checked: {stored} judgments, one per (annotator, item), every acknowledged one stored "
        "with its values, none unacknowledged, stale submits changed nothing, progress consistent"
    )
    emit(f"benchmark peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def purge_queue() -> None:
    """Drop the analysis the submits scheduled (no worker runs here)."""
    from evalsite.celery import app

    app.control.purge()


if __name__ == "__main__":
    main()
