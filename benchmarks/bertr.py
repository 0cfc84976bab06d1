"""BERTR's segment pairs per second on CPU: the code before the batching by word pieces and the
encoder cache (``BERTR(batched=False)``) against today's, measured in the same run.

    .venv/bin/python benchmarks/bertr.py              # 3 repetitions
    .venv/bin/python benchmarks/bertr.py --quick      # 1 repetition, smaller corpora

On the synthetic corpus of ``benchmarks/mt_data.py`` (one reference; 5–40 words, about 2.5 word
pieces a word since its words are ``w123``), with the ``neural`` extra installed:

* **single system**: ``metric.statistics(hypotheses, references)`` of one system (every
  hypothesis and reference encoded once);
* **campaign**: N systems × S segments against the shared references, as the analysis computes
  a chunk (:func:`evalcore.scoring.extraction.extract_statistics`: distinct hypotheses once,
  each reference once);
* **campaign, one call per system**: ``metric.statistics`` system after system, as a caller
  scoring systems one by one does (before, each call encoded the references again; now the
  encoder cache keeps them);
* **recomputation**: the campaign again in the same process (today's code: every sentence is
  in the encoder cache when the campaign fits its bound);
* **two processes at once** (the analysis worker's concurrency 2 on two cores): each process
  scores one system, with torch's default threads (one per core, so four threads on two cores)
  against ``EVALSITE_TORCH_THREADS`` = 1, which the analysis worker now sets.

Pairs per second are distinct (segment, hypothesis) pairs over wall-clock seconds; every
repetition runs the old and the new code back to back (the encoder cache emptied before each
new run, except the recomputation), and the ratios are paired within a repetition. Prints
medians with the range over repetitions, CPU seconds beside wall-clock ones (the machine may be
shared), and the largest difference of the statistics from the old code's (target ≤ 1e-5).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mt_data import make_corpus
from evalcore.scoring.bertr import BERTR, ENCODER_CACHE, THREADS_ENV
from evalcore.scoring.extraction import distinct_pairs, extract_statistics


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall-clock seconds and CPU seconds (this process, all its threads)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - start, time.process_time() - cpu


def _score_one_system(args: tuple[bool, int | None, int]) -> float:
    """In a fresh process: seconds to score one system of ``segments`` segments."""
    batched, threads, segments = args
    if threads is not None:
        os.environ[THREADS_ENV] = str(threads)
    systems, refs = make_corpus(n_systems=2, n_segments=segments)
    metric = BERTR(batched=batched)
    metric.statistics(["warm up"], [["warm up"]])
    ENCODER_CACHE.clear()
    start = time.perf_counter()
    metric.statistics(systems[1][1], refs)
    return time.perf_counter() - start


def two_processes(batched: bool, threads: int | None, segments: int) -> float:
    """Wall-clock seconds until both of two processes scoring a system at once are done."""
    context = multiprocessing.get_context("spawn")  # torch's OpenMP is not fork-safe
    with context.Pool(2) as pool:
        return max(pool.map(_score_one_system, [(batched, threads, segments)] * 2))


def spread(values: list[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--segments", type=int, default=200, help="single system")
    parser.add_argument("--systems", type=int, default=6, help="campaign")
    parser.add_argument("--campaign-segments", type=int, default=100)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.segments, args.systems, args.campaign_segments = 1, 60, 4, 40

    single_systems, single_refs = make_corpus(n_systems=1, n_segments=args.segments)
    single = single_systems[0][1]
    systems, refs = make_corpus(n_systems=args.systems, n_segments=args.campaign_segments)
    outputs = [hyps for _, hyps in systems]
    n_campaign = distinct_pairs(outputs)
    old, new = BERTR(batched=False), BERTR()
    old.statistics(["warm up"], [["warm up"]])  # the model is loaded before the clock starts

    cases: dict[str, tuple[int, Callable[[BERTR], Any]]] = {
        "single system": (args.segments, lambda m: m.statistics(single, single_refs)),
        "campaign": (n_campaign, lambda m: extract_statistics(m, outputs, refs)),
        "campaign, one call per system": (
            n_campaign,
            lambda m: np.stack([m.statistics(h, refs) for h in outputs]),
        ),
    }
    emit(
        f"torch threads {__import__('torch').get_num_threads()}; single system "
        f"{args.segments} segments; campaign {args.systems} systems × "
        f"{args.campaign_segments} segments, {n_campaign} distinct pairs; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    rates: dict[str, dict[str, list[float]]] = {}
    cpu: dict[str, dict[str, list[float]]] = {}
    worst = 0.0
    for _ in range(args.repeat):
        for name, (pairs, run) in cases.items():
            ENCODER_CACHE.clear()
            before, wall_old, cpu_old = timed(lambda r=run: r(old))  # type: ignore[misc]
            ENCODER_CACHE.clear()
            after, wall_new, cpu_new = timed(lambda r=run: r(new))  # type: ignore[misc]
            worst = max(worst, float(np.abs(np.asarray(after) - np.asarray(before)).max()))
            for key, wall, seconds in (("old", wall_old, cpu_old), ("new", wall_new, cpu_new)):
                rates.setdefault(name, {}).setdefault(key, []).append(pairs / wall)
                cpu.setdefault(name, {}).setdefault(key, []).append(seconds)
            if name == "campaign":  # again, with the cache the first new run filled
                again, wall, seconds = timed(lambda r=run: r(new))  # type: ignore[misc]
                worst = max(worst, float(np.abs(np.asarray(again) - np.asarray(before)).max()))
                rates.setdefault("recomputation", {}).setdefault("new", []).append(pairs / wall)
                rates["recomputation"].setdefault("old", []).append(pairs / wall_old)
                cpu.setdefault("recomputation", {}).setdefault("new", []).append(seconds)
                cpu["recomputation"].setdefault("old", []).append(cpu_old)
        for key, batched, threads in (("old", False, None), ("new", True, 1)):
            wall = two_processes(batched, threads, args.segments)
            rates.setdefault("two processes at once", {}).setdefault(key, []).append(
                2 * args.segments / wall
            )

    emit("| case | before: pairs/s | today: pairs/s | ratio | CPU s before → today |")
    emit("|---|---:|---:|---:|---|")
    for name, by in rates.items():
        ratios = [n / o for o, n in zip(by["old"], by["new"], strict=True)]
        seconds = cpu.get(name)
        cpu_text = (
            f"{statistics.median(seconds['old']):.1f} → {statistics.median(seconds['new']):.1f}"
            if seconds
            else "(two processes)"
        )
        emit(
            f"| {name} | {spread(by['old'])} | {spread(by['new'])} | {spread(ratios, 2)}× "
            f"| {cpu_text} |"
        )
    emit(f"largest difference of the statistics from the old code's: {worst:.1e} (≤ 1e-5)")
    emit(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
