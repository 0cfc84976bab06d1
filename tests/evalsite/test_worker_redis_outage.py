"""A real worker (the compose file's command) on a Redis of its own survives that Redis going
away while it runs a task: it keeps running, reconnects when Redis is back, its task ends, and a
task queued after the outage is processed — no restart by compose needed."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.fault_stack import PrivateRedis
from evalsite.celery import app
from metrics.models import WiringProbe
from tests.conftest import ROOT, compose_command, stop

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SLOW_TASK = "tests.support.slow_task"  # a task that holds the worker for a while


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A redis-server of the test's own on a free port, without persistence (never the suite's
    Redis, which others use)."""
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def wait_for_probe(token: str, timeout: float, worker: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert worker.poll() is None, "the worker exited:\n" + log.read_text()[-4000:]
        probe = WiringProbe.objects.filter(token=token).first()
        if probe is not None:
            return probe.worker_hostname
        time.sleep(0.2)
    raise AssertionError(f"no probe {token} within {timeout} s:\n" + log.read_text()[-4000:])


def send(url: str, name: str, *args: object) -> None:
    with app.connection_for_write(url) as connection:
        app.send_task(name, args=list(args), connection=connection)


def test_a_busy_worker_reconnects_after_a_redis_outage_and_takes_new_tasks(
    own_redis: PrivateRedis, test_database_url: str, tmp_path: Path
) -> None:
    # The worker retries for as long as Redis is away (Celery's default gives up after 100 tries).
    assert app.conf.broker_connection_max_retries is None
    log = tmp_path / "worker.log"
    env = {
        "PATH": os.environ["PATH"],
        "DATABASE_URL": test_database_url,
        "CELERY_BROKER_URL": own_redis.url,
        "EVALSITE_VAR_DIR": str(tmp_path / "var"),
    }
    with open(log, "wb") as output:
        worker = subprocess.Popen(
            [
                *compose_command("worker"),
                "--hostname=outage@%h",
                "--include=tests.support.slow_task",
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)

        # The worker holds a task of 8 s when Redis goes away for 4 s, its data lost.
        token = uuid.uuid4().hex
        send(own_redis.url, "tests.slow", token, 8)
        wait_for_probe(f"{token}-started", 30, worker, log)
        own_redis.stop()
        time.sleep(4)
        assert worker.poll() is None, log.read_text()
        own_redis.start()

        # The running task ends, and a task queued after the outage is processed, by the same
        # worker process.
        assert wait_for_probe(f"{token}-ended", 30, worker, log).startswith("outage@")
        after = uuid.uuid4().hex
        send(own_redis.url, "metrics.ping", after)
        assert wait_for_probe(after, 60, worker, log).startswith("outage@")
        assert worker.poll() is None
        text = log.read_text(errors="replace")
        assert "Connection to broker lost" in text
        assert "Unrecoverable error" not in text
    finally:
        stop(worker)
