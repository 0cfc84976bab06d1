"""PostgreSQL unreachable: gunicorn (the compose web command) answers 503 with a readable page,
a JSON error under /api/ and an "unavailable" health check — not a bare 500 or a hang — and
recovers by itself when the database is back, persistent connections included.

Real processes: gunicorn, and for the recovery a throwaway PostgreSQL cluster of our own (never
the machine's). Redis outages are in test_redis_outage.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.fault_stack import PrivatePostgres
from tests.conftest import ROOT, compose_command, free_port, stop

SECRET = "outage-" + "s" * 50
# A well-formed session key: looking it up needs the database.
SESSION = {"Cookie": "sessionid=" + "a" * 32}


def get(
    url: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], str]:
    data = b"{}" if method == "POST" else None
    request = urllib.request.Request(url, headers=headers or {}, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


@pytest.fixture(scope="module")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Collected static files: production pages (the 503 page too) need whitenoise's manifest."""
    folder = tmp_path_factory.mktemp("static")
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env={
            **production_env("postgres://x@127.0.0.1:1/x", folder.parent),
            "STATIC_ROOT": str(folder),
        },
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return folder


def production_env(database_url: str, folder: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "DATABASE_URL": database_url,
        # No broker is touched by these requests; an unused port keeps the machine's Redis out.
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0",
        "EVALSITE_ENV": "production",
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_COOKIES": "0",
        "EVALSITE_VAR_DIR": str(folder / "var"),
    }


def start_web(
    database_url: str, folder: Path, static_root: Path, workers: int = 2
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [
        f"127.0.0.1:{port}" if part == "0.0.0.0:8000" else part for part in compose_command("web")
    ]
    if "--workers" in command:
        at = command.index("--workers")
        del command[at : at + 2]
    env = {
        **production_env(database_url, folder),
        "STATIC_ROOT": str(static_root),
        "WEB_CONCURRENCY": str(workers),
    }
    log = open(folder / "web.log", "wb")  # noqa: SIM115 - the child keeps it
    web = subprocess.Popen(
        [*command, "--workers", str(workers)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        assert web.poll() is None, (folder / "web.log").read_text()
        try:
            get(f"{base}/healthz")
            return web, base
        except OSError:
            time.sleep(0.2)
    raise AssertionError("gunicorn did not answer")


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    cluster = PrivatePostgres()
    cluster.create()
    yield cluster
    cluster.destroy()


@pytest.mark.slow  # gunicorn
def test_without_its_database_the_site_answers_503_with_a_readable_message(
    tmp_path: Path, static_root: Path
) -> None:
    # Nothing listens on this port: every connection is refused.
    web, base = start_web(
        f"postgres://postgres@127.0.0.1:{free_port()}/evalsite", tmp_path, static_root
    )
    try:
        status, headers, body = get(f"{base}/healthz")
        assert (status, json.loads(body)) == (
            503,
            {"status": "unavailable", "database": "unreachable"},
        )
        assert headers["Retry-After"] == "5"

        # A signed-in annotator (a session cookie) opening a page: the session is in the database.
        status, headers, body = get(f"{base}/my/tasks/", SESSION)
        assert status == 503
        assert headers["Content-Type"].startswith("text/html")
        assert "<h1>Temporarily unavailable</h1>" in body
        assert "The database is unreachable right now" in body
        assert "Traceback" not in body

        # The API: a JSON error a client can act on, for reads and for submits.
        token = {"Authorization": "Token 0123456789abcdef", "Content-Type": "application/json"}
        status, headers, body = get(f"{base}/api/my/tasks/", token)
        assert status == 503
        assert headers["Content-Type"] == "application/json"
        assert json.loads(body)["code"] == "service_unavailable"
        status, _headers, body = get(
            f"{base}/api/assignments/{uuid.uuid4()}/submit/", token, method="POST"
        )
        assert status == 503
        assert "try again" in json.loads(body)["detail"]
    finally:
        stop(web)
    log = (tmp_path / "web.log").read_text()
    # Logged once per request, in one line, with the path.
    assert "database unavailable: GET /my/tasks/ answered 503" in log
    assert "health check: database unreachable" in log


def test_gunicorn_recovers_by_itself_when_postgresql_comes_back(
    tmp_path: Path, static_root: Path, private_postgres: PrivatePostgres
) -> None:
    # Persistent connections: after the restart each web process holds a dead one, which must
    # be replaced before use (CONN_HEALTH_CHECKS), not fail the first request.
    url = f"{private_postgres.url}?conn_max_age=600"
    web, base = start_web(url, tmp_path, static_root)
    try:
        # Every web process opens its persistent connection.
        assert {get(f"{base}/healthz")[0] for _ in range(8)} == {200}

        private_postgres.stop("fast")
        answers = {get(f"{base}/healthz")[0] for _ in range(4)}
        assert answers == {503}
        assert get(f"{base}/my/tasks/", SESSION)[0] == 503

        private_postgres.start()
        # No restart of gunicorn: every request succeeds again, the first one included.
        assert [get(f"{base}/healthz")[0] for _ in range(8)] == [200] * 8
        assert web.poll() is None
    finally:
        stop(web)


def test_only_connection_failures_count_as_the_database_being_down() -> None:
    import psycopg
    from django.db import OperationalError

    from evalsite.middleware import database_is_down

    def as_django_raises_it(cause: Exception) -> OperationalError:
        error = OperationalError(str(cause))
        error.__cause__ = cause
        return error

    # Refused or lost connections (no SQLSTATE), a server shutting down or starting up.
    assert database_is_down(as_django_raises_it(psycopg.OperationalError("connection refused")))
    assert database_is_down(as_django_raises_it(psycopg.errors.AdminShutdown()))
    assert database_is_down(as_django_raises_it(psycopg.errors.CannotConnectNow()))
    # One request's trouble is a 500 as before, not "the database is down".
    assert not database_is_down(as_django_raises_it(psycopg.errors.DeadlockDetected()))
    assert not database_is_down(as_django_raises_it(psycopg.errors.QueryCanceled()))
    assert not database_is_down(ValueError("unrelated"))
