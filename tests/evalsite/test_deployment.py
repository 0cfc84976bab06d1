"""The production deployment as docker-compose.yml describes it, proven without a Docker engine:
every variable the app reads is in `.env.example`, `check --deploy` is clean with its values, and
a whole campaign runs over HTTP against gunicorn and a separate Celery worker started with the
compose file's commands, each with as many processes as the concurrency variables say."""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from evalsite.env import Env
from tests.conftest import ROOT, compose_command, free_port, stop, wait_for_http
from tests.factories import PASSWORD, make_user
from tests.support.processes import child_pids, production_environment
from tests.support.proxy_client import HOST, Client

APP_PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")
# Env's getters (string, integer, boolean, url, ...): each takes the variable's name first.
ENV_READERS = {
    name for name, member in vars(Env).items() if callable(member) and not name.startswith("_")
}


def _is_os_environ(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _variable_read(node: ast.AST) -> str | None:
    """The variable a node reads: ``env.<getter>("X")`` on our ``Env`` helper,
    ``os.environ.get("X")``, ``os.getenv("X")`` or ``os.environ["X"]``."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return _literal(node.slice) if _is_os_environ(node.value) else None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
        return None
    func, receiver = node.func, node.func.value
    reads = (
        (func.attr in ENV_READERS and isinstance(receiver, ast.Name) and receiver.id == "env")
        or (func.attr == "get" and _is_os_environ(receiver))
        or (func.attr == "getenv" and isinstance(receiver, ast.Name) and receiver.id == "os")
    )
    return _literal(node.args[0]) if reads else None


def variables_read_by_the_app() -> dict[str, str]:
    """Every environment variable read in the app's packages, with where.
    ``os.environ.setdefault`` only gives libraries a default (DJANGO_SETTINGS_MODULE, the
    Hugging Face offline switches) and is not a setting of ours."""
    found: dict[str, str] = {}
    for package in APP_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                name = _variable_read(node)
                if name is not None:
                    found.setdefault(name, f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    return found


def variables_listed_in_env_example() -> set[str]:
    """Names set in `.env.example`, or shown commented out (``# NAME=value``) where leaving them
    unset is the advice."""
    pattern = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=")
    return {
        match.group(1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if (match := pattern.match(line))
    }


def test_env_example_lists_every_variable_the_app_reads_and_nothing_else() -> None:
    read = variables_read_by_the_app()
    # The scan sees the settings' variables, gunicorn's worker count and Celery's concurrency.
    assert {"SECRET_KEY", "DATABASE_URL", "WEB_CONCURRENCY", "CELERY_WORKER_CONCURRENCY"} <= set(
        read
    ), sorted(read)
    listed = variables_listed_in_env_example()
    missing = {name: where for name, where in read.items() if name not in listed}
    assert not missing, f"read by the app but not in .env.example: {missing}"
    unknown = listed - set(read)
    assert not unknown, f"in .env.example but read by nothing: {sorted(unknown)}"


def test_check_deploy_is_clean_with_the_production_settings(tmp_path: Path) -> None:
    env = production_environment(
        STATIC_ROOT=str(tmp_path / "static"), EVALSITE_VAR_DIR=str(tmp_path / "var")
    )
    assert len(env["SECRET_KEY"]) >= 50
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout, done.stdout
    assert "WARNING" not in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("service", "variable", "value", "message"),
    [
        ("web", "WEB_CONCURRENCY", "0", "WEB_CONCURRENCY must be at least 1, got 0."),
        (
            "worker",
            "CELERY_WORKER_CONCURRENCY",
            "two",
            "CELERY_WORKER_CONCURRENCY must be an integer, got 'two'.",
        ),
    ],
)
def test_a_bad_process_count_stops_the_service_naming_the_variable(
    service: str, variable: str, value: str, message: str, tmp_path: Path
) -> None:
    # gunicorn only checks its configuration; the worker stops while loading the settings.
    command = [*compose_command(service), *(["--check-config"] if service == "web" else [])]
    env = production_environment(EVALSITE_VAR_DIR=str(tmp_path / "var"), **{variable: value})
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert message in done.stderr, done.stderr


GC_PROBE = """\
import gc
import json


def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(gc.get_threshold()).encode()]
"""


def test_web_workers_run_the_cycle_collector_at_the_configured_threshold(tmp_path: Path) -> None:
    """The compose web command's config sets each worker's collector thresholds (fewer
    collections per request; evalsite/gunicorn_config.py). A worker of that command, serving a
    probe app instead of ours, reports them."""
    from evalsite.gunicorn_config import GC_THRESHOLD

    assert GC_THRESHOLD[0] > 700  # above Python's default, or this tests nothing
    (tmp_path / "gc_probe.py").write_text(GC_PROBE)
    port = free_port()
    command = [
        f"127.0.0.1:{port}"
        if p == "0.0.0.0:8000"
        else "gc_probe:application"
        if p == "evalsite.wsgi:application"
        else p
        for p in compose_command("web")
    ]
    assert "gc_probe:application" in command
    env = production_environment(EVALSITE_VAR_DIR=str(tmp_path / "var"), WEB_CONCURRENCY="1")
    env["PYTHONPATH"] = str(tmp_path)
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", server)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert tuple(json.loads(response.read())) == GC_THRESHOLD
    finally:
        stop(server)


# --- The end-to-end campaign over HTTP --------------------------------------------------------

SOURCE = [f"Satz Nummer {n} handelt vom Wetter in der Stadt {n}." for n in range(1, 13)]
REFERENCE = [f"Sentence number {n} is about the weather in city {n}." for n in range(1, 13)]
SYSTEMS = {
    "alpha": [f"Sentence number {n} is about the weather in the city {n}." for n in range(1, 13)],
    "beta": [f"Sentence {n} talks of weather in town {n}." for n in range(1, 13)],
    "gamma": [f"Number {n} weather city sentence." for n in range(1, 13)],
}
# The score an annotator gives a system's translation (plus the annotator's own offset of 0-2);
# QC outputs get what a careful annotator gives: the reference shown as a translation is near
# perfect, a damaged translation (a "bad reference") is poor.
SCORES = {"alpha": 80, "beta": 55, "gamma": 20}
REFERENCE_SCORE, DAMAGED_SCORE = 90, 5


def lines(texts: list[str]) -> bytes:
    return ("\n".join(texts) + "\n").encode()


def annotate_until_finished(client: Client, assignment_id: str, offset: int) -> int:
    """Answer every item of a task from the texts shown; returns the number of judgments."""
    score_of = {text: SCORES[name] for name, texts in SYSTEMS.items() for text in texts}
    score_of.update(dict.fromkeys(REFERENCE, REFERENCE_SCORE))
    submitted = 0
    while True:
        screen = client.get(f"/api/assignments/{assignment_id}/current/")
        assert screen.status == 200, screen.text
        item = screen.json()
        answer = {
            str(output["id"]): {
                criterion["key"]: score_of.get(output["text"], DAMAGED_SCORE) + offset
                for criterion in item["criteria"]
            }
            for output in item["outputs"]
        }
        submit = {
            "item": item["item"],
            "revision": item["revision"],
            "submission_id": str(uuid.uuid4()),
            "answer": answer,
        }
        stored = client.post_json(f"/api/assignments/{assignment_id}/submit/", submit)
        assert stored.status == 201, stored.text
        submitted += 1
        if submitted == 1:
            # A client that resends after a lost answer: the same judgment, no second one.
            again = client.post_json(f"/api/assignments/{assignment_id}/submit/", submit)
            assert again.status == 200, again.text
            assert again.json()["replay"] is True
            assert again.json()["judgment"] == stored.json()["judgment"]
        if stored.json()["finished"]:
            return submitted


def make_organizer_with_a_real_password_hash(username: str) -> Any:
    """The test settings hash passwords with MD5 for speed; gunicorn runs with the production
    hashers, so the organizer who logs in there gets a PBKDF2 hash."""
    user = make_user(username, organizer=True)
    hasher = PBKDF2PasswordHasher()
    user.password = hasher.encode(PASSWORD, hasher.salt())
    user.save(update_fields=["password"])
    return user


def _start_the_worker_while_static_files_collect(
    env: dict[str, str],
    celery_worker_process,  # type: ignore[no-untyped-def]
) -> None:
    """The worker has as many processes as CELERY_WORKER_CONCURRENCY says."""
    from evalsite.celery import app

    # The Dockerfile collects the static files at build time (here while the worker starts); the
    # database is migrated already (the compose file's migrate service: test_processes.py).
    collect = subprocess.Popen(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    celery_worker_process(name="e2e", env=env)
    stats = app.control.inspect(timeout=5).stats() or {}
    (pool,) = [s["pool"] for host, s in stats.items() if host.startswith("e2e@")]
    assert pool["max-concurrency"] == 3
    assert len(pool["processes"]) == 3
    _, errors = collect.communicate(timeout=120)
    assert collect.returncode == 0, errors.decode()


def _wait_for_two_web_workers(server: subprocess.Popen[bytes]) -> None:
    # gunicorn forks its workers one by one: wait for the second, then make sure that no
    # third follows while the organizer starts working.
    deadline = time.monotonic() + 30
    while len(child_pids(server.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(child_pids(server.pid)) == 2


def _create_the_campaign_and_upload(api: Client, port: int, server: subprocess.Popen[bytes]) -> int:
    # Plain HTTP is sent to HTTPS; HTTPS answers carry HSTS.
    plain = Client(port).get("/login/", secure=False)
    assert plain.status == 301
    assert plain.headers["Location"] == f"https://{HOST}/login/"

    # The organizer creates the campaign and uploads its data through the API.
    created = api.post_json(
        "/api/campaigns/",
        {
            "name": "WMT-like de-en",
            "source_language": "de",
            "target_language": "en",
            "status": "active",
        },
    )
    assert created.status == 201, created.text
    assert "max-age=3600" in created.headers["Strict-Transport-Security"]
    campaign: int = created.json()["id"]
    uploaded = api.post_files(
        f"/api/campaigns/{campaign}/upload/",
        [
            ("source", "source.de", lines(SOURCE)),
            ("references", "ref.en", lines(REFERENCE)),
            *[("systems", f"{name}.txt", lines(texts)) for name, texts in SYSTEMS.items()],
        ],
    )
    assert uploaded.status == 201, uploaded.text
    assert len(child_pids(server.pid)) == 2
    return campaign


def _log_in_and_set_up_the_protocol(port: int, campaign: int) -> tuple[Client, int]:
    """The organizer's browser session and the new protocol config's id."""
    # Then logs in to the pages (a session with CSRF) to set up the protocol and tasks.
    browser = Client(port)
    assert browser.get("/login/").status == 200
    login = browser.post_form("/login/", [("username", "org"), ("password", PASSWORD)])
    assert login.status == 302, login.text
    assert "sessionid" in browser.cookies
    settings_url = f"/campaigns/{campaign}/analysis-settings/"
    saved = browser.post_form(
        settings_url,
        [
            ("metrics", "bleu"),
            ("metrics", "chrf"),
            ("baseline", ""),
            ("tokenize", "13a"),
            ("resamples", "100"),
            ("ar_trials", "100"),
            ("seed", "7"),
        ],
    )
    assert saved.status == 302, saved.text
    protocol = browser.post_form(
        f"/campaigns/{campaign}/annotation/",
        [
            ("name", "DA"),
            ("protocol", "direct_assessment"),
            ("mode", "source"),
            ("outputs_per_screen", "1"),
            ("items_per_task", "10"),
            ("annotations_per_task", "1"),
            ("qc_bad_reference", "10"),
            ("qc_repeat", "5"),
            ("qc_reference", "5"),
            ("context_segments", "1"),
            ("hold_minutes", "120"),
            ("seed", "12345"),
            ("instructions", ""),
        ],
    )
    assert protocol.status == 302, protocol.text
    config = int(protocol.headers["Location"].rsplit("#config-", 1)[1])
    return browser, config


def _build_and_assign_the_tasks(
    browser: Client, campaign: int, config: int, annotators: list[Any]
) -> None:
    from annotation.models import Task

    built = browser.post_form(f"/campaigns/{campaign}/annotation/{config}/build/", [])
    assert built.status == 302, built.text
    # The worker process builds the tasks; the setup page's poll says when.
    deadline = time.monotonic() + 60
    while True:
        polled = browser.get(f"/campaigns/{campaign}/annotation/builds.json")
        assert polled.status == 200, polled.text
        (build,) = polled.json()["builds"]
        if not build["active"] or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert build["status"] == "done", build
    n_tasks = Task.objects.filter(config_id=config).count()
    assert build["tasks"] == n_tasks
    assert n_tasks >= len(annotators)
    for n, annotator in enumerate(annotators, start=1):
        given = browser.post_form(
            f"/campaigns/{campaign}/annotation/{config}/assign/",
            [("task", str(n)), ("username", annotator.username)],
        )
        assert given.status == 302, given.text


def _annotate_every_task(port: int, config: int, annotators: list[Any]) -> int:
    """Returns the number of judgments submitted."""
    from rest_framework.authtoken.models import Token

    from annotation.models import Judgment

    # Each annotator finds the task in the API and judges every item of it.
    submitted = 0
    for offset, annotator in enumerate(annotators):
        client = Client(port, token=Token.objects.create(user=annotator).key)
        (assignment,) = client.get("/api/my/tasks/").json()
        submitted += annotate_until_finished(client, assignment["id"], offset)
    assert Judgment.objects.filter(item__task__config_id=config).count() == submitted
    return submitted


def _run_the_analysis(api: Client, campaign: int) -> None:
    # The organizer asks for the analysis; the worker process computes it.
    asked = api.request("POST", f"/api/campaigns/{campaign}/analysis/")
    assert asked.status == 202, asked.text
    assert asked.json()["queued"] is True
    job = asked.json()["job"]
    deadline = time.monotonic() + 120
    while job["status"] not in ("done", "failed") and time.monotonic() < deadline:
        time.sleep(0.5)
        job = api.get(f"/api/campaigns/{campaign}/analysis/").json()
    assert job["status"] == "done", job
    assert job["id"] == asked.json()["job"]["id"]
    assert {"metrics", "human"} <= set(job["result_kinds"]), job
    metrics = api.get(f"/api/campaigns/{campaign}/results/metrics/")
    assert metrics.status == 200, metrics.text
    assert metrics.json()["job"] == job["id"]
    stored = json.dumps(metrics.json()["data"])
    assert all(name in stored for name in SYSTEMS), stored[:500]
    assert '"bleu"' in stored
    assert '"chrf"' in stored


def _check_the_reports(api: Client, campaign: int, submitted: int, n_annotators: int) -> None:
    # The reports download, and hold what was submitted.
    base = f"/api/campaigns/{campaign}/reports"
    judgments = api.get(f"{base}/judgments.csv")
    assert judgments.status == 200, judgments.text
    rows = list(csv.DictReader(io.StringIO(judgments.text)))
    # Direct assessment: one output and one criterion per judgment, so one row each.
    assert len(rows) == submitted, judgments.text[:2000]
    assert len({r["annotator"] for r in rows}) == n_annotators
    # The system's own translations, shown once or repeated (not damaged, not references).
    system_rows = [r for r in rows if r["item_type"] in ("SYSTEM", "REPEAT")]
    assert {r["system"] for r in system_rows} == set(SYSTEMS)
    wrong = [r for r in system_rows if float(r["raw"]) - SCORES[r["system"]] not in (0, 1, 2)]
    assert not wrong, wrong[:3]
    systems_csv = api.get(f"{base}/systems.csv")
    assert systems_csv.status == 200, systems_csv.text
    ranked = sorted(
        (r for r in csv.DictReader(io.StringIO(systems_csv.text)) if r["system"] in SYSTEMS),
        key=lambda r: float(r["mean_raw"]),
        reverse=True,
    )
    assert [r["system"] for r in ranked] == ["alpha", "beta", "gamma"], systems_csv.text
    systems_json = api.get(f"{base}/systems.json")
    assert systems_json.status == 200, systems_json.text
    assert all(name in systems_json.text for name in SYSTEMS)
    latex = api.get(f"{base}/systems.tex")
    assert latex.status == 200, latex.text
    assert "\\begin{tabular}" in latex.text
    assert all(name in latex.text for name in SYSTEMS)
    annotators_csv = api.get(f"{base}/annotators.csv")
    assert annotators_csv.status == 200, annotators_csv.text
    raters = list(csv.DictReader(io.StringIO(annotators_csv.text)))
    assert len(raters) == n_annotators, annotators_csv.text
    assert sum(int(r["n_rows"]) for r in raters) == submitted, annotators_csv.text
    assert all(r["included"] == "1" for r in raters), annotators_csv.text


@pytest.mark.django_db(transaction=True)
def test_a_campaign_runs_end_to_end_over_http_on_gunicorn_and_a_celery_worker(
    test_database_url: str,
    redis_url: str,
    tmp_path: Path,
    celery_worker_process,  # type: ignore[no-untyped-def]
) -> None:
    """Also: the two processes have as many workers as the concurrency variables say (values
    other than the defaults, so that the count shows they were read)."""
    from rest_framework.authtoken.models import Token

    env = production_environment(
        DATABASE_URL=test_database_url,
        CELERY_BROKER_URL=redis_url,
        CELERY_RESULT_BACKEND=redis_url,
        CACHE_URL=redis_url,
        STATIC_ROOT=str(tmp_path / "static"),
        EVALSITE_VAR_DIR=str(tmp_path / "var"),
        # The organizer asks for the analysis below; a scheduled one would still be waiting in
        # the queue when this test ends (automatic scheduling: test_analysis_scheduling.py).
        EVALSITE_AUTO_ANALYSIS="0",
        WEB_CONCURRENCY="2",
        CELERY_WORKER_CONCURRENCY="3",
    )
    organizer = make_organizer_with_a_real_password_hash("org")
    annotators = [make_user(f"rater{n}") for n in range(3)]
    _start_the_worker_while_static_files_collect(env, celery_worker_process)
    port = free_port()
    command = [f"127.0.0.1:{port}" if p == "0.0.0.0:8000" else p for p in compose_command("web")]
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=sink)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", server)
        api = Client(port, token=Token.objects.create(user=organizer).key)
        _wait_for_two_web_workers(server)
        campaign = _create_the_campaign_and_upload(api, port, server)
        browser, config = _log_in_and_set_up_the_protocol(port, campaign)
        _build_and_assign_the_tasks(browser, campaign, config, annotators)
        submitted = _annotate_every_task(port, config, annotators)
        _run_the_analysis(api, campaign)
        _check_the_reports(api, campaign, submitted, len(annotators))

        # Web and worker kept nothing on their own disks: var/ (the compose volume) is only the
        # embedded default's, so neither needs a shared or backed-up folder.
        assert not (tmp_path / "var").exists()
    except AssertionError as failure:
        # The server's side of a failure, in pytest's report.
        raise AssertionError(f"{failure}\n--- gunicorn ---\n{log.read_text()[-5000:]}") from None
    finally:
        stop(server)
