"""Metric statistics for 20 systems: our extraction against sacreBLEU scoring them one by one.

    .venv/bin/python benchmarks/extraction.py            # 20 systems × 2,000 segments
    .venv/bin/python benchmarks/extraction.py --quick    # 5 systems × 300 segments

For BLEU, chrF and TER on the deterministic synthetic corpus of ``benchmarks/mt_data.py``:

* sacreBLEU sequential: one metric object built with the references (``references=``, so each
  reference is prepared once: sacreBLEU's fastest path), then ``corpus_score(hypotheses, None)``
  per system; the time includes building the reference cache, as ours includes preparing them;
* ours: :func:`evalcore.scoring.extraction.extract_statistics` with 2 worker processes, each
  distinct (segment, hypothesis) pair computed once, each segment's references prepared once; also
  with 1 process, to show what the parallelism and the deduplication each contribute;
* ours on the same inputs as sacreBLEU: ``metric.statistics(hypotheses, references)`` per system
  in one process, every pair computed (no deduplication) — for TER the speed of the compiled
  kernel against sacreBLEU's Python code on one core (target ≥ 20×). TER's compiled kernels are
  loaded (from numba's cache) before the clock starts; the time that takes is printed.

Checks that the corpus scores from our statistics equal sacreBLEU's (1e-9) and prints wall-clock
seconds, CPU seconds (all processes) and the wall-clock ratios (target ≤ 0.5 with 2 processes).
On a shared machine the wall-clock ratio depends on whether two cores are free, so the run also
measures how much of two cores it gets (two pure-Python jobs in two processes against one job
alone).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import sacrebleu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mt_data import make_corpus
from evalcore.scoring import make_metric
from evalcore.scoring.extraction import distinct_pairs, extract_statistics

SACRE: dict[str, Any] = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """Result, wall-clock seconds and CPU seconds (all processes) of one call."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = fn()
    return result, time.perf_counter() - start, cpu_seconds() - cpu


def _burn(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def parallel_efficiency(n: int = 10_000_000) -> float:
    """How much of two cores this run gets: 1.0 when two processes take as long as one job."""
    start = time.perf_counter()
    _burn(n)
    one = time.perf_counter() - start
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        start = time.perf_counter()
        list(pool.map(_burn, [n, n]))
        two = time.perf_counter() - start
    return one / two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--metrics", nargs="+", default=["bleu", "chrf", "ter"])
    parser.add_argument("--quick", action="store_true", help="5 systems × 300 segments")
    args = parser.parse_args()
    if args.quick:
        args.systems, args.segments = 5, 300

    systems, refs = make_corpus(n_systems=args.systems, n_segments=args.segments)
    outputs = [hyps for _, hyps in systems]
    pairs = distinct_pairs(outputs)
    total = len(outputs) * args.segments
    emit(
        f"{args.systems} systems × {args.segments} segments: {pairs} distinct (segment, "
        f"hypothesis) pairs of {total} ({100 * pairs / total:.0f}%)"
    )
    emit(
        f"parallel efficiency of 2 processes on this machine now: {parallel_efficiency():.2f} "
        "(1.00 = two free cores)"
    )
    emit(
        "| metric | sacreBLEU sequential s (CPU s) | ours, 2 processes s (CPU s) | ratio "
        "| ours, 1 process s (CPU s) | ratio | ours, same inputs, 1 process s | ratio "
        "| speed-up | scores equal |"
    )
    emit("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in args.metrics:

        def sacre_sequential(name: str = name) -> list[float]:
            metric = SACRE[name](references=refs)  # prepares every reference once
            return [metric.corpus_score(h, None).score for h in outputs]

        theirs, sacre_time, sacre_cpu = timed(sacre_sequential)
        metric = make_metric(name)
        _, load_time, _ = timed(metric.prepare)
        if load_time > 0.01:
            emit(f"({name}: compiled kernels loaded in {load_time:.2f} s, before the clock starts)")
        two, two_time, two_cpu = timed(
            lambda m=metric: extract_statistics(m, outputs, refs, workers=2)
        )
        _, one_time, one_cpu = timed(
            lambda m=metric: extract_statistics(m, outputs, refs, workers=1)
        )
        plain, plain_time, plain_cpu = timed(
            lambda m=metric: [m.statistics(hyps, refs) for hyps in outputs]
        )
        ours = [float(metric.score_from_statistics(s.sum(axis=0))) for s in two]
        ours_plain = [float(metric.score_from_statistics(s.sum(axis=0))) for s in plain]
        equal = np.allclose(ours, theirs, rtol=0, atol=1e-9)
        equal = equal and np.allclose(ours_plain, theirs, rtol=0, atol=1e-9)
        emit(
            f"| {name} | {sacre_time:.2f} ({sacre_cpu:.2f}) | {two_time:.2f} ({two_cpu:.2f}) | "
            f"{two_time / sacre_time:.3f} | {one_time:.2f} ({one_cpu:.2f}) | "
            f"{one_time / sacre_time:.3f} | {plain_time:.2f} ({plain_cpu:.2f}) | "
            f"{plain_time / sacre_time:.3f} | {sacre_time / plain_time:.1f}× "
            f"({sacre_cpu / plain_cpu:.1f}×) | {'yes' if equal else 'NO'} |"
        )
    emit(
        f"parallel efficiency at the end: {parallel_efficiency():.2f}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
