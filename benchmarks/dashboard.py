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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dashboard_results import (  # noqa: E402 - after the path
    synthetic_correlations,
    synthetic_metrics,
)

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


@dataclass
class CampaignData:
    """The campaign with its people and data: what the judgments are built on."""

    owner: Any
    annotators: list[Any]
    campaign: Any
    segments: list[Any]
    systems: list[Any]
    runs: list[Any]
    translation_id: dict[tuple[int, int], int]  # per (run id, segment id)


def build() -> None:
    """A fresh database holding the benchmark campaign, its judgments and stored results."""
    from django.core.management import call_command

    rng = np.random.default_rng(SEED)
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    data = campaign_data()
    emit(f"  data: {time.perf_counter() - started:.1f} s")

    judgment_count = 0
    for name, protocol, mode, k, n_tasks, n_judged in CONFIGS:
        config = config_create(data, name, protocol, mode, k)
        tasks, items = tasks_create(config, data.segments, n_tasks=n_tasks, n_judged=n_judged)
        outputs_of = outputs_create(items, k, data, rng)
        assignments = assignments_create(tasks[:n_judged], data.annotators, rng)
        count = judgments_create(
            assignments, items, outputs_of, protocol, rng, judgment_count=judgment_count
        )
        judgment_count += count
        emit(f"  {name}: {count:,} judgments, {time.perf_counter() - started:.1f} s")
    store_results(data.campaign, data.owner)
    emit(f"built in {time.perf_counter() - started:.1f} s ({judgment_count:,} judgments)")


def campaign_data() -> CampaignData:
    """The organizer, the annotators and the campaign with its documents, segments, references,
    systems, runs, translations and upload record."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns.services import campaign_create, user_make_organizer
    from annotation.models import (
        Document,
        Reference,
        Run,
        Segment,
        System,
        Translation,
        Upload,
    )

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
    return CampaignData(owner, annotators, campaign, segments, systems, runs, translation_id)


def config_create(data: CampaignData, name: str, protocol: str, mode: str, k: int) -> Any:
    """A protocol config of the campaign, ``k`` outputs per screen."""
    from annotation.models import ProtocolConfig

    return ProtocolConfig.objects.create(
        campaign=data.campaign,
        name=name,
        protocol=protocol,
        mode=mode,
        outputs_per_screen=k,
        items_per_task=TASK_SIZE,
        annotations_per_task=ANNOTATIONS,
    )


def tasks_create(
    config: Any, segments: list[Any], *, n_tasks: int, n_judged: int
) -> tuple[list[Any], list[Any]]:
    """The config's tasks (the first ``n_judged`` of them taken) and their items."""
    from annotation.models import Item, Task

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
    return tasks, items


def outputs_create(
    items: list[Any], k: int, data: CampaignData, rng: np.random.Generator
) -> list[list[Any]]:
    """``k`` outputs of different systems shown on each item; the outputs of each item."""
    from annotation.models import ItemOutput

    runs, systems, translation_id = data.runs, data.systems, data.translation_id
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
    return [outputs[n * k : (n + 1) * k] for n in range(len(items))]


def assignments_create(
    tasks: list[Any], annotators: list[Any], rng: np.random.Generator
) -> list[Any]:
    """Each task done by ``ANNOTATIONS`` annotators."""
    from annotation.models import Assignment

    assignments: list[Any] = Assignment.objects.bulk_create(
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
            for task in tasks
            for a in rng.choice(N_ANNOTATORS, size=ANNOTATIONS, replace=False)
        ]
    )
    return assignments


def judgments_create(
    assignments: list[Any],
    items: list[Any],
    outputs_of: list[list[Any]],
    protocol: str,
    rng: np.random.Generator,
    *,
    judgment_count: int,
) -> int:
    """A judgment of every item of every assignment, with its values, timed as an annotator
    works; how many. ``judgment_count``: the judgments stored before (their submission ids are
    numbered on)."""
    from annotation.models import Judgment, JudgmentValue

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
    return len(judgments)


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
    human = human_compute(campaign=campaign)
    emit(f"  human analysis (real code): {time.perf_counter() - started:.1f} s")
    systems = list(System.objects.filter(campaign=campaign).prefetch_related("runs"))
    rng = np.random.default_rng(SEED + 1)
    metrics = synthetic_metrics(systems, params, rng, n_runs=N_RUNS, n_segments=N_SEGMENTS)
    correlations = synthetic_correlations(human, metrics, params, rng)
    for kind, data in (
        (AnalysisResult.Kind.METRICS, metrics),
        (AnalysisResult.Kind.HUMAN, human),
        (AnalysisResult.Kind.CORRELATIONS, correlations),
    ):
        AnalysisResult.objects.create(
            campaign=campaign, job=job, kind=kind, fingerprint=fingerprint, data=data
        )


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
    measure_analysis_page(client, campaign, repeat)


def measure_analysis_page(client: Any, campaign: Any, repeat: int) -> None:
    """The analysis page as the campaign's setting shows it (the stored human result, fresh)
    against the same page analysing in the request (another seed, the cache emptied first:
    what every first view cost before the page read stored results)."""
    from django.core.cache import cache
    from django.urls import reverse

    url = reverse("campaign_analysis", args=[campaign.pk])

    def stored() -> None:
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        assert b"computed in the background at" in response.content, "no fresh stored result"

    def computed() -> None:
        cache.clear()
        response = client.get(url + "?seed=7&analyse=1")
        assert response.status_code == 200, response.status_code
        assert b"Computed now with the settings above" in response.content

    stored_times = timed(stored, repeat)
    computed_times = timed(computed, max(3, repeat // 3))
    emit(line("analysis page, stored result (GET)", stored_times))
    emit(line("analysis page, analysed in the request", computed_times))
    ratio = statistics.median(computed_times) / statistics.median(stored_times)
    emit(f"  the stored result's page is {ratio:.1f}x faster (medians, same run)")


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
