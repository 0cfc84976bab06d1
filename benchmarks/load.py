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
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dashboard import emit, recreate_database  # noqa: E402 - after the path

# Persistent connections, as docker-compose.yml's DATABASE_URL sets them.
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/evalsite_load?conn_max_age=60"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/3"
N_SYSTEMS = 4
REQUEST_TIMEOUT = 60.0
FLOWS = {
    "next": "one request per item, each submit's answer carries the next item",
    "page": "GET of the current item before each submit, two requests per item",
    "submit": "submits only, items read from the database beforehand",
}


# --------------------------------------------------------------------------------------------
# Database and campaign


def setup_django(database_url: str, redis_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["CELERY_BROKER_URL"] = redis_url
    os.environ["CACHE_URL"] = redis_url
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


@dataclass(frozen=True)
class Seeded:
    """What the client needs: the protocol config, one API token per annotator, and (for
    ``--flow submit``) the items of every task by position, each ``(item id, output ids)``."""

    config_id: int
    campaign_id: Any
    tokens: list[tuple[int, str]]  # (user id, token key)
    criteria: list[tuple[str, int, int]]  # (key, minimum, maximum) per output
    tasks: dict[int, list[tuple[int, list[int]]]]
    items: int


def seed(
    *,
    annotators: int,
    items_per_annotator: int,
    task_size: int,
    protocol: str = "direct_assessment",
    rng_seed: int = 2024,
) -> Seeded:
    """A campaign with enough tasks for every annotator to submit ``items_per_annotator`` fresh
    answers, in the database Django is configured with (which must be migrated)."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.campaigns.services import (
        campaign_create,
        campaign_data_import,
        user_make_organizer,
    )
    from annotation.campaigns.uploads import UploadFile
    from annotation.models import Item, ItemOutput, ProtocolConfig, Task
    from annotation.protocols import PROTOCOLS
    from annotation.tasking.build import tasks_build
    from benchmarks.mt_data import make_corpus

    definition = PROTOCOLS[protocol]
    per_screen = 1 if definition.single_output else N_SYSTEMS
    # Screens cover each (segment, system) once; QC items come on top, a margin.
    segments = max(20, -(-annotators * items_per_annotator * per_screen // N_SYSTEMS) + task_size)
    systems, refs = make_corpus(n_systems=N_SYSTEMS, n_segments=segments, seed=rng_seed)

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode("utf-8")

    files = [
        UploadFile("load.src", text(refs[0]), "source"),
        UploadFile("load.ref", text(refs[0]), "references"),
        UploadFile("load.docids", text([f"doc{n // 10}" for n in range(segments)]), "doc_ids"),
    ] + [UploadFile(f"{name}.txt", text(lines), "systems") for name, lines in systems]
    users = get_user_model()
    owner = users.objects.create_user(username="load-owner", password=secrets.token_urlsafe(16))
    user_make_organizer(user=owner)
    campaign = campaign_create(
        owner=owner,
        organizers=[],
        name="Load benchmark",
        source_language="de",
        target_language="en",
        status="active",
    )
    campaign_data_import(campaign=campaign, files=files, user=owner)
    people = users.objects.bulk_create(
        [users(username=f"load{a:03d}", password="!") for a in range(annotators)]
    )
    campaign.annotators.add(*people)
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in people])
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name=protocol,
        protocol=protocol,
        mode=definition.modes[0].key,
        items_per_task=task_size,
        outputs_per_screen=per_screen,
        annotations_per_task=1,
    )
    tasks_build(config=config)
    by_position = dict(Task.objects.filter(config=config).values_list("pk", "position"))
    outputs: dict[int, list[int]] = {}
    for item_id, output_id in (
        ItemOutput.objects.filter(item__task__config=config)
        .order_by("item_id", "position")
        .values_list("item_id", "pk")
    ):
        outputs.setdefault(item_id, []).append(output_id)
    tasks: dict[int, list[tuple[int, list[int]]]] = {}
    for item_id, task_id in (
        Item.objects.filter(task__config=config)
        .order_by("task_id", "position")
        .values_list("pk", "task_id")
    ):
        tasks.setdefault(by_position[task_id], []).append((item_id, outputs[item_id]))
    total = sum(len(t) for t in tasks.values())
    # Each annotator takes whole tasks until it has answered its share.
    needed = annotators * -(-items_per_annotator // task_size) * task_size
    if total < needed:
        raise SystemExit(f"the seeded campaign has {total} items, {needed} are needed")
    criteria = [
        (c.key, int(c.minimum), int(c.maximum)) for c in definition.criteria_for(per_screen)
    ]
    return Seeded(
        config_id=config.pk,
        campaign_id=campaign.pk,
        tokens=[(t.user_id, t.key) for t in tokens],
        criteria=criteria,
        tasks=tasks,
        items=total,
    )


# --------------------------------------------------------------------------------------------
# gunicorn, as the compose file starts it


def interpolate(word: str, env: dict[str, str]) -> str:
    """Compose's variable interpolation of one word: ``${NAME}``, ``${NAME:-default}``,
    ``${NAME-default}`` and ``$NAME``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        operator, default = match.group(2), match.group(3) or ""
        current = env.get(name)
        if operator == ":-" and not current:
            return default
        if operator == "-" and current is None:
            return default
        return current or ""

    return re.sub(r"\$\{(\w+)(?:(:?-)([^}]*))?\}|\$(\w+)", value, word)


def web_command(*, port: int, workers: int, env: dict[str, str]) -> list[str]:
    """The compose file's web command, bound to ``127.0.0.1:port`` with ``workers`` processes:
    an explicit ``--workers``/``-w`` value is replaced, otherwise gunicorn reads
    ``WEB_CONCURRENCY`` from ``env`` (set here)."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    words = command.split() if isinstance(command, str) else [str(w) for w in command]
    env["WEB_CONCURRENCY"] = str(workers)
    words = [interpolate(w, env) for w in words]
    if words[:2] in (["sh", "-c"], ["/bin/sh", "-c"]):
        words = words[2:]
    out: list[str] = []
    skip = False
    for n, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in ("--workers", "-w"):
            out += [word, str(workers)]
            skip = True
        elif word.startswith("--workers="):
            out.append(f"--workers={workers}")
        elif word in ("--bind", "-b") and n + 1 < len(words):
            out += [word, f"127.0.0.1:{port}"]
            skip = True
        elif word.startswith("--bind="):
            out.append(f"--bind=127.0.0.1:{port}")
        else:
            out.append(word)
    if f"127.0.0.1:{port}" not in " ".join(out):
        raise SystemExit(f"no --bind in the compose web command: {command!r}")
    tool = Path(sys.executable).parent / out[0]
    return [str(tool) if tool.exists() else out[0], *out[1:]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def web_environment(
    *, database_url: str, redis_url: str, folder: Path, auto_analysis: bool = True
) -> dict[str, str]:
    """Production settings, as ``.env.example`` sets them, on this machine's services."""
    (folder / "static").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "EVALSITE_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "DEBUG": "0",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_RESULT_BACKEND": redis_url,
        "CACHE_URL": redis_url,
        "EVALSITE_AUTO_ANALYSIS": "1" if auto_analysis else "0",
        "EVALSITE_VAR_DIR": str(folder / "var"),
        "STATIC_ROOT": str(folder / "static"),
        "LOG_LEVEL": "WARNING",
    }


