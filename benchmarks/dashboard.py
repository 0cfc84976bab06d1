"""Benchmark of the campaign dashboard: 20 systems × 2,000 segments × 50,000 judgments.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/evalsite_dashboard_bench \\
        .venv/bin/python benchmarks/dashboard.py            # build, then time the page
    .venv/bin/python benchmarks/dashboard.py --time-only    # time the campaign built before

The database named in DATABASE_URL is dropped and created again (never point it at data you
keep). Everything is deterministic (seed 2024). The campaign, stored as the upload and the
annotation pages would store it (``bulk_create``):

- 2,000 segments in 200 documents, two reference sets, 20 systems × 2 runs (80,000
  translations), one upload record;
- three protocol configs — direct assessment (200 tasks × 100 items, 1 output per screen),
  adequacy and fluency and ranking (60 tasks × 100 items, 4 outputs per screen each), every task
  for 2 annotators (64,000 judgments needed) — and 100 annotators;
- 50,000 judgments (30,000 DA, 10,000 adequacy–fluency, 10,000 ranking) with 150,000 judgment
  values; seconds per item log-normal around 20 s with 2 % idle gaps of 10–60 minutes.

The stored results: the ``human`` document is computed by the real code
(:func:`metrics.human.human_compute` on those judgments); the ``metrics`` and ``correlations``
documents are **synthesised** with the shapes :func:`metrics.pipeline.finalize` writes (nine
metrics, 20 systems × 2 runs, 20 × 20 pairwise matrices, four human criteria × nine metrics with
20 points each, 9 × 9 Williams matrices), because scoring 80,000 translations with every metric
and 1,000 bootstrap resamples is the worker's job, not what is measured here. Their fingerprint
is the campaign's current one, so the page shows them as up to date.

Timed with Django's test client in this process (DEBUG off, as in production), after one warm-up
request: the page, the status endpoint the page polls, and the selector parts on their own.
Printed: median / min / max of each, the number of queries and the page's size. Target: the page
in ≤ 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/evalsite_dashboard_bench"
CAMPAIGN_NAME = "Dashboard benchmark"
SEED = 2024
N_SEGMENTS = 2_000
N_SYSTEMS = 20
N_RUNS = 2
N_ANNOTATORS = 100
TASK_SIZE = 100
ANNOTATIONS = 2
# (name, protocol, mode, outputs per screen, tasks, tasks judged): 30,000 + 10,000 + 10,000.
CONFIGS = (
    ("Direct assessment", "direct_assessment", "source", 1, 200, 150),
    ("Adequacy and fluency", "adequacy_fluency", "bilingual", 4, 60, 50),
    ("Ranking", "ranking", "bilingual", 4, 60, 50),
)
BATCH = 5_000
START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def recreate_database(url: str) -> None:
    """Drop and create the database of ``url`` (connecting to the server's ``postgres``)."""
    drop_database(url, create=True)


def drop_database(url: str, *, create: bool = False) -> None:
    """Drop the database of ``url`` if it exists, its sessions ended (connecting to the
    server's ``postgres``); with ``create``, create it again, empty."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name or name in ("postgres", "template0", "template1"):
        raise SystemExit(f"refusing to drop the database {name!r}")
    admin = urlunsplit(parts._replace(path="/postgres", query=""))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


# --------------------------------------------------------------------------------------------
# The campaign


def build() -> None:
    """A fresh database holding the benchmark campaign, its judgments and stored results."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.campaigns.services import campaign_create, user_make_organizer
    from annotation.models import (
        Assignment,
        Document,
        Item,
        ItemOutput,
        Judgment,
        JudgmentValue,
        ProtocolConfig,
        Reference,
        Run,
        Segment,
        System,
        Task,
        Translation,
        Upload,
    )

    rng = np.random.default_rng(SEED)
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    users = get_user_model()
    owner = users.objects.create_user(username="bench-owner", password="x" * 20)
    user_make_organizer(user=owner)
    annotators = users.objects.bulk_create(
        [users(username=f"annotator{a:03d}", password="!") for a in range(N_ANNOTATORS)]
    )
    campaign = campaign_create(
        owner=owner,
        organizers=[],
        name=CAMPAIGN_NAME,
        source_language="de",
        target_language="en",
        status="active",
    )
    campaign.annotators.add(*annotators)
    documents = Document.objects.bulk_create(
        [Document(campaign=campaign, external_id=f"doc{d:03d}", position=d) for d in range(200)]
    )
    segments = Segment.objects.bulk_create(
        [
            Segment(
                campaign=campaign,
                document=documents[s // 10],
                position=s,
                position_in_document=s % 10,
                external_id=str(s % 10 + 1),
                source=f"Quelle {s + 1}.",
            )
            for s in range(N_SEGMENTS)
        ],
        batch_size=BATCH,
    )
    Reference.objects.bulk_create(
        [
            Reference(segment=seg, index=i, label=f"ref{i}", text=f"Reference {i} of {s + 1}.")
            for s, seg in enumerate(segments)
            for i in range(2)
        ],
        batch_size=BATCH,
    )
    systems = System.objects.bulk_create(
        [System(campaign=campaign, name=f"system-{k + 1:02d}") for k in range(N_SYSTEMS)]
    )
    runs = Run.objects.bulk_create(
        [Run(system=s, name=f"run{r + 1}", position=r) for s in systems for r in range(N_RUNS)]
    )
    translations = Translation.objects.bulk_create(
        [
            Translation(run=run, segment=seg, text=f"{run.system.name} {run.name} {s + 1}.")
            for run in runs
            for s, seg in enumerate(segments)
        ],
        batch_size=BATCH,
    )
    translation_id = {(t.run_id, t.segment_id): t.pk for t in translations}
    Upload.objects.create(
        campaign=campaign,
        uploaded_by=owner,
        form=Upload.Form.PLAIN,
        files=["src.de", "ref.A.en", "ref.B.en"] + [f"{r}.txt" for r in runs],
        summary={"segments_added": N_SEGMENTS, "translations_added": len(translations)},
    )
    emit(f"  data: {time.perf_counter() - started:.1f} s")

    judgment_count = 0
    for name, protocol, mode, k, n_tasks, n_judged in CONFIGS:
        config = ProtocolConfig.objects.create(
            campaign=campaign,
            name=name,
            protocol=protocol,
            mode=mode,
            outputs_per_screen=k,
            items_per_task=TASK_SIZE,
            annotations_per_task=ANNOTATIONS,
        )
        tasks = Task.objects.bulk_create(
            [
                Task(
                    config=config,
                    position=t,
                    size=TASK_SIZE,
                    annotations_needed=ANNOTATIONS,
                    slots_taken=ANNOTATIONS if t < n_judged else 0,
                )
                for t in range(n_tasks)
            ]
        )
        items = Item.objects.bulk_create(
            [
                Item(
                    task=task,
                    position=i,
                    kind="real",
                    segment=segments[(t * TASK_SIZE + i) % N_SEGMENTS],
                )
                for t, task in enumerate(tasks)
                for i in range(TASK_SIZE)
            ],
            batch_size=BATCH,
        )
        outputs = []
        for n, item in enumerate(items):
            shown = rng.choice(N_SYSTEMS, size=k, replace=False)
            for slot, system in enumerate(shown.tolist()):
                run = runs[system * N_RUNS + (n % N_RUNS)]
                outputs.append(
                    ItemOutput(
                        item=item,
                        position=slot,
                        kind="real",
                        translation_id=translation_id[(run.pk, item.segment_id)],
                        system=systems[system],
                        run=run,
                        text="",
                    )
                )
        outputs = ItemOutput.objects.bulk_create(outputs, batch_size=BATCH)
        outputs_of = [outputs[n * k : (n + 1) * k] for n in range(len(items))]
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    task=task,
                    annotator=annotators[int(a)],
                    status=Assignment.Status.DONE,
                    origin=Assignment.Origin.PULL,
                    claimed_at=START,
                    completed_at=START + timedelta(hours=3),
                    items_done=TASK_SIZE,
                )
                for task in tasks[:n_judged]
                for a in rng.choice(N_ANNOTATORS, size=ANNOTATIONS, replace=False)
            ]
        )
        judgments, answers = [], []
        for assignment in assignments:
            clock = START
            task_items = range(
                assignment.task.position * TASK_SIZE, (assignment.task.position + 1) * TASK_SIZE
            )
            for n in task_items:
                seconds = float(rng.lognormal(np.log(20.0), 0.6))
                if rng.random() < 0.02:
                    seconds = float(rng.uniform(600, 3600))  # a break with the page open
                clock += timedelta(seconds=seconds)
                answer = _answer(protocol, outputs_of[n], rng)
                answers.append(answer)
                judgments.append(
                    Judgment(
                        item=items[n],
                        annotator_id=assignment.annotator_id,
                        assignment=assignment,
                        submission_id=uuid.UUID(int=judgment_count + len(judgments) + 1),
                        answer={str(o): v for o, v in answer.items()},
                        shown_at=clock - timedelta(seconds=seconds),
                        submitted_at=clock,
                        seconds=seconds,
                    )
                )
        judgments = Judgment.objects.bulk_create(judgments, batch_size=BATCH)
        JudgmentValue.objects.bulk_create(
            [
                JudgmentValue(judgment=j, output_id=o, criterion=c, value=v)
                for j, answer in zip(judgments, answers, strict=True)
                for o, values in answer.items()
                for c, v in values.items()
            ],
            batch_size=BATCH,
        )
        judgment_count += len(judgments)
        emit(f"  {name}: {len(judgments):,} judgments, {time.perf_counter() - started:.1f} s")
    store_results(campaign, owner)
    emit(f"built in {time.perf_counter() - started:.1f} s ({judgment_count:,} judgments)")


