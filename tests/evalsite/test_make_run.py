"""`make run` on a clean environment, SQLite and a file-system broker only: its steps before it
serves (migrate, load_demo, analyse --demo), and its last step, `manage.py serve`, whose worker
does the background work with no other server.

Every step runs once, as a subprocess of the checkout under test, in a var folder of its own
that starts as a copy of the one the step before left (as the recipe leaves it to the next);
the tests check what each step did, and the server serves all of this module's tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from metrics.management.commands.serve import WORKER_GRACE_SECONDS
from tests.conftest import ROOT, free_port, stop, wait_for_http
from tests.support.processes import child_pids

pytestmark = [pytest.mark.slow, pytest.mark.shared_setup]  # make run's steps


def _env(var: Path) -> dict[str, str]:
    """A clean environment: nothing set but the folder of the embedded default's state."""
    return {"PATH": os.environ["PATH"], "EVALSITE_VAR_DIR": str(var)}


def _manage(var: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(var),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _django(var: Path, code: str, timeout: float, **settings: str) -> str:
    """What a Python snippet with Django set up, run as another process, prints."""
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        cwd=ROOT,
        env={**_env(var), "DJANGO_SETTINGS_MODULE": "evalsite.settings", **settings},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass(frozen=True)
class Step:
    """A step's var folder, as the step left it, and what it printed."""

    var: Path
    output: str


def _copy_of(step: Step, folder: Path) -> Path:
    var = folder / "var"
    shutil.copytree(step.var, var)
    return var


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Step:
    var = tmp_path_factory.mktemp("migrate") / "var"
    return Step(var, _manage(var, "migrate", "--noinput"))


@pytest.fixture(scope="module")
def demo_loaded(migrated: Step, tmp_path_factory: pytest.TempPathFactory) -> Step:
    var = _copy_of(migrated, tmp_path_factory.mktemp("load_demo"))
    return Step(var, _manage(var, "load_demo"))


@pytest.fixture(scope="module")
def demo_analysed(demo_loaded: Step, tmp_path_factory: pytest.TempPathFactory) -> Step:
    var = _copy_of(demo_loaded, tmp_path_factory.mktemp("analyse"))
    return Step(var, _manage(var, "analyse", "--demo"))


def test_make_run_migrates_a_new_sqlite_database(migrated: Step) -> None:
    assert (migrated.var / "db.sqlite3").exists()
    assert not (ROOT / "control").exists()


def test_make_run_loads_the_demo_and_prints_its_logins(demo_loaded: Step) -> None:
    assert "organizer / evalsite-demo" in demo_loaded.output


def test_make_run_computes_the_demo_s_results_before_it_serves(demo_analysed: Step) -> None:
    # So the demo's dashboard is complete from the first page.
    assert "results stored in" in demo_analysed.output
    assert not (ROOT / "control").exists()


def test_a_second_analyse_finds_the_demo_s_results_up_to_date(demo_analysed: Step) -> None:
    assert "the stored results are up to date" in _manage(demo_analysed.var, "analyse", "--demo")


class Serve:
    """`manage.py serve` on a var folder, its output appended to ``log``; :meth:`running`
    starts it unless it runs (a test may have stopped it)."""

    def __init__(self, var: Path, log: Path) -> None:
        self.var = var
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None
        self._started_at = 0  # where this start's output begins in the log

    def running(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            port = free_port()
            self._output = self.log.open("ab")
            self._started_at = self._output.tell()
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
                cwd=ROOT,
                env=_env(self.var),
                stdout=self._output,
                stderr=subprocess.STDOUT,
            )
            wait_for_http(f"http://127.0.0.1:{port}/healthz", self.process)
        return self.process

    def worker_ready(self, timeout: float = 60) -> None:
        """Wait until serve's worker has started (and handles a stop as a warm shutdown)."""
        deadline = time.monotonic() + timeout
        while b" ready." not in self.log.read_bytes()[self._started_at :]:
            assert time.monotonic() < deadline, f"serve's worker not ready in {timeout} s"
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None:
            # serve gives its worker a grace period for a warm shutdown before it kills it: wait
            # longer than that, or serve itself is killed first and its worker is orphaned.
            stop(self.process, timeout=WORKER_GRACE_SECONDS + 25)
        if self._output is not None:
            self._output.close()


@pytest.fixture(scope="module")
def serve(demo_analysed: Step, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """serve, started once for this module's tests, where `make run` starts it: after the
    steps above."""
    folder = tmp_path_factory.mktemp("serve")
    server = Serve(_copy_of(demo_analysed, folder), folder / "serve.log")
    yield server
    server.stop()


def test_serve_s_worker_runs_a_task_queued_by_another_process(serve: Serve) -> None:
    server = serve.running()
    token = uuid.uuid4().hex
    queued = _django(
        serve.var,
        "from metrics.tasks import ping\n"
        "from metrics.models import WiringProbe\n"
        f"ping.delay('{token}').get(timeout=60)\n"
        f"print(WiringProbe.objects.get(token='{token}').worker_hostname)",
        timeout=120,
    )
    assert queued.strip().startswith("celery@")
    assert child_pids(server.pid), "serve started no worker"
    assert (serve.var / "db.sqlite3").exists()


def test_serve_s_worker_runs_the_whole_analysis_pipeline_on_the_file_broker(serve: Serve) -> None:
    """Chunks as a group, then the final step."""
    serve.running()
    analysed = _django(
        serve.var,
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


def test_serve_s_worker_builds_tasks_as_the_setup_page_queues_them(serve: Serve) -> None:
    serve.running()
    built = _django(
        serve.var,
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


def test_stopping_serve_stops_its_worker_and_logs_no_error(serve: Serve) -> None:
    workers = child_pids(serve.running().pid)
    assert workers, "serve started no worker"
    serve.worker_ready()
    serve.stop()
    # Stopping serve stops its worker too: no process of this run is left behind.
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in workers):
        assert time.monotonic() < deadline, f"serve's worker {workers} outlived it"
        time.sleep(0.2)
    # A run and its stop log no errors and no warnings of the broker connection (its pool
    # killed under it at the stop; "No hostname was supplied" at every connection).
    output = serve.log.read_text()
    assert "Warm shutdown" in output
    assert "ERROR" not in output, output
    assert "No hostname" not in output, output
    # Nothing of the embedded run landed in the working tree.
    assert not (ROOT / "control").exists()