def start_web(
    *, env: dict[str, str], workers: int, log: Path
) -> tuple[subprocess.Popen[bytes], str, list[str]]:
    """gunicorn started and answering /healthz; returns the process, its base URL, command."""
    port = free_port()
    command = web_command(port=port, workers=workers, env=env)
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return server, base, command
        except OSError:
            time.sleep(0.3)
    stop_web(server)
    raise SystemExit(f"gunicorn did not answer /healthz within 60 s:\n{log.read_text()}")


def stop_web(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def process_cpu(pid: int) -> tuple[str, float] | None:
    """(command name, CPU seconds) of a live process, from /proc; None when it is gone. The
    seconds are its own user + system time and that of its children that have exited and been
    waited for (``cutime``, ``cstime``): when a PostgreSQL backend or a gunicorn worker exits,
    its time moves to its parent's, so a sum over the live processes does not lose it."""
    try:
        name, fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)
    except OSError:
        return None
    values = fields.split()
    ticks = sum(int(v) for v in values[11:15])  # utime, stime, cutime, cstime
    return name.partition("(")[2], ticks / os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pid: int) -> float:
    """CPU of a process (with its exited children) and its live children: gunicorn's master and
    workers, from /proc."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        return 0.0
    return sum(found[1] for p in pids if (found := process_cpu(p)) is not None)


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine so far, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def postgres_cpu_seconds() -> float:
    """CPU of the PostgreSQL processes on this machine: the server and its live backends, and
    the backends that have exited (counted in the server's children's time). A backend closed
    during a phase (a persistent connection past its ``conn_max_age``) is still counted; before,
    its whole lifetime dropped out of the sum and PostgreSQL's share could read 0."""
    pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    found = [process_cpu(pid) for pid in pids]
    return sum(seconds for name, seconds in filter(None, found) if name == "postgres")


