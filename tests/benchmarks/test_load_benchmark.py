"""The load benchmark (benchmarks/load.py) on a tiny run, so it keeps working: the compose web
command under gunicorn, annotators over HTTP with repeated and stale submits, and the database
checks it ends with — which must also catch a lost judgment. No timing is asserted."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from annotation.models import Judgment
from benchmarks import load

T = TypeVar("T")


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run the client's coroutine in a thread of its own: after the browser tests, Playwright's
    sync API keeps an event loop running in this one, where asyncio.run() refuses to start."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_compose_interpolation_gives_the_worker_count_in_every_form() -> None:
    env = {"WEB_CONCURRENCY": "4"}
    assert load.interpolate("--workers=${WEB_CONCURRENCY:-3}", env) == "--workers=4"
    assert load.interpolate("${WEB_CONCURRENCY}", env) == "4"
    assert load.interpolate("$WEB_CONCURRENCY", env) == "4"
    assert load.interpolate("${UNSET:-3}", env) == "3"
    started: dict[str, str] = {}
    command = load.web_command(port=8123, workers=2, env=started)
    assert "127.0.0.1:8123" in " ".join(command)
    assert started["WEB_CONCURRENCY"] == "2"
    assert "--workers" not in command or command[command.index("--workers") + 1] == "2"


# next: each submit's answer carries the next item; page: a GET of it before each submit;
# paced: the next flow with answers due every 50 ms on average (--rate).
@pytest.mark.parametrize(("flow", "pace"), [("next", 0.0), ("page", 0.0), ("next", 0.05)])
def test_a_small_load_run_stores_every_acknowledged_judgment_once(
    test_database_url: str, redis_url: str, tmp_path: Path, flow: str, pace: float
) -> None:
    seeded = load.seed(annotators=3, items_per_annotator=6, task_size=4)
    env = load.web_environment(
        database_url=test_database_url, redis_url=redis_url, folder=tmp_path, auto_analysis=False
    )
    server, base, _ = load.start_web(env=env, workers=2, log=tmp_path / "web.log")
    try:
        client = load.Client(base)
        run_apart(load.warm_up(client, seeded, workers=2))
        outcomes, _ = run_apart(
            load.load_run(
                client, seeded, items=6, flow=flow, repeat=0.4, stale=0.4, rng_seed=7, pace=pace
            )
        )
    finally:
        load.stop_web(server)
    assert client.errors == [], client.errors
    assert outcomes.unexpected == []
    # 3 annotators × 6 items, across two tasks of 4 each (the second one left unfinished).
    assert len(outcomes.acknowledged) == 18
    assert outcomes.takes == 6
    assert set(outcomes.repeats) == {"200 replay of the same judgment"}
    assert set(outcomes.stales) == {"409 stale"}
    assert sum(outcomes.repeats.values()) + sum(outcomes.stales.values()) >= 5
    assert load.check(seeded, outcomes) == []
    assert Judgment.objects.count() == 18
    # Every annotator's end is noted (the steady phase ends with the first), after the start;
    # every answered request is noted with its send time.
    assert len(outcomes.finished) == 3
    assert min(outcomes.finished) > outcomes.started
    assert len(client.sent) == sum(len(v) for v in client.latencies.values())
    if pace:
        # Paced: each annotator's 6 answers are due at (seeded) exponential gaps of 50 ms on
        # average, 0.3 s in all on average; none is done before the first gap has passed.
        assert min(outcomes.finished) - outcomes.started > 0.05
    # One read of the current item per task taken in the next flow, one per item in the page flow.
    reads = len(client.latencies.get("current", []))
    assert reads == (6 if flow == "next" else 18)

    # The check is not vacuous: a judgment lost after its acknowledgement is reported.
    Judgment.objects.filter(pk=outcomes.acknowledged[0][3]).delete()
    problems = load.check(seeded, outcomes)
    assert any("1 acknowledged judgments lost" in p for p in problems), problems


@pytest.mark.parametrize("protocol", ["esa", "mqm"])
def test_a_small_load_run_of_span_judgments_stores_their_spans(
    test_database_url: str, redis_url: str, tmp_path: Path, protocol: str
) -> None:
    """Span kinds under the same load: every acknowledged judgment stored once with its spans
    as rows and its values (MQM's worked out on the server); a span row lost is reported."""
    from annotation.models import JudgmentSpan

    seeded = load.seed(annotators=2, items_per_annotator=4, task_size=4, protocol=protocol)
    assert seeded.spans
    env = load.web_environment(
        database_url=test_database_url, redis_url=redis_url, folder=tmp_path, auto_analysis=False
    )
    server, base, _ = load.start_web(env=env, workers=2, log=tmp_path / "web.log")
    try:
        client = load.Client(base)
        outcomes, _ = run_apart(
            load.load_run(
                client, seeded, items=4, flow="next", repeat=0.3, stale=0.3, rng_seed=3, pace=0
            )
        )
    finally:
        load.stop_web(server)
    assert client.errors == [], client.errors
    assert outcomes.unexpected == []
    assert len(outcomes.acknowledged) == 8
    assert load.check(seeded, outcomes) == []
    assert JudgmentSpan.objects.exists()
    JudgmentSpan.objects.filter(pk=JudgmentSpan.objects.first().pk).delete()  # type: ignore[union-attr]
    problems = load.check(seeded, outcomes)
    assert "1 judgments whose span rows differ from their answer" in problems, problems


def test_the_client_runs_on_uvloop_at_a_raised_priority() -> None:
    """What the benchmark does to its client before the load (in a process of its own: both
    change process-wide state). uvloop comes with the dev dependencies; raising the priority
    needs root, and the message says so where it is refused."""
    script = (
        "import asyncio, os\n"
        "from benchmarks import load\n"
        "print(load.use_fast_event_loop())\n"
        "print(type(asyncio.new_event_loop()).__module__)\n"
        "print(load.raise_client_priority(0))\n"
        "print(load.raise_client_priority(-3))\n"
        "print(os.getpriority(os.PRIO_PROCESS, 0))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    loop, module, unchanged, raised, nice = done.stdout.splitlines()
    assert loop.startswith("client event loop: uvloop ")
    assert module.startswith("uvloop")
    assert unchanged.startswith("client priority: unchanged (nice 0")
    if os.geteuid() == 0:
        assert raised.startswith("client priority: nice -3 (server at 0)")
        assert nice == "-3"
    else:
        assert "not permitted" in raised
        assert nice == "0"


CLIENT_SCRIPT = """
import asyncio, http.server, json, sys, threading
from benchmarks import load

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/cut":  # closes with half an answer
            self.wfile.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\n\\r\\n{")
            return
        answer = json.dumps({"got": json.loads(body), "auth": self.headers["Authorization"]})
        self.send_response(201 if self.path == "/length" else 409)
        if self.path == "/length":
            self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        data = answer.encode()
        for at in range(0, len(data), 7):  # the answer arrives in pieces
            self.wfile.write(data[at : at + 7])
            self.wfile.flush()

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(load.use_fast_event_loop())
client = load.Client(f"http://127.0.0.1:{server.server_address[1]}")

async def main():
    for path in ("/length", "/to-close", "/cut"):
        answer = await client.request("k", "POST", path, "tok", {"n": 1})
        print(json.dumps(None if answer is None else [answer.status, answer.body]))
    print(json.dumps(client.errors))

asyncio.run(main())
"""


def test_the_client_reads_answers_on_uvloop() -> None:
    """The benchmark's own HTTP client, on the event loop it runs on (uvloop), against a plain
    HTTP server: an answer with a length, one that runs to the end of the connection (each sent
    in pieces), and one cut short, which is an error, not an answer."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", CLIENT_SCRIPT],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loop, with_length, to_close, cut, errors = done.stdout.splitlines()
    assert loop.startswith("client event loop: uvloop ")
    sent = {"got": {"n": 1}, "auth": "Token tok"}
    assert json.loads(with_length) == [201, sent]
    assert json.loads(to_close) == [409, sent]
    assert json.loads(cut) is None
    assert json.loads(errors) == [
        "k: POST /cut: ValueError: the connection closed before the answer"
    ]


@pytest.mark.django_db
def test_postgresql_cpu_keeps_the_time_of_a_backend_that_has_exited() -> None:
    # A persistent connection past its conn_max_age is closed mid-phase and its backend exits;
    # its CPU must stay in the sum (in the server's children's time), not drop out of it.
    from django.db import connections

    before = load.postgres_cpu_seconds()
    connection = connections.create_connection("default")
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            (backend,) = cursor.fetchone()
            cursor.execute("SELECT count(*) FROM generate_series(1, 4000000)")
            assert cursor.fetchone() == (4_000_000,)
        worked = load.postgres_cpu_seconds()
        own = load.process_cpu(backend)
        assert own is not None
        assert own[0] == "postgres"
    finally:
        connection.close()
    for _ in range(100):  # until the server has waited for the backend
        if load.process_cpu(backend) is None:
            break
        time.sleep(0.05)
    assert load.process_cpu(backend) is None
    after = load.postgres_cpu_seconds()
    assert own[1] >= 0.1  # the backend's own work, seen while it lived
    assert worked - before >= own[1] - 0.05
    # Whatever else PostgreSQL did meanwhile only adds; a clock tick of rounding is allowed.
    assert after >= worked - 0.02, (before, worked, after)
