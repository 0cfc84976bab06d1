"""Benchmark of the import of historical judgments at WMT size: 100,000 rows onto 2,000 × 10.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hd .venv/bin/python manage.py migrate
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hd \\
        .venv/bin/python benchmarks/judgment_import.py              # 100,000 rows
    .venv/bin/python benchmarks/judgment_import.py --rows 20000     # a smaller file
    .venv/bin/python benchmarks/judgment_import.py --write j.tsv    # keep the file too

Nothing is dropped: the benchmark makes its own campaign in the (migrated) database of
DATABASE_URL, through the services the upload page uses (``campaign_create`` and
``campaign_data_import`` with plain source, reference, doc-id and system files: 2,000 segments in
documents of 10, one reference, 10 systems), and deletes it and its annotator accounts at the end
(``--keep`` leaves them). Like every import, it queues a recomputation of the campaign once it
has committed: set ``CELERY_BROKER_URL`` as for the server.

The judgment file is our own TSV format (``docs/reports.md``), deterministic (seed 2024): HITs of
100 rows by one of 50 annotators each — 70 SYSTEM rows (distinct outputs), 10 REPEAT and 10
BAD_REF rows copying SYSTEM rows of the same HIT, 10 REF rows on segments of the HIT — with 0–100
scores and seconds. It is imported as the UI, the API and ``import_judgments`` do, by
:func:`annotation.judgment_import.services.judgments_import`.

Printed: the time to parse the file alone, the time of the whole import (parse, checks against
the campaign, storing), rows per second, the rows stored, and the peak resident memory during the
import (``VmHWM`` reset before it where Linux allows, else the process's peak so far).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CAMPAIGN_NAME = "Judgment import benchmark"
OWNER = "bench-judgment-import"
SEED = 2024
HIT_ROWS = (70, 10, 10, 10)  # SYSTEM, REPEAT, BAD_REF, REF rows of one HIT


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def reset_peak_rss() -> bool:
    """Start VmHWM afresh (Linux: writing 5 to clear_refs); False where that is not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    import django

    django.setup()


def make_campaign(n_segments: int, n_systems: int) -> object:
    """The campaign with its texts, stored by the services behind the upload page."""
    from django.contrib.auth import get_user_model

    from annotation.campaigns.services import campaign_create, campaign_data_import
    from annotation.campaigns.uploads import UploadFile
    from annotation.models import Campaign

    owner, _ = get_user_model().objects.get_or_create(username=OWNER)
    campaign = campaign_create(
        owner=owner,
        name=CAMPAIGN_NAME,
        source_language="de",
        target_language="en",
        status=Campaign.Status.ACTIVE,
    )

    def lines(texts: list[str]) -> bytes:
        return ("\n".join(texts) + "\n").encode()

    positions = range(n_segments)
    files = [
        UploadFile(
            "source.de", lines([f"Quelle {s + 1} des Dokuments." for s in positions]), "source"
        ),
        UploadFile(
            "ref.en",
            lines([f"Reference {s + 1} of the document." for s in positions]),
            "references",
        ),
        UploadFile("docs.txt", lines([f"doc{s // 10 + 1}" for s in positions]), "doc_ids"),
    ]
    files += [
        UploadFile(
            f"sys{k}.txt", lines([f"System {k} says {s + 1}." for s in positions]), "systems"
        )
        for k in range(n_systems)
    ]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return campaign


