"""Shared fixtures: users in every role, campaigns with data, and the real services.

The suite runs against PostgreSQL and Redis (``make test`` points it there) and a real Chromium.
When one of them is missing the tests that need it fail; nothing is skipped.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from tests.factories import (
    make_campaign,
    make_user,
)
from tests.support.browser_csp import CspCheckedBrowser
from tests.support.xdist_services import redis_database_per_worker

# Playwright's sync API runs an event loop in the test thread; Django refuses ORM calls from a
# thread with a running loop unless told that this is deliberate (the test thread is synchronous).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    # Password hashing is deliberately slow; the tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # New judgments would schedule recomputations on the shared test broker; the tests that are
    # about scheduling switch it on.
    settings.EVALSITE_AUTO_ANALYSIS = False
    redis_database_per_worker(settings)


OUTPUT = ROOT / "test-output"

# Markers follow from what a test uses, so that no test can be left unmarked: ``make test-fast``
# deselects them, and runs with the services unreachable, so that a test missing here fails
# there rather than passing on a developer's running PostgreSQL or Redis.
BROWSER_FIXTURES = frozenset({"browser", "page", "chromium_path"})
SERVICE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
        "redis_url",
        "test_database_url",
        "own_redis",
        "private_postgres",
    }
)
# Real processes take seconds to start (a Celery worker, a server of the test's own).
SLOW_FIXTURES = frozenset(
    {"celery_worker_process", "module_celery_workers", "own_redis", "private_postgres"}
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if (
            used & BROWSER_FIXTURES
            or used & SERVICE_FIXTURES
            or item.get_closest_marker("django_db")
        ):
            item.add_marker(pytest.mark.services)
        if used & SLOW_FIXTURES:
            item.add_marker(pytest.mark.slow)
    # Modules marked shared_setup build an expensive module fixture (a job on a worker, `make
    # run`'s steps) that their tests share: they run first, so that pytest-xdist's work stealing,
    # which takes the tests queued last, never splits one between two processes (each would
    # build it again). A stable sort: every other test keeps its place.
    items.sort(key=lambda item: item.get_closest_marker("shared_setup") is None)


@pytest.fixture(autouse=True)
def _english_after_each_test() -> Iterator[None]:
    """A request in German activates German in the test thread, and Django keeps it there: reset
    it after every test, so no test's outcome depends on the ones run before it."""
    yield
    from django.utils import translation

    translation.activate("en")


@pytest.fixture
def owner(db: None) -> AbstractBaseUser:
    return make_user("owner", organizer=True)


@pytest.fixture
def co_organizer(db: None) -> AbstractBaseUser:
    return make_user("coorg", organizer=True)


@pytest.fixture
def other_organizer(db: None) -> AbstractBaseUser:
    return make_user("outsider", organizer=True)


@pytest.fixture
def annotator(db: None) -> AbstractBaseUser:
    return make_user("annotator")


@pytest.fixture
def campaign(owner, co_organizer, annotator):  # type: ignore[no-untyped-def]
    campaign = make_campaign(owner=owner, organizers=[co_organizer], with_data=True)
    campaign.annotators.add(annotator)
    return campaign


@pytest.fixture
def as_role(owner, co_organizer, annotator, other_organizer):  # type: ignore[no-untyped-def]
    """A logged-in test client per role: owner, co_organizer, annotator, other_organizer, or
    anonymous — the five roles every permission test goes through."""
    from django.test import Client

    from tests.factories import PASSWORD

    users = {
        "owner": owner,
        "co_organizer": co_organizer,
        "annotator": annotator,
        "other_organizer": other_organizer,
        "anonymous": None,
    }

    def client_for(role: str) -> Client:
        client = Client()
        if users[role] is not None:
            assert client.login(username=users[role].username, password=PASSWORD)
        return client

    return client_for


@pytest.fixture(scope="session")
def output_dir() -> Path:
    """Where tests leave artefacts to look at (screenshots); git-ignored."""
    path = OUTPUT
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def test_database_url(transactional_db: None) -> str:
    """A URL for the test database, for processes we start (worker, gunicorn)."""
    return _test_database_url()


def _test_database_url() -> str:
    from django.db import connection

    settings = connection.settings_dict
    assert settings["ENGINE"].endswith("postgresql"), (
        "these tests need PostgreSQL: set DATABASE_URL (make test does)"
    )
    user = settings["USER"] or "postgres"
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or "5432"
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return f"postgres://{user}{password}@{host}:{port}/{settings['NAME']}"


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The Redis broker of the suite; fails (never skips) when it is not reachable."""
    import redis
    from django.conf import settings

    url = settings.CELERY_BROKER_URL
    assert url.startswith("redis://"), (
        f"these tests need Redis: set CELERY_BROKER_URL to a redis:// URL (got {url!r})"
    )
    client = redis.Redis.from_url(url, socket_connect_timeout=3)
    client.ping()
    # A fresh queue: messages left by an interrupted earlier run must not reach this run's
    # workers. Only a numbered database other than 0 is flushed (make test uses 15).
    if client.connection_pool.connection_kwargs.get("db", 0) != 0:
        client.flushdb()
    return url


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("EVALSITE_CHROMIUM", "/usr/bin/chromium")
    assert Path(path).exists(), (
        f"Chromium not found at {path}; install Debian's chromium (make test does)"
    )
    return path


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[CspCheckedBrowser]:
    """Chromium; the CSP violations of every context opened through it are collected (and fail
    the test, see ``_no_csp_violations``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS)
        yield CspCheckedBrowser(browser)
        browser.close()