def _answer(protocol: str, outputs: list[Any], rng: np.random.Generator) -> dict[int, Any]:
    """Scores that follow the system's number (system-01 best), with noise."""
    quality = [1 - int(o.system.name.rsplit("-", 1)[1]) / (N_SYSTEMS + 1) for o in outputs]
    noisy = [q + float(rng.normal(0, 0.15)) for q in quality]
    if protocol == "ranking":
        order = np.argsort(-np.array(noisy), kind="stable")
        ranks = np.empty(len(outputs), dtype=int)
        ranks[order] = np.arange(1, len(outputs) + 1)
        return {o.pk: {"rank": float(r)} for o, r in zip(outputs, ranks, strict=True)}
    if protocol == "direct_assessment":
        return {
            o.pk: {"score": float(np.clip(round(100 * q), 0, 100))}
            for o, q in zip(outputs, noisy, strict=True)
        }
    return {
        o.pk: {
            "adequacy": float(np.clip(round(1 + 4 * q), 1, 5)),
            "fluency": float(np.clip(round(1 + 4 * (q + float(rng.normal(0, 0.1)))), 1, 5)),
        }
        for o, q in zip(outputs, noisy, strict=True)
    }


# --------------------------------------------------------------------------------------------
# Stored results


def store_results(campaign: Any, owner: Any) -> None:
    """A finished job with the three result documents (see the module docstring)."""
    from django.utils import timezone

    from annotation.models import System
    from metrics import pipeline
    from metrics.human import human_compute
    from metrics.models import AnalysisJob, AnalysisResult

    started = time.perf_counter()
    params = pipeline.analysis_params(campaign=campaign)
    fingerprint = pipeline.campaign_fingerprint(campaign=campaign, params=params)
    job = AnalysisJob.objects.create(
        campaign=campaign,
        status=AnalysisJob.Status.DONE,
        stage=AnalysisJob.Stage.FINISHED,
        fingerprint=fingerprint,
        params=params,
        progress_done=len(params["metrics"]) + 10,
        progress_total=len(params["metrics"]) + 10,
        dispatched=True,
        requested_by=owner,
        started=timezone.now(),
        finished=timezone.now(),
    )
    human = human_compute(campaign=campaign, seed=params["seed"])
    emit(f"  human analysis (real code): {time.perf_counter() - started:.1f} s")
    systems = list(System.objects.filter(campaign=campaign).prefetch_related("runs"))
    rng = np.random.default_rng(SEED + 1)
    metrics = synthetic_metrics(systems, params, rng)
    correlations = synthetic_correlations(human, metrics, params, rng)
    for kind, data in (
        (AnalysisResult.Kind.METRICS, metrics),
        (AnalysisResult.Kind.HUMAN, human),
        (AnalysisResult.Kind.CORRELATIONS, correlations),
    ):
        AnalysisResult.objects.create(
            campaign=campaign, job=job, kind=kind, fingerprint=fingerprint, data=data
        )


