"""The processes we ship, started for real: the compose file's worker and web commands on
PostgreSQL and Redis. (`make run`'s steps and `manage.py serve` on the embedded default:
test_make_run.py.)"""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from metrics.models import WiringProbe
from metrics.tasks import ping
from tests.conftest import ROOT, compose_command, compose_file, free_port, stop, wait_for_http
from tests.support.processes import production_environment


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_on_redis_runs_a_task_that_writes_to_the_database(
    celery_worker_process,  # type: ignore[no-untyped-def]
) -> None:
    celery_worker_process(name="wiring")
    token = uuid.uuid4().hex
    hostname = ping.delay(token).get(timeout=60)
    probe = WiringProbe.objects.get(token=token)
    assert probe.worker_hostname == hostname
    assert hostname.startswith("wiring@")


@pytest.mark.django_db(transaction=True)
def test_gunicorn_serves_the_app_with_the_compose_web_command(
    test_database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """The README's production steps: `.env.example` changed in nothing but the services' and
    folders' addresses of this machine; the compose healthcheck passes; pages work behind a TLS
    proxy for the configured host."""
    env = production_environment(
        DATABASE_URL=test_database_url,
        CELERY_BROKER_URL=redis_url,
        CELERY_RESULT_BACKEND=redis_url,
        CACHE_URL=redis_url,
        STATIC_ROOT=str(tmp_path / "static"),  # the Dockerfile's /app/staticfiles
        EVALSITE_VAR_DIR=str(tmp_path / "var"),  # the compose volume at /app/var
    )
    assert env["EVALSITE_ENV"] == "production"
    host = env["ALLOWED_HOSTS"].split(",")[0]
    # The compose file's one-shot migrate service, then collectstatic as the Dockerfile does.
    for command in (
        compose_command("migrate"),
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
    ):
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
    port = free_port()
    command = [
        f"127.0.0.1:{port}" if part == "0.0.0.0:8000" else part for part in compose_command("web")
    ]
    assert f"127.0.0.1:{port}" in command
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", server)
        # The compose healthcheck, run as written but on this test's port.
        check = [
            part.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
            for part in compose_file()["services"]["web"]["healthcheck"]["test"][1:]
        ]
        check[0] = sys.executable if check[0] == "python" else check[0]
        done = subprocess.run(check, env=env, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        # A page for the configured host, as the TLS proxy in front forwards it.
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/login/",
            headers={"Host": host, "X-Forwarded-Proto": "https"},
        )
        with urllib.request.urlopen(request) as response:
            html = response.read().decode()
            cookies = response.headers.get_all("Set-Cookie") or []
        assert "Log in" in html
        assert any("csrftoken" in c and "Secure" in c for c in cookies), cookies
        css = html.split('rel="stylesheet" href="')[1].split('"')[0]
        assert css.startswith("/static/css/evalsite."), css
        assert css.endswith(".css"), css  # whitenoise's hashed name
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{css}", headers={"Host": host, "X-Forwarded-Proto": "https"}
        )
        with urllib.request.urlopen(request) as response:
            assert response.status == 200
            assert b"--accent" in response.read()
        # Any other host is refused, health check or not.
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/login/", headers={"Host": "attacker.example"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 400
    finally:
        stop(server)
