"""Metric statistics for 20 systems: our extraction against sacreBLEU scoring them one by one.

    .venv/bin/python benchmarks/extraction.py            # 20 systems × 2,000 segments
    .venv/bin/python benchmarks/extraction.py --quick    # 5 systems × 300 segments

For BLEU, chrF and TER on the deterministic synthetic corpus of ``benchmarks/mt_data.py``:

* sacreBLEU sequential: one metric object built with the references (``references=``, so each
  reference is prepared once: sacreBLEU's fastest path), then ``corpus_score(hypotheses, None)``
  per system; the time includes building the reference cache, as ours includes preparing them;
* ours: :func:`metrics.scoring.extraction.extract_statistics` with 2 worker processes, each
  distinct (segment, hypothesis) pair computed once, each segment's references prepared once; also
  with 1 process, to show what the parallelism and the deduplication each contribute.

Checks that the corpus scores from our statistics equal sacreBLEU's (1e-9) and prints the time
ratio (target ≤ 0.5).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import sacrebleu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mt_data import make_corpus
from metrics.scoring import make_metric
from metrics.scoring.extraction import distinct_pairs, extract_statistics

SACRE: dict[str, Any] = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


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
        "| metric | sacreBLEU sequential s | ours, 2 processes s | ratio | ours, 1 process s "
        "| ratio | scores equal |"
    )
    emit("|---|---:|---:|---:|---:|---:|---|")
    for name in args.metrics:

        def sacre_sequential(name: str = name) -> list[float]:
            metric = SACRE[name](references=refs)  # prepares every reference once
            return [metric.corpus_score(h, None).score for h in outputs]

        theirs, sacre_time = timed(sacre_sequential)
        metric = make_metric(name)
        two, two_time = timed(lambda m=metric: extract_statistics(m, outputs, refs, workers=2))
        _, one_time = timed(lambda m=metric: extract_statistics(m, outputs, refs, workers=1))
        ours = [float(metric.score_from_statistics(s.sum(axis=0))) for s in two]
        equal = np.allclose(ours, theirs, rtol=0, atol=1e-9)
        emit(
            f"| {name} | {sacre_time:.2f} | {two_time:.2f} | {two_time / sacre_time:.2f} | "
            f"{one_time:.2f} | {one_time / sacre_time:.2f} | {'yes' if equal else 'NO'} |"
        )


if __name__ == "__main__":
    main()