def metric_labels(names: list[str]) -> dict[str, tuple[str, bool, str]]:
    """(label, higher is better, signature) per metric; BERTR is described, not loaded."""
    from evalcore.scoring import make_metric

    out = {}
    for name in names:
        if name == "bertr":
            out[name] = ("BERTR", True, "BERTR|nrefs:2|model:all-MiniLM-L6-v2|version:synthetic")
            continue
        metric = make_metric(name)
        out[name] = (metric.label, metric.higher_is_better, metric.signature(n_refs=2).format())
    return out


def synthetic_metrics(systems: list[Any], params: dict[str, Any], rng: np.random.Generator) -> Any:
    """A ``metrics`` document with the keys :func:`metrics.pipeline.finalize` writes."""
    names = list(params["metrics"])
    labels = metric_labels(names)
    n = len(systems)
    baseline = systems[0]
    docs = []
    for name in names:
        label, higher, signature = labels[name]
        quality = np.linspace(70, 20, n) if higher else np.linspace(20, 70, n)
        rows = []
        for k, system in enumerate(systems):
            runs = []
            for run in system.runs.all():
                score = float(quality[k] + rng.normal(0, 1.5))
                runs.append(
                    {
                        "id": run.pk,
                        "name": run.name,
                        "score": score,
                        "ci_low": score - 1.8,
                        "ci_high": score + 1.8,
                        "boot_std": 0.9,
                    }
                )
            mean = float(np.mean([r["score"] for r in runs]))
            rows.append(
                {
                    "id": system.pk,
                    "name": system.name,
                    "runs": runs,
                    "mean": mean,
                    "s_sel": 0.9,
                    "s_opt": float(abs(runs[0]["score"] - runs[-1]["score"]) / 2),
                    "p_baseline": None if system == baseline else float(rng.uniform(0, 0.2)),
                    "delta_baseline": None if system == baseline else mean - quality[0],
                }
            )
        p = rng.uniform(0, 0.3, (n, n))
        delta = np.subtract.outer(quality, quality).T
        np.fill_diagonal(p, np.nan)
        docs.append(
            {
                "key": name,
                "label": label,
                "signature": signature,
                "higher_is_better": higher,
                "systems": rows,
                "pairwise": {
                    "systems": [s.pk for s in systems],
                    "pooled_runs": N_RUNS,
                    "bootstrap_p": _matrix(p),
                    "ar_p": _matrix(p * 0.9),
                    "delta": _matrix(delta),
                    "win_share": _matrix(np.where(np.isnan(p), np.nan, 1 - p)),
                },
            }
        )
    return {
        "version": params["version"],
        "params": {**params, "n_references": 2},
        "n_segments": N_SEGMENTS,
        "systems": [
            {
                "id": s.pk,
                "name": s.name,
                "runs": [{"id": r.pk, "name": r.name} for r in s.runs.all()],
            }
            for s in systems
        ],
        "baseline": {"id": baseline.pk, "name": baseline.name},
        "unavailable": {},
        "metrics": docs,
    }


