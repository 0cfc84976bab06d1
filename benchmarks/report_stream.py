"""Benchmark of the normalised judgment report: a million judgment values streamed from PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/evalsite_bench \\
        .venv/bin/python benchmarks/report_stream.py            # build, then stream CSV
    .venv/bin/python benchmarks/report_stream.py --rows 200000  # a smaller campaign
    .venv/bin/python benchmarks/report_stream.py --stream-only --format jsonl

The database named in DATABASE_URL is dropped and created again (never point it at data you
keep). The campaign is the deterministic synthetic direct-assessment campaign of
``benchmarks/human_analysis.py`` (200 annotators, 20 systems + the reference, 5,000 segments,
tasks of 100 items with 10 bad references, 5 repeats and 5 references, two careless
annotators), stored as it would be by the annotation pages: tasks, items, shown outputs (QC
outputs pointing to their originals), assignments, judgments with their answers and one
JudgmentValue per row. The rows go in with COPY, ids chosen up front, so that building takes
about a minute instead of hours.

The report is then produced in a fresh process (so that its peak memory is the report's, not
the builder's) exactly as the download view does: pseudonyms ensured, then every chunk of
``annotation.reports.stream.judgment_report_stream`` consumed. Printed: time to the first byte
(the
normalisation pass), total time, rows per second, bytes, and peak RSS
(``VmHWM`` of ``/proc/self/status``).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalcore.human import Judgments  # noqa: E402 - after the path

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/evalsite_bench"
CAMPAIGN_NAME = "Report stream benchmark"
COPY_CHUNK = 200_000
N_ANNOTATORS = 200
N_SYSTEMS = 20
N_SEGMENTS = 5_000
CARELESS = (17, 123)
SEED = 2024


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB. Linux's VmHWM starts afresh at exec, unlike
    ``getrusage``'s ru_maxrss, which a child started by the builder would inherit."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def recreate_database(url: str) -> None:
    """Drop and create the database of ``url`` (connecting to the server's ``postgres``)."""
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name or name in ("postgres", "template0", "template1"):
        raise SystemExit(f"refusing to drop the database {name!r}")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


def copy(table: str, columns: dict[str, Sequence[Any] | np.ndarray]) -> None:
    """COPY parallel columns into ``table`` in chunks; None and NaN become NULL."""
    from django.db import connection

    names = list(columns)
    n = len(next(iter(columns.values())))
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg 3
        for start in range(0, n, COPY_CHUNK):
            stop = min(n, start + COPY_CHUNK)
            texts = [_as_text(columns[name][start:stop]) for name in names]
            buffer = io.StringIO()
            buffer.writelines("\t".join(row) + "\n" for row in zip(*texts, strict=True))
            with raw.copy(f"COPY {table} ({', '.join(names)}) FROM STDIN") as pipe:
                pipe.write(buffer.getvalue())


def _as_text(values: Sequence[Any] | np.ndarray) -> Iterable[str]:
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "f":
            finite = np.isfinite(values)
            whole = bool(np.all(np.mod(values[finite], 1) == 0))
            # Ids kept in float arrays (NaN = NULL) must be written as integers.
            shown = np.where(finite, values, 0).astype(np.int64) if whole else values
            text = shown.astype(str)
            text[~finite] = "\\N"
            return text.tolist()
        if values.dtype.kind in "iu":
            return values.astype(str).tolist()
    return ["\\N" if v is None else str(v) for v in values]


def build(rows: int) -> None:
    """A fresh database holding one campaign with ``rows`` judgment values."""
    from django.core.management import call_command
    from django.utils import timezone

    from annotation.models import ProtocolConfig
    from evalcore.human import synthetic_scores

    tasks_per_annotator = rows // (N_ANNOTATORS * 100)
    if tasks_per_annotator < 1 or rows % (N_ANNOTATORS * 100):
        raise SystemExit(f"--rows must be a multiple of {N_ANNOTATORS * 100}")
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    campaign, annotator_ids = campaign_create()
    now = timezone.now()
    texts_copy(campaign, now)
    config = ProtocolConfig.objects.create(
        campaign=campaign, name="DA", protocol="direct_assessment", mode="source", seed=SEED
    )
    emit(f"texts stored in {time.perf_counter() - started:.1f} s")

    synthetic = synthetic_scores(
        n_annotators=N_ANNOTATORS,
        n_systems=N_SYSTEMS,
        n_segments=N_SEGMENTS,
        tasks_per_annotator=tasks_per_annotator,
        careless=CARELESS,
        seed=SEED,
    ).judgments
    n_tasks = tasks_copy(synthetic, config, now)
    judgments_copy(synthetic, annotator_ids)
    sequences_reset()
    emit(
        f"built {len(synthetic):,} judgment values ({n_tasks:,} tasks) in "
        f"{time.perf_counter() - started:.1f} s; builder peak RSS {peak_rss_mb():.0f} MB"
    )


def campaign_create() -> tuple[Any, np.ndarray]:
    """The organizer's campaign and its annotators; the campaign and the annotators' ids."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns.services import user_make_organizer
    from annotation.models import Campaign

    user_model = get_user_model()
    owner = user_model.objects.create_user(username="bench-owner", password="x" * 20)
    user_make_organizer(user=owner)
    campaign = Campaign.objects.create(
        name=CAMPAIGN_NAME, source_language="de", target_language="en", owner=owner
    )
    annotators = []
    for a in range(N_ANNOTATORS):
        user = user_model(username=f"bench-annotator-{a:03d}")
        user.set_unusable_password()
        annotators.append(user)
    annotator_ids = np.array(
        [u.pk for u in user_model.objects.bulk_create(annotators)], dtype=np.int64
    )
    return campaign, annotator_ids


def texts_copy(campaign: Any, now: Any) -> None:
    """The campaign's documents, segments, references, systems, runs and translations."""
    n_docs = N_SEGMENTS // 100
    copy(
        "annotation_document",
        {
            "id": np.arange(1, n_docs + 1),
            "campaign_id": [campaign.pk.hex] * n_docs,
            "external_id": [f"doc{d + 1}" for d in range(n_docs)],
            "position": np.arange(n_docs),
        },
    )
    segment = np.arange(N_SEGMENTS)
    copy(
        "annotation_segment",
        {
            "id": segment + 1,
            "campaign_id": [campaign.pk.hex] * N_SEGMENTS,
            "document_id": segment // 100 + 1,
            "position": segment,
            "position_in_document": segment % 100,
            "external_id": (segment % 100 + 1).astype(str),
            "source": [f"Quelle {s}." for s in segment.tolist()],
        },
    )
    copy(
        "annotation_reference",
        {
            "id": segment + 1,
            "segment_id": segment + 1,
            "index": np.zeros(N_SEGMENTS, dtype=np.int64),
            "label": ["ref"] * N_SEGMENTS,
            "text": [f"Reference {s}." for s in segment.tolist()],
        },
    )
    system = np.arange(N_SYSTEMS)
    copy(
        "annotation_system",
        {
            "id": system + 1,
            "campaign_id": [campaign.pk.hex] * N_SYSTEMS,
            "name": [f"system-{s:02d}" for s in system.tolist()],
            "created": [now.isoformat()] * N_SYSTEMS,
        },
    )
    copy(
        "annotation_run",
        {
            "id": system + 1,
            "system_id": system + 1,
            "name": ["main"] * N_SYSTEMS,
            "position": np.zeros(N_SYSTEMS, dtype=np.int64),
        },
    )
    pairs = np.arange(N_SYSTEMS * N_SEGMENTS)
    copy(
        "annotation_translation",
        {
            "id": pairs + 1,
            "run_id": pairs // N_SEGMENTS + 1,
            "segment_id": pairs % N_SEGMENTS + 1,
            "text": [f"system {p // N_SEGMENTS} says {p % N_SEGMENTS}." for p in pairs.tolist()],
        },
    )


def tasks_copy(synthetic: Judgments, config: Any, now: Any) -> int:
    """The tasks of 100 items, the items and their shown outputs (QC outputs pointing to their
    originals) of the synthetic judgments; how many tasks."""
    from evalcore.human import ItemType

    n = len(synthetic)
    rows_ = np.arange(n)
    task = rows_ // 100
    n_tasks = n // 100
    kind_names = np.array(["real", "repeat", "reference", "bad_ref"])
    kind = kind_names[synthetic.item_type]
    is_reference = synthetic.item_type == ItemType.REFERENCE
    # References copy the task's first real item, as the task builder's reference items do.
    item_original = np.where(
        synthetic.original >= 0, synthetic.original + 1, np.where(is_reference, task * 100 + 1, 0)
    )
    output_original = np.where(synthetic.original >= 0, synthetic.original + 1, 0)
    translation = synthetic.system * N_SEGMENTS + synthetic.segment + 1
    copy(
        "annotation_task",
        {
            "id": np.arange(1, n_tasks + 1),
            "config_id": np.full(n_tasks, config.pk),
            "position": np.arange(n_tasks),
            "size": np.full(n_tasks, 100),
            "annotations_needed": np.ones(n_tasks, dtype=np.int64),
            "slots_taken": np.zeros(n_tasks, dtype=np.int64),
            "created": [now.isoformat()] * n_tasks,
        },
    )
    copy(
        "annotation_item",
        {
            "id": rows_ + 1,
            "task_id": task + 1,
            "position": rows_ % 100,
            "kind": kind,
            "segment_id": synthetic.segment + 1,
            "original_id": np.where(item_original > 0, item_original, np.nan),
        },
    )
    copy(
        "annotation_itemoutput",
        {
            "id": rows_ + 1,
            "item_id": rows_ + 1,
            "position": np.zeros(n, dtype=np.int64),
            "kind": kind,
            "translation_id": np.where(is_reference, np.nan, translation),
            "system_id": np.where(is_reference, np.nan, synthetic.system + 1),
            "run_id": np.where(is_reference, np.nan, synthetic.system + 1),
            "reference_id": np.where(is_reference, synthetic.segment + 1, np.nan),
            "original_id": np.where(output_original > 0, output_original, np.nan),
            "text": np.where(is_reference, "Reference.", "Translation."),
        },
    )
    return n_tasks


def judgments_copy(synthetic: Judgments, annotator_ids: np.ndarray) -> None:
    """An assignment per task, the judgments with their answers and one JudgmentValue per row,
    timed as the synthetic judgments are."""
    n = len(synthetic)
    rows_ = np.arange(n)
    task = rows_ // 100
    n_tasks = n // 100
    task_annotator = synthetic.annotator[::100]
    assignment = [str(uuid.uuid4()) for _ in range(n_tasks)]
    start = np.datetime64("2024-05-01T09:00:00")
    milliseconds = np.round(synthetic.seconds * 1000).astype(np.int64).astype("timedelta64[ms]")
    submitted = start + np.cumsum(milliseconds)
    shown = submitted - milliseconds
    copy(
        "annotation_assignment",
        {
            "id": assignment,
            "task_id": np.arange(1, n_tasks + 1),
            "annotator_id": annotator_ids[task_annotator],
            "status": ["done"] * n_tasks,
            "origin": ["push"] * n_tasks,
            "claimed_at": [f"{t}+00" for t in submitted[::100].tolist()],
            "expires_at": [None] * n_tasks,
            "completed_at": [f"{t}+00" for t in submitted[99::100].tolist()],
            "items_done": np.full(n_tasks, 100),
            "shown_item_id": [None] * n_tasks,
            "shown_at": [None] * n_tasks,
        },
    )
    scores = synthetic.score.tolist()
    copy(
        "annotation_judgment",
        {
            "id": rows_ + 1,
            "item_id": rows_ + 1,
            "annotator_id": annotator_ids[synthetic.annotator],
            "assignment_id": [assignment[t] for t in task.tolist()],
            "revision": np.ones(n, dtype=np.int64),
            "submission_id": [str(uuid.uuid4()) for _ in range(n)],
            "answer": [f'{{"{i + 1}": {{"score": {scores[i]}}}}}' for i in range(n)],
            "shown_at": [f"{t}+00" for t in shown.tolist()],
            "submitted_at": [f"{t}+00" for t in submitted.tolist()],
            "seconds": synthetic.seconds,
        },
    )
    copy(
        "annotation_judgmentvalue",
        {
            "id": rows_ + 1,
            "judgment_id": rows_ + 1,
            "output_id": rows_ + 1,
            "criterion": ["score"] * n,
            "value": synthetic.score,
        },
    )


def sequences_reset() -> None:
    """The id sequences past the ids chosen up front, and fresh planner statistics."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in (
            "annotation_document",
            "annotation_segment",
            "annotation_reference",
            "annotation_system",
            "annotation_run",
            "annotation_translation",
            "annotation_task",
            "annotation_item",
            "annotation_itemoutput",
            "annotation_judgment",
            "annotation_judgmentvalue",
        ):
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT max(id) FROM {table}))"
            )
        cursor.execute("ANALYZE")


def stream(file_format: str) -> None:
    """Produce the report as the download view does and count its rows and bytes."""
    from annotation.analysis.services import annotator_pseudonyms_ensure
    from annotation.models import Campaign, JudgmentValue
    from annotation.reports.stream import judgment_report_stream

    campaign = Campaign.objects.get(name=CAMPAIGN_NAME)
    n_values = JudgmentValue.objects.count()
    rss_before = peak_rss_mb()
    started = time.perf_counter()
    annotator_pseudonyms_ensure(campaign=campaign)
    first_byte = None
    n_bytes = 0
    n_lines = 0
    for chunk in judgment_report_stream(campaign=campaign, file_format=file_format):
        if first_byte is None:
            first_byte = time.perf_counter() - started
        n_bytes += len(chunk)
        n_lines += chunk.count(b"\n")
    total = time.perf_counter() - started
    rows = n_lines - (0 if file_format == "jsonl" else 1)
    assert rows == n_values, (rows, n_values)
    emit(f"format {file_format}: {rows:,} rows, {n_bytes / 1e6:.1f} MB")
    emit(f"time to first byte (pseudonyms + normalisation pass): {first_byte:.2f} s")
    emit(f"total {total:.2f} s = {rows / total:,.0f} rows/s")
    emit(f"peak RSS {peak_rss_mb():.0f} MB (after Django set-up {rss_before:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--format", choices=["csv", "tsv", "jsonl"], default="csv")
    parser.add_argument("--stream-only", action="store_true", help="Keep the built database.")
    args = parser.parse_args()
    url = os.environ.setdefault("DATABASE_URL", DEFAULT_URL)
    if not args.stream_only:
        emit(f"database {url} (dropped and created again)")
        recreate_database(url)
        setup_django()
        build(args.rows)
        # A fresh process, so that the report's peak memory is its own.
        command = [sys.executable, __file__, "--stream-only", "--format", args.format]
        subprocess.run(command, check=True, env=os.environ.copy())
        return
    setup_django()
    emit(f"numpy {np.__version__}; python {sys.version.split()[0]}")
    stream(args.format)


if __name__ == "__main__":
    main()