class CpuShares:
    """CPU used during a phase, in cores: gunicorn (master and workers), PostgreSQL, this
    process (the client), and the whole machine (also Redis, the kernel's share of the network
    and whatever else runs); and per request, when the count of requests is given."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.wall = time.perf_counter()
        self.client = time.process_time()
        self.server = group_cpu_seconds(server_pid)
        self.postgres = postgres_cpu_seconds()
        self.machine = machine_ticks()

    def line(self, requests: int = 0) -> str:
        wall = time.perf_counter() - self.wall
        busy, total = machine_ticks()
        cores = os.cpu_count() or 1
        machine = (busy - self.machine[0]) / max(total - self.machine[1], 1) * cores
        server = (group_cpu_seconds(self.server_pid) - self.server) / wall
        postgres = (postgres_cpu_seconds() - self.postgres) / wall
        client = (time.process_time() - self.client) / wall
        line = (
            f"CPU: gunicorn {server:.2f} cores, PostgreSQL {postgres:.2f}, client {client:.2f}, "
            f"whole machine {machine:.2f} of {cores}"
        )
        if requests:
            per = wall / requests * 1000
            line += (
                f"; per request: gunicorn {server * per:.2f} ms, PostgreSQL "
                f"{postgres * per:.2f} ms, client {client * per:.2f} ms, machine "
                f"{machine * per:.2f} ms"
            )
        return line


def raise_client_priority(nice: int) -> str:
    """Give this process (the client, all its threads started from now on) the scheduling
    priority ``nice``. The client shares the cores with the server, which annotators' browsers
    do not: at the same priority, a response that waits in its socket while the client waits for
    a core is counted as server latency. A lower nice value lets the client run first when a
    response arrives (its CPU is still taken from the server). Says what was done; needs root
    or CAP_SYS_NICE to go below 0."""
    if nice == 0:
        return "client priority: unchanged (nice 0, as the server)"
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except PermissionError:
        return f"client priority: unchanged, nice {nice} is not permitted here (needs root)"
    return f"client priority: nice {nice} (server at 0)"


# --------------------------------------------------------------------------------------------
# The client


@dataclass
class Answer:
    status: int
    body: Any
    seconds: float


class Client:
    """HTTP/1.1 on loopback, one connection per request (gunicorn's sync workers close it)."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.host_header = f"{self.host}:{self.port}"
        self.latencies: dict[str, list[float]] = {}
        # (kind, perf_counter at the send, seconds to the answer) of every answered request.
        self.sent: list[tuple[str, float, float]] = []
        self.errors: list[str] = []

    async def request(
        self, kind: str, method: str, path: str, token: str | None = None, body: Any = None
    ) -> Answer | None:
        payload = b"" if body is None else json.dumps(body).encode()
        head = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host_header}",
            # As the TLS-terminating proxy in front of gunicorn forwards it.
            "X-Forwarded-Proto: https",
            "Connection: close",
            "Accept: application/json",
        ]
        if token:
            head.append(f"Authorization: Token {token}")
        if body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        started = time.perf_counter()
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT):
                status, data = await self._exchange(raw)
        except (TimeoutError, OSError, ValueError) as exc:
            self.errors.append(f"{kind}: {method} {path}: {type(exc).__name__}: {exc}")
            return None
        seconds = time.perf_counter() - started
        self.latencies.setdefault(kind, []).append(seconds)
        self.sent.append((kind, started, seconds))
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = data[:200].decode(errors="replace")
        return Answer(status, parsed, seconds)

    def clear(self) -> None:
        self.latencies.clear()
        self.sent.clear()

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        transport, _ = await loop.create_connection(
            lambda: _Exchange(raw, answered), self.host, self.port
        )
        try:
            return await answered
        finally:
            transport.close()


