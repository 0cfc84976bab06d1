"""Paired bootstrap and approximate randomisation: ours against sacreBLEU's ``PairedTest``.

    .venv/bin/python benchmarks/significance.py            # 20 systems × 2,000 segments
    .venv/bin/python benchmarks/significance.py --quick    # 5 systems × 300 segments, a smoke run

For BLEU, chrF and TER, on the same deterministic synthetic corpus in the same run:

* sacreBLEU: ``PairedTest`` (one process, seed 12345) with 1,000 bootstrap resamples and with
  10,000 AR trials, baseline = the first system. ``PairedTest`` extracts every system's
  statistics itself; that extraction is timed once on its own (the same
  ``_extract_corpus_statistics`` calls) and then served to ``PairedTest`` from memory, so the
  timed ``PairedTest`` call is its resampling and scoring alone. sacreBLEU end to end = both.
  ``--check-end-to-end`` also runs the unmodified ``PairedTest`` to confirm the sum (slow for TER);
* ours: :func:`paired_bootstrap` (whose result also holds the baseline's mean and interval, as
  sacreBLEU's does) and :func:`paired_approximate_randomization` on the statistics arrays, all 19
  comparisons in one call, same seed; statistics from our extraction with 2 worker processes.

Prints seconds, the resampling speed-up (target ≥ 50× bootstrap, ≥ 20× AR), the end-to-end
speed-up, and the largest p-value difference between the two (0 when every draw agrees).
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
from sacrebleu.significance import PairedTest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.mt_data import make_corpus
from evalcore.scoring import make_metric
from evalcore.scoring.extraction import extract_statistics
from evalcore.stats.resampling import paired_approximate_randomization, paired_bootstrap

SEED = 12345
SACRE: dict[str, Any] = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def memoised_metric(name: str, stats: dict[int, Any], n_refs: int) -> Any:
    """sacreBLEU's metric whose statistics were already extracted (by sacreBLEU itself)."""

    class Memoised(SACRE[name]):  # type: ignore[misc]
        def _extract_corpus_statistics(self, hypotheses: Any, references: Any) -> Any:
            return stats[id(hypotheses)]

    metric = Memoised()
    metric.num_refs = n_refs  # set while caching references, which this metric skips
    return metric


def ours(test: str, stats: np.ndarray, score_fn: Any, n: int) -> np.ndarray:
    """Our test of systems 1.. against system 0; returns the p-values."""
    if test == "bs":
        # Like sacreBLEU's, the result holds both sides' means and intervals (mean_a, ci_a).
        return np.asarray(
            paired_bootstrap(stats[0], stats[1:], score_fn, n_samples=n, rng=SEED).p_value
        )
    return np.asarray(
        paired_approximate_randomization(
            stats[0], stats[1:], score_fn, n_trials=n, rng=SEED
        ).p_value
    )


def benchmark_metric(
    name: str,
    systems: list[tuple[str, list[str]]],
    refs: list[list[str]],
    tests: list[tuple[str, int]],
    check_end_to_end: bool,
) -> None:
    outputs = [hyps for _, hyps in systems]
    metric = make_metric(name)
    stats, our_extract = timed(lambda: extract_statistics(metric, outputs, refs, workers=2))
    sacre = SACRE[name]()
    sacre_stats, sacre_extract = timed(
        lambda: {id(h): sacre._extract_corpus_statistics(h, refs) for h in outputs}
    )
    for test, n in tests:
        paired = PairedTest(
            systems,
            {name: memoised_metric(name, sacre_stats, len(refs))},
            refs,
            test_type=test,
            n_samples=n,
        )
        (_, sacre_scores), sacre_resample = timed(paired)
        key = next(k for k in sacre_scores if k != "System")
        sacre_p = np.array([r.p_value for r in sacre_scores[key][1:]])
        our_p, our_resample = timed(
            lambda t=test, n=n: ours(t, stats, metric.score_from_statistics, n)
        )
        end_to_end = (sacre_extract + sacre_resample) / (our_extract + our_resample)
        emit(
            f"| {name} | {test} {n} | {sacre_extract:.2f} | {sacre_resample:.2f} | "
            f"{our_extract:.2f} | {our_resample:.3f} | {sacre_resample / our_resample:.0f}× | "
            f"{end_to_end:.1f}× | {np.abs(our_p - sacre_p).max():.2g} |"
        )
        if check_end_to_end:
            plain = PairedTest(systems, {name: SACRE[name]()}, refs, test_type=test, n_samples=n)
            _, total = timed(plain)
            emit(
                f"|  | unmodified PairedTest: {total:.2f} s (extraction + resampling above: "
                f"{sacre_extract + sacre_resample:.2f} s) |  |  |  |  |  |  |  |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--metrics", nargs="+", default=["bleu", "chrf", "ter"])
    parser.add_argument("--quick", action="store_true", help="5 systems × 300 segments")
    parser.add_argument(
        "--check-end-to-end", action="store_true", help="also time the unmodified PairedTest"
    )
    args = parser.parse_args()
    if args.quick:
        args.systems, args.segments = 5, 300

    systems, refs = make_corpus(n_systems=args.systems, n_segments=args.segments)
    emit(
        f"{args.systems} systems × {args.segments} segments, {args.boot} bootstrap resamples, "
        f"{args.trials} AR trials, seed {SEED}"
    )
    emit(
        "| metric | test | sacreBLEU extraction s | sacreBLEU PairedTest resampling s "
        "| our extraction s | our resampling s | resampling speed-up | end-to-end speed-up "
        "| max abs Δp |"
    )
    emit("|" + "---|" * 9)
    for name in args.metrics:
        benchmark_metric(
            name, systems, refs, [("bs", args.boot), ("ar", args.trials)], args.check_end_to_end
        )


if __name__ == "__main__":
    main()
