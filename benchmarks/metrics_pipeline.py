"""The background recomputation of every default metric of a WMT-size campaign, from the
organizer's request to stored results.

    .venv/bin/python benchmarks/metrics_pipeline.py            # 15 systems × 2,000 segments
    .venv/bin/python benchmarks/metrics_pipeline.py --quick    # 15 systems × 200 segments
    .venv/bin/python benchmarks/metrics_pipeline.py --metrics bleu chrf ter

On a private stack (``benchmarks/fault_stack.py``: its own PostgreSQL and Redis, gunicorn and
one Celery worker started with the compose file's commands, the worker's concurrency 2 for the
machine's two cores) a campaign of 15 systems with one run each and one reference over 2,000
segments of the synthetic corpus (``benchmarks/mt_data.py``: 5–40 words, about the length of WMT
news sentences) is analysed with the metric settings' defaults: every metric of the scoring core
that can run here (BERTR only with the ``neural`` extra; ``--metrics`` chooses others), 1,000
bootstrap samples and 10,000 AR trials, chunks of ``EVALSITE_CHUNK_SEGMENTS`` segments. The
organizer POSTs ``/api/campaigns/{id}/analysis/`` and the clock stops when the API reports the job
done, every result document stored. One run each; the worker is started (and has loaded its
code) before the clock starts. Prints the total and when the job's stage changed (waiting,
statistics, finalize), read from the status endpoint the dashboard polls.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fault_stack import api, emit, stack

SYSTEMS = 15
SEGMENTS = 2000


def campaign_upload(*, systems: int, segments: int) -> tuple[str, str, float]:
    """An organizer's campaign with the synthetic corpus: ``systems`` systems of one run each,
    one reference. Its id, the organizer's API token and the average reference length."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from annotation.campaigns.services import (
        campaign_create,
        campaign_data_import,
        user_make_organizer,
    )
    from annotation.campaigns.uploads import UploadFile
    from benchmarks.mt_data import make_corpus

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode()

    outputs, refs = make_corpus(n_systems=systems, n_segments=segments, seed=2024)
    # No password: create_user gives the organizer an unusable one.
    owner = get_user_model().objects.create_user(username="organizer")
    user_make_organizer(user=owner)
    campaign = campaign_create(
        owner=owner,
        organizers=[],
        name="Metrics pipeline de-en",
        source_language="de",
        target_language="en",
        status="active",
    )
    files = [
        UploadFile("src.de", text([f"q{i} " + r for i, r in enumerate(refs[0])]), "source"),
        UploadFile("ref.en", text(refs[0]), "references"),
    ]
    files += [UploadFile(f"{name}.txt", text(hyps), "systems") for name, hyps in outputs]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    length = sum(len(r.split()) for r in refs[0]) / len(refs[0])
    return str(campaign.pk), Token.objects.create(user=owner).key, length


def metric_settings_choose(campaign: str, metrics: list[str] | None) -> list[str]:
    """The metrics the analysis computes: the defaults, or ``metrics``; those a worker here
    can run are returned (the others are reported unavailable by the analysis itself)."""
    from evalcore.scoring import MetricUnavailableError, make_metric
    from metrics.pipeline import metric_settings

    settings = metric_settings(campaign)
    if metrics:
        settings.metrics = metrics
        settings.save()
    usable = []
    for name in settings.metrics:
        try:
            make_metric(name)
            usable.append(name)
        except MetricUnavailableError:
            pass
    return usable


def analysis_run(base: str, campaign: str, token: str, timeout: float) -> dict[str, Any]:
    """POST the analysis, poll its status every 0.2 s until it ends; the final status with
    ``elapsed`` (seconds from the request) and ``stages`` ([(stage, seconds from the request)])."""
    start = time.perf_counter()
    status, body = api(base, f"/api/campaigns/{campaign}/analysis/", token, "POST")
    if status != 202:
        raise SystemExit(f"starting the analysis answered {status}: {body}")
    stages: list[tuple[str, float]] = []
    while True:
        status, body = api(base, f"/api/campaigns/{campaign}/analysis/", token)
        now = time.perf_counter() - start
        if status == 200 and (not stages or stages[-1][0] != body.get("stage")):
            stages.append((str(body.get("stage")), now))
        if status == 200 and body["status"] in ("done", "failed"):
            return {**body, "elapsed": now, "stages": stages}
        if now > timeout:
            raise SystemExit(f"the analysis did not end within {timeout:.0f} s: {body}")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=SYSTEMS)
    parser.add_argument("--segments", type=int, default=SEGMENTS)
    parser.add_argument("--quick", action="store_true", help="200 segments")
    parser.add_argument("--metrics", nargs="+", help="instead of the default metrics")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--keep", action="store_true", help="keep the stack's logs")
    args = parser.parse_args()
    if args.quick:
        args.segments = 200
    with stack(keep=args.keep, EVALSITE_AUTO_ANALYSIS="0") as services:
        campaign, token, length = campaign_upload(systems=args.systems, segments=args.segments)
        metrics = metric_settings_choose(campaign, args.metrics)
        services.start_web(workers=2)
        services.start_worker("worker", concurrency=2)
        emit(
            f"campaign: {args.systems} systems × {args.segments} segments (one run each, one "
            f"reference of {length:.1f} words on average); metrics: {' '.join(metrics)}; "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        end = analysis_run(services.base, campaign, token, args.timeout)
        stages = ", ".join(f"{stage} at {at:.1f} s" for stage, at in end["stages"])
        emit(f"job {end['status']}: {end['elapsed']:.1f} s from request to stored results")
        emit(f"stages: {stages}")
        emit(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if end["status"] != "done":
            raise SystemExit(f"the job failed: {end.get('error')}")


if __name__ == "__main__":
    main()