class _Exchange(asyncio.Protocol):
    """One request on a new connection, its answer read as it arrives: a protocol instead of
    asyncio's streams, which cost the client (on the server's cores) about twice the CPU."""

    def __init__(self, raw: bytes, answered: asyncio.Future[tuple[int, bytes]]) -> None:
        self.raw = raw
        self.answered = answered
        self.received = bytearray()
        self.status = 0
        self.body_at = -1  # where the body starts, once the head is in
        self.length: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but write the same way.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.raw)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if self.body_at < 0:
            end = self.received.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.received[:end].decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    self.length = int(value)
            self.body_at = end + 4
        if self.length is not None and len(self.received) >= self.body_at + self.length:
            self._answer()
            # Closed at once, as a proxy does once an answer is in: after answering, gunicorn's
            # sync worker waits for the client to close (``close_graceful``) before it accepts
            # the next connection, so a close left for the awaiting task holds the worker.
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.answered.done():
            return
        if exc is not None:
            self.answered.set_exception(exc)
        elif self.body_at < 0 or self.length is not None:
            self.answered.set_exception(ValueError("the connection closed before the answer"))
        else:
            self._answer()  # no length: the body runs to the end of the connection

    def _answer(self) -> None:
        if not self.answered.done():
            body = bytes(self.received[self.body_at :])
            if self.length is not None:
                body = body[: self.length]
            self.answered.set_result((self.status, body))


@dataclass
class Outcomes:
    """What the annotators sent and how each was answered."""

    acknowledged: list[tuple[int, int, str, int]] = field(default_factory=list)
    repeats: Counter[str] = field(default_factory=Counter)
    stales: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    takes: int = 0
    # perf_counter when the run started and when each annotator stopped.
    started: float = 0.0
    finished: list[float] = field(default_factory=list)


