"""The stack the fault scripts break: private PostgreSQL and Redis, gunicorn and Celery workers
with the compose file's commands, and plain HTTP calls to them (the annotators' client is in
``benchmarks/fault_campaign.py``).

Nothing here touches the machine's own PostgreSQL or Redis: the scripts start a throwaway
PostgreSQL cluster (``initdb`` into a temporary folder; as root it runs as the ``postgres`` user)
and a ``redis-server`` on free ports, and remove them at exit, also after Ctrl-C or an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SECRET_KEY = "faults-only-" + "k" * 50


def emit(line: str = "") -> None:
    """One line of the run's account, with the time since the start."""
    sys.stdout.write(f"[{time.monotonic() - STARTED:7.2f} s] {line}\n" if line else "\n")
    sys.stdout.flush()


STARTED = time.monotonic()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tool(name: str) -> str:
    """An executable installed beside the running Python (gunicorn, celery)."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise SystemExit(f"{name} is not installed in {path.parent}")
    return str(path)


def compose_command(service: str) -> list[str]:
    """The command of a docker-compose service, with this virtualenv's executables."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = [str(part) for part in compose["services"][service]["command"]]
    if command[0] == "python":
        return [sys.executable, *command[1:]]
    return [tool(command[0]), *command[1:]]


