"""CPU per request of the annotation API in one process, without HTTP or concurrency.

    .venv/bin/python benchmarks/submit_cost.py --annotators 10 --items 100

The load benchmark (``benchmarks/load.py``) measures what annotators see, but on a small machine
shared by the server, PostgreSQL and the client, its figures move with the host's speed from
run to run. This one measures the work itself: the same annotators, answers, repeats and stale
submits as the load benchmark's next flow (its ``annotate``), but every request is handed to
Django's WSGI handler in this process, one at a time, with production settings (DEBUG off), so
the CPU each request costs the web process is read off the clock of the handler's thread.
Printed per request: that CPU for ``/healthz`` (the reference, the same handler) and for each
kind of submit, PostgreSQL's CPU per request, and the ratio of a submit to the reference, which
changes less with the speed of the machine. gunicorn's own HTTP parsing and access log are not
included, and neither is the contention for the cores under load, which in the load benchmark
adds about as much again. The database checks of the load benchmark run at the end.

The database of ``--database-url`` (default ``evalsite_cost``) is dropped and created.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import io
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import load  # noqa: E402 - after the path
from benchmarks.dashboard import emit, recreate_database  # noqa: E402

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/evalsite_cost?conn_max_age=60"

# The kind of the request in flight, per asyncio task: the annotators' tasks interleave, so an
# attribute of the client would name whichever request was sent last, not the one answered.
_KIND: contextvars.ContextVar[str] = contextvars.ContextVar("kind")


class InProcessClient(load.Client):
    """The load benchmark's client, with each request handed to Django's WSGI handler in this
    process instead of sent over HTTP; the handler's CPU is summed per kind of request."""

    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:80")
        from django.core.handlers.wsgi import WSGIHandler

        self.handler = WSGIHandler()
        # Django's handler runs in a thread of its own, as in gunicorn's sync worker: in the
        # event loop's thread, each request would be an async context with connections of its
        # own.
        self.thread = ThreadPoolExecutor(max_workers=1)
        self.cpu: dict[str, float] = {}

    async def request(
        self, kind: str, method: str, path: str, token: str | None = None, body: Any = None
    ) -> load.Answer | None:
        _KIND.set(kind)
        return await super().request(kind, method, path, token, body)

    def clear(self) -> None:
        super().clear()
        self.cpu.clear()

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        head, _, payload = raw.partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _ = request_line.split(" ")
        path, _, query = target.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_NAME": self.host,
            "SERVER_PORT": str(self.port),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(payload),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        for line in header_lines:
            name, _, value = line.partition(":")
            key = name.strip().upper().replace("-", "_")
            if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                environ[key] = value.strip()
            else:
                environ[f"HTTP_{key}"] = value.strip()
        loop = asyncio.get_running_loop()
        status, data, cpu = await loop.run_in_executor(self.thread, self._call, environ)
        kind = _KIND.get()
        self.cpu[kind] = self.cpu.get(kind, 0.0) + cpu
        return status, data

    def _call(self, environ: dict[str, Any]) -> tuple[int, bytes, float]:
        """The handler's answer and the CPU its thread spent on it."""
        status: list[str] = []

        def start_response(line: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            status.append(line)

        started = time.thread_time()
        response = self.handler(environ, start_response)
        try:
            data = b"".join(response)
        finally:
            response.close()
        return int(status[0].split()[0]), data, time.thread_time() - started


def main() -> None:
    args = arguments()
    emit(f"submit cost benchmark: {' '.join(sys.argv[1:]) or '(defaults)'}")
    recreate_database(args.database_url)
    folder = Path(tempfile.mkdtemp(prefix="evalsite-cost-"))
    seeded = database_seed(args, folder)
    client = InProcessClient()
    asyncio.run(load.warm_up(client, seeded, workers=1))
    reference = reference_cost(client, args.reference_requests)
    outcomes = submits_cost(client, seeded, args, reference)
    load.purge_queue()
    shutil.rmtree(folder, ignore_errors=True)
    outcomes.unexpected += client.errors
    problems = load.check(seeded, outcomes)
    if problems:
        emit("FAILED:")
        for problem in problems:
            emit(f"  {problem}")
        sys.exit(1)
    emit(f"checked: {len(outcomes.acknowledged)} judgments, every acknowledged one stored once")


def arguments() -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--items", type=int, default=100, help="fresh answers per annotator")
    parser.add_argument("--task-size", type=int, default=50)
    parser.add_argument("--repeat", type=float, default=0.10)
    parser.add_argument("--stale", type=float, default=0.05)
    parser.add_argument("--protocol", default="direct_assessment")
    parser.add_argument("--reference-requests", type=int, default=2000)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--redis-url", default=load.DEFAULT_REDIS_URL)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    if min(args.annotators, args.items, args.task_size, args.reference_requests) < 1:
        parser.error("--annotators, --items, --task-size and --reference-requests: at least 1")
    return args


def database_seed(args: argparse.Namespace, folder: Path) -> load.Seeded:
    """Django set up with production settings on the (new) database, migrated and seeded as
    the load benchmark seeds it."""
    os.environ.update(
        load.web_environment(
            database_url=args.database_url, redis_url=args.redis_url, folder=folder
        )
    )
    load.setup_django(args.database_url, args.redis_url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    seeded = load.seed(
        annotators=args.annotators,
        items_per_annotator=args.items,
        task_size=args.task_size,
        protocol=args.protocol,
        rng_seed=args.seed,
    )
    emit(f"seeded: {args.annotators} annotators, {seeded.items} items of {args.protocol}")
    return seeded


def reference_cost(client: InProcessClient, requests: int) -> list[float]:
    """Web and PostgreSQL CPU per /healthz request, printed."""
    reference = [0.0, 0.0]
    for _ in range(2):  # the first round warms up
        client.clear()
        postgres = load.postgres_cpu_seconds()
        asyncio.run(load.reference_run(client, concurrency=1, requests=requests))
        reference = [
            client.cpu["healthz"] / requests,
            (load.postgres_cpu_seconds() - postgres) / requests,
        ]
    emit(
        f"reference /healthz: {reference[0] * 1e6:7.0f} µs of web CPU per request, "
        f"PostgreSQL {reference[1] * 1e6:.0f} µs (n={requests})"
    )
    return reference


def submits_cost(
    client: InProcessClient, seeded: load.Seeded, args: argparse.Namespace, reference: list[float]
) -> load.Outcomes:
    """The annotators' requests one at a time, their CPU per kind printed; what they sent and
    how it was answered."""
    client.clear()
    postgres = load.postgres_cpu_seconds()
    wall = time.perf_counter()
    outcomes, _ = asyncio.run(
        load.load_run(
            client,
            seeded,
            items=args.items,
            flow="next",
            repeat=args.repeat,
            stale=args.stale,
            rng_seed=args.seed,
        )
    )
    wall = time.perf_counter() - wall
    postgres = load.postgres_cpu_seconds() - postgres
    requests = sum(len(v) for v in client.latencies.values())
    emit(f"{requests} requests in {wall:.1f} s, one at a time")
    for kind in ("submit", "repeat", "stale", "current", "take"):
        count = len(client.latencies.get(kind, []))
        if count:
            per = client.cpu[kind] / count
            label = {"submit": "new answer"}.get(kind, kind)
            emit(
                f"  {label:<11} {per * 1e6:7.0f} µs of web CPU per request "
                f"({per / reference[0]:.2f} × /healthz, n={count})"
            )
    web = sum(client.cpu.values()) / requests
    emit(
        f"  every kind  {web * 1e6:7.0f} µs of web CPU per request ({web / reference[0]:.2f} × "
        f"/healthz), PostgreSQL {postgres / requests * 1e6:.0f} µs per request"
    )
    return outcomes


if __name__ == "__main__":
    main()
