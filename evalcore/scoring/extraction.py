"""Statistics of many outputs (systems × runs) at once: duplicates computed once, in parallel.

Systems often produce the same translation of a segment (short segments, shared components,
optimizer runs that agree), and a (hypothesis, references) pair always has the same statistics.
:func:`extract_statistics` therefore computes each distinct pair once, prepares each segment's
references once, and spreads segments over worker processes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Hashable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .base import Metric, References, check_corpus

_SegmentWork = tuple[tuple[str | None, ...], list[str]]

# What a worker process computes from, set once by the pool initializer. With the fork start
# method the initializer's arguments are inherited, not pickled, so the texts are never copied
# through a pipe; tasks are then just ranges of segments, and each returns one array.
_WORKER_METRIC: Metric | None = None
_WORKER_WORK: list[_SegmentWork] = []


def _init_worker(metric: Metric, work: list[_SegmentWork]) -> None:
    global _WORKER_METRIC, _WORKER_WORK  # one metric per worker process, set by the initializer
    _WORKER_METRIC = metric
    _WORKER_WORK = work


def _segment_rows(metric: Metric, work: Sequence[_SegmentWork]) -> np.ndarray:
    """Statistics of every distinct hypothesis of the given segments, stacked in order."""
    return metric.statistics_for_segments(work)


def _work(bounds: tuple[int, int]) -> np.ndarray:
    metric = _WORKER_METRIC
    if metric is None:
        raise RuntimeError("worker started without a metric")
    return _segment_rows(metric, _WORKER_WORK[bounds[0] : bounds[1]])


def _chunks(work: list[_SegmentWork], n_chunks: int) -> list[tuple[int, int]]:
    """Contiguous ranges of segments with about the same number of hypotheses each."""
    total = sum(len(hyps) for _, hyps in work)
    target = max(1, -(-total // max(1, n_chunks)))
    bounds: list[tuple[int, int]] = []
    start = size = 0
    for i, (_, hyps) in enumerate(work):
        if size >= target:
            bounds.append((start, i))
            start, size = i, 0
        size += len(hyps)
    bounds.append((start, len(work)))
    return [b for b in bounds if b[1] > b[0]]


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
        metric.prepare()  # compiled once here, inherited by the forked workers
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_init_worker,
            initargs=(metric, work),
        ) as pool:
            # Many small ranges, so that a worker that drew long segments does not finish last.
            rows = np.concatenate(list(pool.map(_work, _chunks(work, workers * 16))), axis=0)
    else:
        rows = _segment_rows(metric, work)

    # rows holds the distinct hypotheses segment after segment; map every output back to them.
    first = np.cumsum([0] + [len(hyps) for _, hyps in work[:-1]])
    return rows[first[np.newaxis, :] + position].reshape(len(outputs), n_segments, n_stats)


def extract_all(
    metrics: Mapping[str, Metric],
    outputs: Sequence[Sequence[str]],
    references: References,
    *,
    workers: int = 1,
) -> dict[str, np.ndarray]:
    """:func:`extract_statistics` of every metric, by name; statistics that several metrics
    share (:meth:`Metric.statistics_source`: Length's are BLEU's lengths, precision, recall and
    F-measure have the same word matches, chrF's are chrF++'s first columns against one
    reference) are computed once. The same arrays as one call per metric."""
    sources = {name: metric.statistics_source(len(references)) for name, metric in metrics.items()}
    # Whole statistics first; a metric whose statistics are part of no whole one here computes
    # its own (chrF without chrF++ must not pay for chrF++'s word n-grams).
    whole: dict[Hashable, np.ndarray] = {}
    for name, metric in metrics.items():
        key, columns = sources[name]
        if columns == slice(None) and key not in whole:
            whole[key] = extract_statistics(metric, outputs, references, workers=workers)
    result: dict[str, np.ndarray] = {}
    for name, metric in metrics.items():
        key, columns = sources[name]
        if key in whole:
            result[name] = np.ascontiguousarray(whole[key][..., columns])
        else:
            result[name] = extract_statistics(metric, outputs, references, workers=workers)
    return result


def distinct_pairs(outputs: Sequence[Sequence[str]]) -> int:
    """How many distinct (segment, hypothesis) pairs the outputs hold."""
    if not outputs:
        return 0
    return sum(len({output[i] for output in outputs}) for i in range(len(outputs[0])))