async def annotate(
    client: Client,
    seeded: Seeded,
    user_id: int,
    token: str,
    *,
    items: int,
    flow: str,
    repeat: float,
    stale: float,
    rng: np.random.Generator,
    outcomes: Outcomes,
    think: float = 0.0,
    pace: float = 0.0,
) -> None:
    """One annotator: take a task, answer ``items`` items, with repeats and stale submits,
    pausing ``think`` seconds on average (exponentially distributed) before each answer. With
    ``pace``, answers are due at a steady rate instead: the gaps between due times are
    exponential with mean ``pace`` seconds, counted from the last due time (not from the last
    answer), and an answer already due when the item arrives goes at once."""
    take_path = f"/api/protocols/{seeded.config_id}/take/"

    async def take() -> tuple[str, int] | None:
        answer = await client.request("take", "POST", take_path, token)
        outcomes.takes += 1
        if answer is None or answer.status != 200:
            outcomes.unexpected.append(f"take: {answer and answer.status} {answer and answer.body}")
            return None
        return str(answer.body["id"]), int(answer.body["task"]) - 1

    taken = await take()
    done = 0
    # The next flow: the item the last submit's answer carried (None: read the current one).
    shown: dict[str, Any] | None = None
    due = time.perf_counter()
    while taken is not None and done < items:
        if think > 0:
            await asyncio.sleep(rng.exponential(think))
        if pace > 0:
            due += rng.exponential(pace)
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        assignment, task_position = taken
        base = f"/api/assignments/{assignment}"
        if flow in ("page", "next"):
            if shown is None:
                current = await client.request("current", "GET", f"{base}/current/", token)
                if current is None:
                    return
                if current.status != 200:
                    outcomes.unexpected.append(f"current: {current.status} {current.body}")
                    return
                shown = current.body
            item_id = int(shown["item"])
            output_ids = [int(o["id"]) for o in shown["outputs"]]
            criteria = [(c["key"], int(c["min"]), int(c["max"])) for c in shown["criteria"]]
        else:
            item_id, output_ids = seeded.tasks[task_position][
                done % len(seeded.tasks[task_position])
            ]
            criteria = seeded.criteria
        submission = str(uuid.uuid4())
        body: dict[str, Any] = {
            "item": item_id,
            "revision": 0,
            "submission_id": submission,
            "answer": {
                str(o): {key: int(rng.integers(low, high + 1)) for key, low, high in criteria}
                for o in output_ids
            },
        }
        answer = await client.request("submit", "POST", f"{base}/submit/", token, body)
        if answer is None:
            return
        if answer.status != 201 or not answer.body.get("created"):
            outcomes.unexpected.append(f"submit: {answer.status} {answer.body}")
            return
        judgment = int(answer.body["judgment"])
        outcomes.acknowledged.append((user_id, item_id, submission, judgment))
        done += 1
        finished = bool(answer.body["finished"])
        shown = answer.body.get("next") if flow == "next" else None
        if flow == "next" and not finished and not isinstance(shown, dict):
            outcomes.unexpected.append(f"submit without the next item: {answer.body}")
            return
        roll = rng.random()
        if roll < repeat:
            # The same request again (a double click, a retry after a lost response).
            again = await client.request("repeat", "POST", f"{base}/submit/", token, body)
            if again is None:
                outcomes.repeats["no answer"] += 1
            elif (
                again.status == 200
                and again.body.get("replay") is True
                and again.body.get("created") is False
                and again.body.get("judgment") == judgment
                and (flow != "next" or again.body.get("next") == shown)
            ):
                outcomes.repeats["200 replay of the same judgment"] += 1
            else:
                outcomes.repeats[f"{again.status} {again.body}"] += 1
        elif roll < repeat + stale:
            # Another window still showing the item before it was answered sends its own answer.
            other = dict(body, submission_id=str(uuid.uuid4()))
            refused = await client.request("stale", "POST", f"{base}/submit/", token, other)
            if refused is None:
                outcomes.stales["no answer"] += 1
            elif refused.status == 409 and refused.body.get("code") == "stale":
                outcomes.stales["409 stale"] += 1
            else:
                outcomes.stales[f"{refused.status} {refused.body}"] += 1
        if finished:
            # The position within the next task restarts at 0.
            items -= done
            done = 0
            shown = None
            if items > 0:
                taken = await take()


async def reference_run(client: Client, *, concurrency: int, requests: int) -> float:
    """``requests`` GETs of /healthz, ``concurrency`` at a time; the wall time."""
    remaining = [requests]
    bad: list[int] = []

    async def one() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            answer = await client.request("healthz", "GET", "/healthz")
            if answer is not None and answer.status != 200:
                bad.append(answer.status)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(concurrency)))
    wall = time.perf_counter() - started
    client.errors += [f"healthz answered {s}" for s in bad]
    return wall


async def warm_up(client: Client, seeded: Seeded, *, workers: int) -> None:
    """Requests through every worker before measuring: each imports the API's modules and opens
    its connections on its first request, which /healthz (answered by a middleware) skips."""
    token = seeded.tokens[0][1]

    async def one() -> None:
        for _ in range(5):
            await client.request("warm-up", "GET", "/api/my/tasks/", token)
            await client.request("warm-up", "GET", "/healthz")

    await asyncio.gather(*(one() for _ in range(2 * workers)))
    client.clear()
    if client.errors:
        raise SystemExit(f"the warm-up failed: {client.errors[:3]}")