@pytest.fixture(autouse=True)
def _no_csp_violations(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that drives the browser fails when a page broke the Content-Security-Policy, even
    if what it asserts still held: the browser suite is the proof that the pages work under it."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser: CspCheckedBrowser = request.getfixturevalue("browser")
    browser.violations.clear()
    yield
    _pages_closed_and_server_idle(browser)
    violations, browser.violations[:] = list(browser.violations), []
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)


def _pages_closed_and_server_idle(browser: CspCheckedBrowser, wait: float = 10.0) -> None:
    """Close every context a test left open and wait for the live server's request threads to
    end, before the database is flushed: a page left open (a polling analysis page, a screen
    still loading) would otherwise reach the server during the flush, or during the next test,
    and a request holding row locks deadlocks the flush's TRUNCATE."""
    import threading

    for context in list(browser.contexts):
        context.close()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and any(
        "process_request_thread" in thread.name for thread in threading.enumerate()
    ):
        time.sleep(0.05)


@pytest.fixture
def page(browser, live_server):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def venv_tool(name: str) -> str:
    """An executable installed beside the running Python (celery, gunicorn)."""
    path = Path(sys.executable).parent / name
    assert path.exists(), f"{name} is not installed in {path.parent}"
    return str(path)


def compose_file() -> dict[str, Any]:
    """The parsed docker-compose.yml."""
    import yaml

    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def compose_command(service: str) -> list[str]:
    """The command of a docker-compose service, so tests run exactly what production runs."""
    command = list(compose_file()["services"][service]["command"])
    return (
        [venv_tool(command[0]), *command[1:]]
        if command[0] != "python"
        else [
            sys.executable,
            *command[1:],
        ]
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_http(url: str, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {timeout} s")


def stop(process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stop a process we started, with its own children when it leads a process group: SIGTERM,
    then SIGKILL after ``timeout`` seconds (give a process that stops children of its own more
    than its own grace period, or it is killed before it could kill them)."""
    if process.poll() is not None:
        return
    try:
        group = os.getpgid(process.pid) == process.pid
    except ProcessLookupError:
        return
    (os.killpg if group else os.kill)(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        (os.killpg if group else os.kill)(process.pid, signal.SIGKILL)
        process.wait()


class CeleryWorkers:
    """The compose file's worker command started as real processes on Redis and the test
    database, each logging to ``folder/worker-<name>.log``; :meth:`stop_all` stops them."""

    def __init__(self, database_url: str, redis_url: str, folder: Path) -> None:
        self.database_url = database_url
        self.redis_url = redis_url
        self.folder = folder
        self.started: list[subprocess.Popen[bytes]] = []

    def start(
        self, *extra: str, name: str = "w1", env: dict[str, str] | None = None, wait: bool = True
    ) -> subprocess.Popen[bytes]:
        """Start one (``wait=False``: do not wait for its answer, see :meth:`wait_ready`)."""
        env = {
            "PATH": os.environ["PATH"],
            "DATABASE_URL": self.database_url,
            "CELERY_BROKER_URL": self.redis_url,
            "EVALSITE_VAR_DIR": str(self.folder / "var"),
            **(env or {}),
        }
        log = open(self.folder / f"worker-{name}.log", "wb")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(
            [*compose_command("worker"), f"--hostname={name}@%h", *extra],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so a test can kill the worker with all its children
        )
        self.started.append(process)
        if wait:
            self.wait_ready(process, name=name)
        return process

    def wait_ready(self, process: subprocess.Popen[bytes], *, name: str) -> None:
        """Wait until the worker ``name`` answers a ping."""
        from evalsite.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, (self.folder / f"worker-{name}.log").read_text()
            replies = app.control.ping(timeout=1)
            if any(name in host for reply in replies for host in reply):
                return
        raise AssertionError("the worker did not answer a ping within 60 s")

    def stop_all(self) -> None:
        for process in self.started:
            stop(process)


@pytest.fixture
def celery_worker_process(test_database_url: str, redis_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Start the compose file's worker command as a real process on Redis and the test
    database; returns a function that starts one (tests may start several or kill them)."""
    workers = CeleryWorkers(test_database_url, redis_url, tmp_path)
    yield workers.start
    workers.stop_all()


@pytest.fixture(scope="module")
def module_celery_workers(  # type: ignore[no-untyped-def]
    django_db_setup, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CeleryWorkers]:
    """Workers kept for all the tests of a module (started by a module fixture that commits
    the data they work on, and empties the database after the module's tests)."""
    workers = CeleryWorkers(_test_database_url(), redis_url, tmp_path_factory.mktemp("workers"))
    yield workers
    workers.stop_all()