def cleanup(campaign: Any) -> None:
    """Delete the campaign, its imported judgments and its annotator accounts. The imported rows
    go first, table by table in SQL: their foreign keys protect the texts, and Django's collector
    would load every one of them."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotation.judgment_import.accounts import USERNAME_PREFIX
    from annotation.models import (
        Assignment,
        Item,
        ItemOutput,
        Judgment,
        JudgmentImport,
        JudgmentValue,
        ProtocolConfig,
        Task,
    )

    def table(model: Any) -> str:
        return connection.ops.quote_name(model._meta.db_table)

    config = f"SELECT id FROM {table(ProtocolConfig)} WHERE campaign_id = %s"
    task = f"SELECT id FROM {table(Task)} WHERE config_id IN ({config})"
    item = f"SELECT id FROM {table(Item)} WHERE task_id IN ({task})"
    judgment = f"SELECT id FROM {table(Judgment)} WHERE item_id IN ({item})"
    deletes = [
        f"DELETE FROM {table(JudgmentValue)} WHERE judgment_id IN ({judgment})",
        f"DELETE FROM {table(Judgment)} WHERE item_id IN ({item})",
        f"DELETE FROM {table(Assignment)} WHERE task_id IN ({task})",
        f"DELETE FROM {table(ItemOutput)} WHERE item_id IN ({item})",
        f"DELETE FROM {table(Item)} WHERE task_id IN ({task})",
        f"DELETE FROM {table(Task)} WHERE config_id IN ({config})",
        f"DELETE FROM {table(JudgmentImport)} WHERE campaign_id = %s",
    ]
    campaign_id = type(campaign)._meta.pk.get_db_prep_value(campaign.pk, connection)
    with transaction.atomic(), connection.cursor() as cursor:
        for sql in deletes:
            cursor.execute(sql, [campaign_id])
        prefix = f"{USERNAME_PREFIX}-{campaign.pk.hex[:8]}-"
        campaign.delete()
        get_user_model().objects.filter(username__startswith=prefix).delete()


def judgment_file(n_rows: int, n_segments: int, n_systems: int, n_annotators: int) -> bytes:
    """Our TSV format: HITs of :data:`HIT_ROWS`, each by one annotator (see the module doc)."""
    rng = np.random.default_rng(SEED)
    quality = rng.uniform(40, 85, n_systems)
    per_hit = sum(HIT_ROWS)
    n_hits = (n_rows + per_hit - 1) // per_hit
    out = io.StringIO()
    out.write("annotator\tsystem\tsegment\ttype\tscore\thit\tseconds\n")
    written = 0
    for hit in range(n_hits):
        annotator = f"worker{hit % n_annotators:03d}"
        bias = rng.normal(0, 8)
        # 70 distinct (system, segment) outputs, drawn without replacement.
        outputs = rng.choice(n_systems * n_segments, HIT_ROWS[0], replace=False)
        systems, segments = outputs % n_systems, outputs // n_systems
        scores = np.clip(quality[systems] + bias + rng.normal(0, 15, len(outputs)), 0, 100)
        rows: list[tuple[str, int, str, float]] = [
            (f"sys{s}", int(g), "SYSTEM", float(x))
            for s, g, x in zip(systems, segments, scores, strict=True)
        ]
        picks = rng.choice(HIT_ROWS[0], HIT_ROWS[1] + HIT_ROWS[2] + HIT_ROWS[3], replace=False)
        for i, p in enumerate(picks):
            system, segment, score = rows[p][0], rows[p][1], rows[p][3]
            if i < HIT_ROWS[1]:
                rows.append(
                    (system, segment, "REPEAT", min(100.0, max(0.0, score + rng.normal(0, 5))))
                )
            elif i < HIT_ROWS[1] + HIT_ROWS[2]:
                rows.append((system, segment, "BAD_REF", max(0.0, score - rng.uniform(10, 50))))
            else:
                rows.append(("", segment, "REF", float(np.clip(rng.normal(85, 8), 0, 100))))
        seconds = rng.lognormal(np.log(20), 0.5, len(rows))
        for (system, segment, kind, score), sec in zip(rows, seconds, strict=True):
            if written == n_rows:
                break
            doc_seg = f"doc{segment // 10 + 1}:{segment % 10 + 1}"
            out.write(
                f"{annotator}\t{system}\t{doc_seg}\t{kind}\t{score:.0f}\thit{hit:05d}\t{sec:.1f}\n"
            )
            written += 1
    return out.getvalue().encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--segments", type=int, default=2_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--write", type=Path, help="Also write the judgment file here.")
    parser.add_argument("--keep", action="store_true", help="Keep the campaign afterwards.")
    args = parser.parse_args()
    setup_django()

    from django.conf import settings
    from django.db import connection

    from annotation.campaigns.uploads import UploadFile
    from annotation.judgment_import.formats import judgments_parse
    from annotation.judgment_import.plan import ImportOptions
    from annotation.judgment_import.services import judgments_import
    from annotation.models import Campaign

    emit(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    started = time.perf_counter()
    for stale in Campaign.objects.filter(name=CAMPAIGN_NAME):  # left by an interrupted run
        cleanup(stale)
    campaign = make_campaign(args.segments, args.systems)
    emit(
        f"campaign: {args.segments:,} segments × {args.systems} systems, "
        f"built in {time.perf_counter() - started:.1f} s"
    )
    content = judgment_file(args.rows, args.segments, args.systems, args.annotators)
    if args.write:
        args.write.write_bytes(content)
    upload = UploadFile("judgments.tsv", content)
    emit(f"file: {args.rows:,} rows, {args.annotators} annotators, {len(content) / 1e6:.1f} MB")
    try:
        started = time.perf_counter()
        judgments_parse(upload, max_bytes=settings.EVALSITE_UPLOAD_MAX_BYTES)
        parse_seconds = time.perf_counter() - started

        fresh = reset_peak_rss()
        rss_before = peak_rss_mb()
        started = time.perf_counter()
        record = judgments_import(
            campaign=campaign, upload=upload, user=None, options=ImportOptions()
        )
        seconds = time.perf_counter() - started
        peak = peak_rss_mb()
        summary = record.summary
        emit(f"parse only: {parse_seconds:.2f} s ({args.rows / parse_seconds:,.0f} rows/s)")
        emit(
            f"import: {seconds:.2f} s, {args.rows / seconds:,.0f} rows/s — "
            f"{summary['judgments']:,} judgments, {summary['values']:,} values, "
            f"{summary['items']:,} items, {summary['tasks']:,} tasks"
        )
        emit(
            f"peak RSS {peak:.0f} MB during the import"
            + (f" (from {rss_before:.0f} MB before it)" if fresh else " (process peak so far)")
        )
    finally:
        if not args.keep:
            started = time.perf_counter()
            cleanup(campaign)
            emit(f"cleaned up in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
