"""BERTR's segment pairs per second on CPU: the code before the batching by word pieces and the
encoder cache (``BERTR(batched=False)``) against today's on torch and on ONNX Runtime, measured
in the same run.

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

The new code runs twice: batched on torch (``BERTR(runtime="torch")``) and batched on ONNX
Runtime (``BERTR(runtime="onnx")``, the default when onnxruntime is installed). Pairs per second
are distinct (segment, hypothesis) pairs over wall-clock seconds; every repetition runs the old
code and both new ones back to back, in an order that turns round from one repetition to the
next (the encoder cache emptied before each run, except the recomputation), and the ratios to
the old code are paired within a repetition. Prints medians with the range over repetitions,
CPU seconds beside wall-clock ones (the machine may be shared), and the largest difference of
the statistics from the old code's (target ≤ 1e-5). Last, the single system's ceiling in
float32 on this machine (``benchmarks/encoder_ceiling.py``: the encoder's matrix products at
ONNX Runtime's own MatMul rate on every core), as a multiple of the old code's pairs per second.
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

from benchmarks.encoder_ceiling import ceiling
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


CODES = ("old", "torch", "onnx")
"""The old code and today's on either runtime: the keys of every table below."""


def make_metric(code: str, threads: int | None = None) -> BERTR:
    if code == "old":
        return BERTR(batched=False, threads=threads)
    return BERTR(runtime=code, threads=threads)


def _score_one_system(args: tuple[str, int | None, int]) -> float:
    """In a fresh process: seconds to score one system of ``segments`` segments."""
    code, threads, segments = args
    if threads is not None:
        os.environ[THREADS_ENV] = str(threads)
    systems, refs = make_corpus(n_systems=2, n_segments=segments)
    metric = make_metric(code)
    metric.statistics(["warm up"], [["warm up"]])  # loads (and exports) the model
    ENCODER_CACHE.clear()
    start = time.perf_counter()
    metric.statistics(systems[1][1], refs)
    return time.perf_counter() - start


def two_processes(code: str, threads: int | None, segments: int) -> float:
    """Wall-clock seconds until both of two processes scoring a system at once are done."""
    context = multiprocessing.get_context("spawn")  # torch's OpenMP is not fork-safe
    with context.Pool(2) as pool:
        return max(pool.map(_score_one_system, [(code, threads, segments)] * 2))


def spread(values: list[float], digits: int = 1) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


Table = dict[str, dict[str, list[float]]]


def one_repetition(
    turn: int,
    metrics: dict[str, BERTR],
    cases: dict[str, tuple[int, Callable[[BERTR], Any]]],
    rates: Table,
    cpu: Table,
    segments: int,
) -> float:
    """Every case once with each code, in the order of ``turn``; the largest difference of a
    statistic from the old code's."""
    order = CODES[turn % 3 :] + CODES[: turn % 3]
    worst = 0.0
    for name, (pairs, run) in cases.items():
        results = {}
        for code in order:
            ENCODER_CACHE.clear()
            results[code], wall, seconds = timed(lambda r=run, c=code: r(metrics[c]))  # type: ignore[misc]
            rates.setdefault(name, {}).setdefault(code, []).append(pairs / wall)
            cpu.setdefault(name, {}).setdefault(code, []).append(seconds)
            if name == "campaign" and code != "old":  # again, with the cache the run filled
                again, wall, seconds = timed(lambda r=run, c=code: r(metrics[c]))  # type: ignore[misc]
                results[f"{code} again"] = again
                rates.setdefault("recomputation", {}).setdefault(code, []).append(pairs / wall)
                cpu.setdefault("recomputation", {}).setdefault(code, []).append(seconds)
        if name == "campaign":
            rates["recomputation"].setdefault("old", []).append(rates[name]["old"][-1])
            cpu["recomputation"].setdefault("old", []).append(cpu[name]["old"][-1])
        before = np.asarray(results["old"])
        for result in results.values():
            worst = max(worst, float(np.abs(np.asarray(result) - before).max()))
    for code in order:  # the old code on torch's default threads, today's on one each
        wall = two_processes(code, None if code == "old" else 1, segments)
        rates.setdefault("two processes at once", {}).setdefault(code, []).append(
            2 * segments / wall
        )
    return worst


def report(rates: Table, cpu: Table) -> None:
    emit(
        "| case | before: pairs/s | torch today: pairs/s | ONNX Runtime: pairs/s "
        "| torch/before | **ONNX/before** | CPU s before → torch → ONNX |"
    )
    emit("|---|---:|---:|---:|---:|---:|---|")
    for name, by in rates.items():
        ratios = {
            code: [n / o for o, n in zip(by["old"], by[code], strict=True)]
            for code in ("torch", "onnx")
        }
        seconds = cpu.get(name)
        cpu_text = (
            " → ".join(f"{statistics.median(seconds[c]):.1f}" for c in CODES)
            if seconds
            else "(two processes)"
        )
        emit(
            f"| {name} | {spread(by['old'])} | {spread(by['torch'])} | {spread(by['onnx'])} "
            f"| {spread(ratios['torch'], 2)}× | **{spread(ratios['onnx'], 2)}×** | {cpu_text} |"
        )


def report_ceiling(hypotheses: list[str], refs: Any, rates: dict[str, list[float]]) -> None:
    """The single system's ceiling in float32 (``benchmarks/encoder_ceiling.py``) beside the
    measured rates: how far any float32 runtime could go on this machine."""
    texts = list(hypotheses) + [r for side in refs for r in side if r is not None]
    found = ceiling(texts, len(hypotheses))
    old, onnx = statistics.median(rates["old"]), statistics.median(rates["onnx"])
    emit(
        f"ceiling of the single system in float32: {found['gflop']:.1f} GFLOP of matrix "
        f"products at ONNX Runtime's MatMul rate here ({found['gflop_per_second']:.1f} GFLOP/s "
        f"on {found['cores']:.0f} cores) = {found['pairs_per_second']:.1f} pairs/s, "
        f"{found['pairs_per_second'] / old:.2f}× the old code's median; ONNX Runtime reached "
        f"{100 * onnx / found['pairs_per_second']:.0f}% of it"
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
    metrics = {code: make_metric(code) for code in CODES}
    for metric in metrics.values():  # the model is loaded (and exported) before the clock starts
        metric.statistics(["warm up"], [["warm up"]])

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
    rates: Table = {}
    cpu: Table = {}
    worst = 0.0
    for turn in range(args.repeat):
        worst = max(worst, one_repetition(turn, metrics, cases, rates, cpu, args.segments))
    report(rates, cpu)
    emit(f"largest difference of the statistics from the old code's: {worst:.1e} (≤ 1e-5)")
    report_ceiling(single, single_refs, rates["single system"])
    emit(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