def synthetic_correlations(
    human: dict[str, Any], metrics: dict[str, Any], params: dict[str, Any], rng: np.random.Generator
) -> Any:
    """A ``correlations`` document with the keys :mod:`metrics.correlations` writes."""
    out = []
    keys = [m["key"] for m in metrics["metrics"]]
    for crit in human["analysis"]["criteria"]:
        ranking = crit["kind"] == "ranking"
        point = {
            s["system_id"]: s["expected_wins"] if ranking else s["score"]
            for s in crit["systems"]
            if s["position"] > 0
        }
        entries = []
        for doc in metrics["metrics"]:
            sign = 1.0 if doc["higher_is_better"] else -1.0
            points = [
                {
                    "system_id": s["id"],
                    "name": s["name"],
                    "human": point[s["id"]],
                    "metric": sign * s["mean"],
                }
                for s in doc["systems"]
                if point.get(s["id"]) is not None
            ]

            def interval(value: float) -> dict[str, float]:
                return {"value": value, "low": value - 0.1, "high": min(1.0, value + 0.05)}

            segment: dict[str, Any] = {}
            if not ranking:
                segment["pearson_z"] = {"value": float(rng.uniform(0.2, 0.5)), "n": 30_000}
            segment["darr"] = {
                "tau": float(rng.uniform(0.1, 0.4)),
                "concordant": 6_000,
                "discordant": 3_000,
                "pairs": 9_000,
                "threshold": 0.0 if ranking else 25.0,
                "from": "ranks on one screen" if ranking else "DA translations of one segment",
            }
            entries.append(
                {
                    "key": doc["key"],
                    "label": doc["label"],
                    "oriented": sign < 0,
                    "system": {
                        "n": len(points),
                        "pearson": interval(float(rng.uniform(0.8, 0.95))),
                        "spearman": interval(float(rng.uniform(0.8, 0.95))),
                        "kendall": interval(float(rng.uniform(0.6, 0.85))),
                        "pairwise_accuracy": float(rng.uniform(0.8, 0.95)),
                        "points": points,
                        "fit": {"slope": 0.02, "intercept": -1.0},
                    },
                    "segment": segment,
                }
            )
        p = rng.uniform(0, 1, (len(keys), len(keys)))
        np.fill_diagonal(p, np.nan)
        out.append(
            {
                "config_id": crit["config_id"],
                "config_name": crit["config_name"],
                "criterion": crit["criterion"],
                "label": crit["criterion_label"],
                "kind": crit["kind"],
                "human_score": "Expected Wins" if ranking else "mean z",
                "metrics": entries,
                "williams": {"metrics": keys, "p": _matrix(p)},
            }
        )
    return {
        "version": params["version"],
        "params": {
            "bootstrap_samples": params["bootstrap_samples"],
            "seed": params["seed"],
            "da_pair_threshold": 25.0,
        },
        "criteria": out,
    }