@contextlib.contextmanager
def terminated_on_sigterm() -> Iterator[None]:
    """SIGTERM ends the script like Ctrl-C does, so the cleanup runs."""

    def raise_exit(signum: int, frame: Any) -> None:
        raise SystemExit(f"stopped by signal {signum}")

    previous = signal.signal(signal.SIGTERM, raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _postgres_bin(name: str) -> str:
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
    for folder in reversed(versions):
        if (folder / name).exists():
            return str(folder / name)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"PostgreSQL's {name} was not found (looked in /usr/lib/postgresql)")
    return found


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as the postgres user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PrivatePostgres:
    """A throwaway PostgreSQL cluster on a free port, its data and socket in a folder of its own
    directly under the temporary directory (the postgres user must reach it), removed by
    ``destroy``."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="evalsite-postgres-"))
        self.data = self.folder / "pgdata"
        self.log = self.folder / "postgres.log"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/evalsite"

    def _pg_ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([_postgres_bin("pg_ctl"), "-D", str(self.data), *args]),
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def create(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        subprocess.run(
            _as_postgres(
                [
                    _postgres_bin("initdb"),
                    "-D",
                    str(self.data),
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "--no-sync",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        self.start()
        subprocess.run(
            _as_postgres(
                [
                    _postgres_bin("createdb"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-U",
                    "postgres",
                    "evalsite",
                ]
            ),
            check=True,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        self._pg_ctl("-o", options, "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: a clean shutdown that disconnects every client; ``immediate``: a crash
        (no checkpoint; the next start replays the WAL)."""
        self._pg_ctl("-m", mode, "-w", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        if self.running():
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """A ``redis-server`` child process on a free port, without persistence: a restart loses
    everything it held, as a Redis that crashed without its disk would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None


@dataclass
class Stack:
    """The private services and the processes started on them; ``close`` ends them all."""

    folder: Path
    postgres: PrivatePostgres
    redis: PrivateRedis
    web_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "DATABASE_URL": self.postgres.url,
            "CELERY_BROKER_URL": self.redis.url,
            "CACHE_URL": self.redis.url.rsplit("/", 1)[0] + "/1",
            "EVALSITE_ENV": "production",
            "SECRET_KEY": SECRET_KEY,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_COOKIES": "0",
            "EVALSITE_VAR_DIR": str(self.folder / "var"),
            "STATIC_ROOT": str(self.folder / "static"),
            "LOG_LEVEL": "info",
            **self.extra_env,
        }

    def manage(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env(),
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def _start(self, name: str, command: list[str], env: dict[str, str]) -> None:
        log = open(self.log(name), "ab")  # noqa: SIM115 - the child keeps it
        self.processes[name] = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so it dies with its children
        )
        log.close()

    def start_web(self, workers: int = 3) -> None:
        command = [
            f"127.0.0.1:{self.web_port}" if part == "0.0.0.0:8000" else part
            for part in compose_command("web")
        ]
        # The compose file's count (an older one names --workers) yields to WEB_CONCURRENCY.
        if "--workers" in command:
            at = command.index("--workers")
            del command[at : at + 2]
        env = {**self.env(), "WEB_CONCURRENCY": str(workers)}
        self._start("web", [*command, "--workers", str(workers)], env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.processes["web"].poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{self.log('web').read_text()[-3000:]}")
            if http_get(f"{self.base}/healthz")[0] == 200:
                return
            time.sleep(0.2)
        raise SystemExit("gunicorn did not answer /healthz within 60 s")

    def start_worker(
        self, name: str, concurrency: int = 2, node: str | None = None
    ) -> subprocess.Popen[bytes]:
        """Start a worker (its process and log called ``name``) under the node name
        ``node``@host (by default ``name``@host)."""
        command = [*compose_command("worker"), f"--hostname={node or name}@%h"]
        command = [p for p in command if not p.startswith("--concurrency")]
        env = {**self.env(), "CELERY_WORKER_CONCURRENCY": str(concurrency)}
        self._start(name, [*command, f"--concurrency={concurrency}"], env)
        deadline = time.monotonic() + 60
        while "ready." not in self.log(name).read_text(errors="replace"):
            if self.processes[name].poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker {name} did not start:\n{self.log(name).read_text()}")
            time.sleep(0.2)
        return self.processes[name]

    def supervise(self, name: str, stop: threading.Event) -> list[tuple[float, str]]:
        """Start the worker ``name`` again whenever it exits, as compose's ``restart:
        unless-stopped`` does (at once; compose waits a little), under the same node name (the
        container's host name does not change). Returns the list it fills with
        (moment, log of the process that exited)."""
        exits: list[tuple[float, str]] = []

        def watch() -> None:
            current, restarts = name, 0
            while not stop.is_set():
                process = self.processes.get(current)
                if process is not None and process.poll() is not None:
                    exits.append((time.monotonic(), current))
                    del self.processes[current]
                    restarts += 1
                    current = f"{name}-restart{restarts}"
                    with contextlib.suppress(SystemExit):
                        self.start_worker(current, node=name)
                time.sleep(0.2)

        threading.Thread(target=watch, daemon=True).start()
        return exits

    def kill(self, name: str) -> None:
        """SIGKILL the process group: the worker and its pool processes die at once."""
        process = self.processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()
        self.redis.stop()
        self.postgres.destroy()


@contextlib.contextmanager
def stack(*, keep: bool = False, **extra_env: str) -> Iterator[Stack]:
    """Private PostgreSQL (migrated, static files collected) and Redis; everything removed at
    exit. ``keep`` leaves the folder with the logs behind."""
    folder = Path(tempfile.mkdtemp(prefix="evalsite-faults-"))
    services = Stack(
        folder=folder,
        postgres=PrivatePostgres(),
        redis=PrivateRedis(folder),
        extra_env=extra_env,
    )
    try:
        with terminated_on_sigterm():
            emit(
                f"private PostgreSQL on port {services.postgres.port} "
                f"({services.postgres.folder}), logs in {folder}"
            )
            services.postgres.create()
            emit(f"private Redis on port {services.redis.port}")
            services.redis.start()
            services.manage("migrate", "--noinput")
            services.manage("collectstatic", "--noinput")
            emit("database migrated, static files collected")
            os.environ.update(services.env())
            os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
            import django

            django.setup()
            yield services
    finally:
        services.close()
        if keep:
            emit(f"logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def django_connection_reset() -> None:
    """Drop this process's database connection (dead after a PostgreSQL restart)."""
    from django.db import connection

    connection.close()


# --------------------------------------------------------------------------------------------
# HTTP


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except OSError as exc:
        return 0, str(exc)


def api(base: str, path: str, token: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    """One API call; status 0 when no HTTP answer came at all (refused, reset, timed out)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method=method)
    request.add_header("Authorization", f"Token {token}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw or b"null")
        except json.JSONDecodeError:
            return exc.code, raw.decode(errors="replace")[:200]
    except OSError as exc:
        return 0, str(exc)
