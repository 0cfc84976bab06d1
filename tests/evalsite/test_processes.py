"""The processes we ship, started for real: the compose file's worker and web commands on
PostgreSQL and Redis, and `manage.py serve` on the embedded default (what `make run` starts)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from metrics.management.commands.serve import WORKER_GRACE_SECONDS
from metrics.models import WiringProbe
from metrics.tasks import ping
from tests.conftest import ROOT, compose_command, compose_file, free_port, stop, wait_for_http
from tests.support.processes import child_pids, production_environment


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


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _django(env: dict[str, str], code: str, timeout: float, **settings: str) -> str:
    """What a Python snippet with Django set up, run as another process, prints."""
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "evalsite.settings", **settings},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _run_background_work_on_the_embedded_services(env: dict[str, str], tmp_path: Path) -> None:
    # A task queued by another process is picked up by serve's worker from the file queue.
    queued = _django(
        env,
        "from metrics.tasks import ping\n"
        "from metrics.models import WiringProbe\n"
        "ping.delay('embedded').get(timeout=60)\n"
        "print(WiringProbe.objects.get(token='embedded').worker_hostname)",
        timeout=120,
    )
    assert queued.strip().startswith("celery@")
    assert (tmp_path / "var" / "db.sqlite3").exists()
    # The whole analysis pipeline (chunks as a group, final step) on the file-system broker.
    analysed = _django(
        env,
        "import time\n"
        "from annotation.models import Campaign\n"
        "from metrics.models import AnalysisJob, AnalysisResult\n"
        "from metrics.pipeline import metric_settings\n"
        "from metrics.services import analysis_request\n"
        "c = Campaign.objects.get()\n"
        "ms = metric_settings(c.pk)\n"
        "ms.metrics, ms.ar_trials = ['bleu', 'ter'], 200\n"
        "ms.save()\n"
        "Campaign.objects.filter(pk=c.pk).update(analysis_settings={'resamples': 100})\n"
        "job = analysis_request(campaign=c).job\n"
        "for _ in range(600):\n"
        "    job.refresh_from_db()\n"
        "    if job.status in ('done', 'failed'): break\n"
        "    time.sleep(0.5)\n"
        "print(job.status, job.error, sorted(job.results.values_list('kind', flat=True)))",
        timeout=400,
        EVALSITE_CHUNK_SEGMENTS="20",
    )
    assert analysed.split("\n")[-2] == "done  ['correlations', 'human', 'metrics']"
    # A task build, as the setup page queues it, on the file-system broker and SQLite.
    built = _django(
        env,
        "import time\n"
        "from annotation.tasking.background import task_build_request\n"
        "from annotation.models import Campaign, ProtocolConfig\n"
        "c = Campaign.objects.get()\n"
        "config = ProtocolConfig.objects.create(campaign=c, name='DA 2',\n"
        "    protocol='direct_assessment', mode='source', outputs_per_screen=1)\n"
        "build = task_build_request(config=config).build\n"
        "for _ in range(240):\n"
        "    build.refresh_from_db()\n"
        "    if not build.active: break\n"
        "    time.sleep(0.5)\n"
        "print(build.status, build.error, build.tasks == config.tasks.count() > 0)",
        timeout=180,
    )
    assert built.split("\n")[-2] == "done  True"


def _check_nothing_was_left_behind(workers: list[int], log: Path) -> None:
    # Stopping serve stops its worker too: no process of this run is left behind.
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in workers):
        assert time.monotonic() < deadline, f"serve's worker {workers} outlived it"
        time.sleep(0.2)
    # A run and its stop log no errors and no warnings of the broker connection (its pool
    # killed under it at the stop; "No hostname was supplied" at every connection).
    output = log.read_text()
    assert "Warm shutdown" in output
    assert "ERROR" not in output, output
    assert "No hostname" not in output, output
    # Nothing of the embedded run landed in the working tree.
    assert not (ROOT / "control").exists()


@pytest.mark.slow  # make run's steps
def test_make_run_prepares_the_demo_and_its_results_once(tmp_path: Path) -> None:
    """`make run`'s steps before it serves (migrate, load_demo, analyse --demo) on a clean
    environment: SQLite and a file-system broker only."""
    env = {"PATH": os.environ["PATH"], "EVALSITE_VAR_DIR": str(tmp_path / "var")}
    _manage(env, "migrate", "--noinput")
    assert "organizer / evalsite-demo" in _manage(env, "load_demo")
    # The demo's results are computed before the app is served, so its dashboard is complete
    # from the first page; a second run finds them current.
    assert "results stored in" in _manage(env, "analyse", "--demo")
    assert "the stored results are up to date" in _manage(env, "analyse", "--demo")
    assert (tmp_path / "var" / "db.sqlite3").exists()
    assert not (ROOT / "control").exists()


@pytest.mark.slow  # make run's steps
def test_serve_runs_the_demo_with_background_work_and_no_other_server(tmp_path: Path) -> None:
    """`make run`'s last step, `manage.py serve`, on a clean environment with the demo loaded:
    its worker does the background work on SQLite and a file-system broker only."""
    env = {"PATH": os.environ["PATH"], "EVALSITE_VAR_DIR": str(tmp_path / "var")}
    _manage(env, "migrate", "--noinput")
    assert "organizer / evalsite-demo" in _manage(env, "load_demo")
    port = free_port()
    log = tmp_path / "serve.log"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", server)
        _run_background_work_on_the_embedded_services(env, tmp_path)
        workers = child_pids(server.pid)
        assert workers, "serve started no worker"
    finally:
        # serve gives its worker a grace period for a warm shutdown before it kills it: wait
        # longer than that, or serve itself is killed first and its worker is orphaned.
        stop(server, timeout=WORKER_GRACE_SECONDS + 25)
    _check_nothing_was_left_behind(workers, log)
