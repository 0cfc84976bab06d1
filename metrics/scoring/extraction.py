"""Statistics of many outputs (systems × runs) at once: duplicates computed once, in parallel.

Systems often produce the same translation of a segment (short segments, shared components,
optimizer runs that agree), and a (hypothesis, references) pair always has the same statistics.
:func:`extract_statistics` therefore computes each distinct pair once, prepares each segment's
references once, and spreads segments over worker processes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .base import Metric, References, check_corpus

_SegmentWork = tuple[tuple[str | None, ...], list[str]]

# The metric of a worker process, set once by the pool initializer instead of pickled per task.
_WORKER_METRIC: Metric | None = None


def _init_worker(metric: Metric) -> None:
    global _WORKER_METRIC  # one metric per worker process, set by the pool initializer
    _WORKER_METRIC = metric


def _work(chunk: list[_SegmentWork]) -> list[np.ndarray]:
    metric = _WORKER_METRIC
    if metric is None:
        raise RuntimeError("worker started without a metric")
    return [metric.statistics_for_segment(refs, hyps) for refs, hyps in chunk]


def _chunks(work: list[_SegmentWork], n_chunks: int) -> list[list[_SegmentWork]]:
    """Contiguous chunks with about the same number of hypotheses each."""
    total = sum(len(hyps) for _, hyps in work)
    target = max(1, -(-total // max(1, n_chunks)))
    chunks: list[list[_SegmentWork]] = [[]]
    size = 0
    for item in work:
        if size >= target:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += len(item[1])
    return [c for c in chunks if c]


def extract_statistics(
    metric: Metric,
    outputs: Sequence[Sequence[str]],
    references: References,
    *,
    workers: int = 1,
) -> np.ndarray:
    """Per-segment statistics of every output: ``(n_outputs, n_segments, n_stats)``.

    ``outputs`` holds one hypothesis stream per system run. The result is identical to calling
    ``metric.statistics(output, references)`` for each output; ``workers > 1`` uses that many
    processes (fork), which pays off from a few thousand distinct pairs on.
    """
    if not outputs:
        raise ValueError("no outputs to score")
    for output in outputs:
        check_corpus(output, references)
    n_segments = len(outputs[0])
    n_stats = len(metric.stat_names)

    # Distinct hypotheses per segment, and where each output's hypothesis sits among them.
    work: list[_SegmentWork] = []
    position = np.zeros((len(outputs), n_segments), dtype=np.int64)
    for i in range(n_segments):
        index: dict[str, int] = {}
        for k, output in enumerate(outputs):
            position[k, i] = index.setdefault(output[i], len(index))
        refs = tuple(stream[i] for stream in references)
        work.append((refs, list(index)))

    if workers > 1 and n_segments > 1:
        chunks = _chunks(work, workers * 4)
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_init_worker,
            initargs=(metric,),
        ) as pool:
            per_segment = [rows for part in pool.map(_work, chunks) for rows in part]
    else:
        per_segment = [metric.statistics_for_segment(refs, hyps) for refs, hyps in work]

    result = np.empty((len(outputs), n_segments, n_stats), dtype=np.float64)
    for i, rows in enumerate(per_segment):
        result[:, i, :] = rows[position[:, i]]
    return result


def distinct_pairs(outputs: Sequence[Sequence[str]]) -> int:
    """How many distinct (segment, hypothesis) pairs the outputs hold."""
    if not outputs:
        return 0
    return sum(len({output[i] for output in outputs}) for i in range(len(outputs[0])))