def _matrix(values: np.ndarray) -> list[list[float | None]]:
    return [[float(v) if np.isfinite(v) else None for v in row] for row in values]


# --------------------------------------------------------------------------------------------
# Timing


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def line(name: str, seconds: list[float]) -> str:
    return (
        f"{name:<38} median {1000 * statistics.median(seconds):7.1f} ms   "
        f"min {1000 * min(seconds):7.1f}   max {1000 * max(seconds):7.1f}"
    )


def measure(repeat: int) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from annotation.models import Campaign, Judgment
    from metrics.models import AnalysisResult
    from metrics.queries import (
        analysis_results_latest,
        campaign_fingerprint_current,
        campaign_progress,
    )
    from metrics.selectors import dashboard_data

    campaign = Campaign.objects.get(name=CAMPAIGN_NAME)
    n_judgments = Judgment.objects.filter(item__task__config__campaign=campaign).count()
    sizes = {r.kind: len(str(r.data)) for r in AnalysisResult.objects.filter(campaign=campaign)}
    emit(
        f"campaign: {campaign.systems.count()} systems, {campaign.segments.count():,} segments, "
        f"{n_judgments:,} judgments; stored documents (characters): "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(sizes.items()))
    )
    client = Client(HTTP_HOST="localhost")
    client.force_login(campaign.owner)
    page_url = reverse("campaign_dashboard", args=[campaign.pk])
    status_url = reverse("campaign_dashboard_status", args=[campaign.pk])

    def get(url: str) -> Any:
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return response

    with CaptureQueriesContext(connection) as queries:
        page = get(page_url)
    emit(f"page: {len(page.content):,} bytes, {len(queries)} queries")
    with CaptureQueriesContext(connection) as queries:
        get(status_url)
    emit(f"status endpoint: {len(queries)} queries")
    started = time.perf_counter()
    sum(range(10**7))
    emit(
        f"machine: sum(range(10**7)) takes {time.perf_counter() - started:.2f} s here "
        f"(load average {os.getloadavg()[0]:.1f}); an idle recent core takes about 0.2 s"
    )
    emit(f"timings over {repeat} requests after a warm-up:")
    emit(line("dashboard page (GET, whole response)", timed(lambda: get(page_url), repeat)))
    emit(line("status endpoint (GET)", timed(lambda: get(status_url), repeat)))
    emit(
        line(
            "  dashboard_data (selector)", timed(lambda: dashboard_data(campaign=campaign), repeat)
        )
    )
    emit(
        line(
            "  stale check (fingerprint)",
            timed(lambda: campaign_fingerprint_current(campaign=campaign), repeat),
        )
    )
    emit(line("  progress aggregates", timed(lambda: campaign_progress(campaign=campaign), repeat)))
    emit(
        line(
            "  latest stored results (3 documents)",
            timed(lambda: analysis_results_latest(campaign=campaign), repeat),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--time-only", action="store_true", help="time the campaign built before")
    parser.add_argument("--repeat", type=int, default=10, help="timed requests per measurement")
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", DEFAULT_URL)
    os.environ.setdefault("DEBUG", "false")
    if not args.time_only:
        recreate_database(os.environ["DATABASE_URL"])
    setup_django()
    if not args.time_only:
        build()
    measure(args.repeat)


if __name__ == "__main__":
    main()