async def load_run(
    client: Client,
    seeded: Seeded,
    *,
    items: int,
    flow: str,
    repeat: float,
    stale: float,
    rng_seed: int,
    think: float = 0.0,
    pace: float = 0.0,
) -> tuple[Outcomes, float]:
    outcomes = Outcomes()
    rngs = np.random.default_rng(rng_seed).spawn(len(seeded.tokens))
    started = outcomes.started = time.perf_counter()

    async def noted(annotator: Awaitable[None]) -> None:
        try:
            await annotator
        finally:
            outcomes.finished.append(time.perf_counter())

    await asyncio.gather(
        *(
            noted(
                annotate(
                    client,
                    seeded,
                    user_id,
                    token,
                    items=items,
                    flow=flow,
                    repeat=repeat,
                    stale=stale,
                    rng=rng,
                    outcomes=outcomes,
                    think=think,
                    pace=pace,
                )
            )
            for (user_id, token), rng in zip(seeded.tokens, rngs, strict=True)
        )
    )
    return outcomes, time.perf_counter() - started


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
        pk for pk, row in stored.items() if values[pk] != outputs[row[1]] * len(seeded.criteria)
    ]
    if short:
        problems.append(f"{len(short)} judgments without every value, e.g. {short[:5]}")
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

    emit(f"load benchmark: {' '.join(sys.argv[1:]) or '(defaults)'}")
    emit(f"machine: {os.cpu_count()} cores, load average {load_average()} before the run")
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
        emit(f"reference (/healthz) — load average {load_average()}")
        cpu = CpuShares(server.pid)
        wall = asyncio.run(
            reference_run(client, concurrency=args.annotators, requests=args.reference_requests)
        )
        healthz_rate = len(client.latencies.get("healthz", [])) / wall
        emit(
            f"  {healthz_rate:7.1f} requests/s   {percentiles(client.latencies.get('healthz', []))}"
        )
        emit(f"  {cpu.line(len(client.latencies.get('healthz', [])))}")

        emit()
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
        emit(f"load ({args.flow} flow: {FLOWS[args.flow]}; {pace}) — load average {load_average()}")
        client.clear()
        cpu = CpuShares(server.pid)
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
        # Until the first annotator is done, all of them are at work: the rate asked for.
        steady_end = min(outcomes.finished)
        steady = [
            seconds
            for kind, at, seconds in client.sent
            if kind in ("submit", "repeat", "stale") and at < steady_end
        ]
        steady_wall = steady_end - outcomes.started
        emit(
            f"  steady phase (all {len(seeded.tokens)} annotators at work, the first "
            f"{steady_wall:.1f} s): {len(steady) / steady_wall:.1f} submits/s, "
            f"every submit {percentiles(steady)}"
        )
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
        for kind in ("submit", "repeat", "stale", "current", "take"):
            if kind in lat:
                label = {"submit": "new answer"}.get(kind, kind)
                emit(f"  {label:<14} {percentiles(lat[kind])}")
        emit(f"  repeated: {dict(outcomes.repeats) or 'none'}")
        emit(f"  stale:    {dict(outcomes.stales) or 'none'}")
        emit(f"  errors:   {len(client.errors) + len(outcomes.unexpected)} unexpected")
        for error in (client.errors + outcomes.unexpected)[:5]:
            emit(f"    {error}")
        emit(f"  {shares}")
        emit(
            f"  ratio to the reference: {submit_rate / healthz_rate:.3f} submits per /healthz, "
            f"{requests / wall / healthz_rate:.3f} requests per /healthz"
        )
        emit(f"  load average after the run {load_average()}")
    finally:
        stop_web(server)
        shutil.rmtree(folder, ignore_errors=True)
    purge_queue()

    emit()
    outcomes.unexpected += client.errors
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
