"""Peak memory of approximate randomisation at scale: 20 systems × 10,000 segments × 10,000 trials.

    .venv/bin/python benchmarks/memory.py             # AR and paired bootstrap, BLEU statistics
    .venv/bin/python benchmarks/memory.py --runs 3    # MultEval: 3 runs per system, stratified AR

The statistics are synthetic BLEU statistics (integer counts with BLEU's internal constraints),
so no text is scored: this measures the resampling alone. Work is chunked (64 MB weight matrices),
so the peak should stay far below the 1 GB budget whatever the number of trials. Prints the time
and the peak resident set size (``resource.getrusage``), before and after the resampling.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalcore.scoring import BLEU
from evalcore.stats.multirun import compare_runs
from evalcore.stats.resampling import paired_approximate_randomization, paired_bootstrap


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bleu_statistics(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random per-segment BLEU statistics: lengths, and matches ≤ totals for n = 1..4."""
    hyp_len = rng.integers(5, 41, size=shape)
    ref_len = np.clip(hyp_len + rng.integers(-3, 4, size=shape), 1, None)
    totals = np.stack([np.clip(hyp_len - n, 0, None) for n in range(4)], axis=-1)
    quality = rng.uniform(0.3, 0.7, size=(*shape, 1)) ** np.arange(1, 5)
    correct = rng.binomial(totals, quality)
    return np.concatenate(
        [hyp_len[..., None], ref_len[..., None], correct, totals], axis=-1
    ).astype(np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--segments", type=int, default=10000)
    parser.add_argument("--trials", type=int, default=10000)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()

    rng = np.random.default_rng(2024)
    score_fn = BLEU().score_from_statistics
    shape = (
        (args.systems, args.runs, args.segments) if args.runs > 1 else (args.systems, args.segments)
    )
    stats = bleu_statistics(rng, shape)
    emit(
        f"statistics {stats.shape} ({stats.nbytes / 2**20:.0f} MB); peak RSS before resampling "
        f"{peak_mb():.0f} MB"
    )
    if args.runs > 1:
        start = time.perf_counter()
        result = compare_runs(
            [(f"s{k}", stats[k]) for k in range(args.systems)],
            score_fn,
            baseline="s0",
            n_bootstrap=args.boot,
            n_trials=args.trials,
            rng=12345,
        )
        emit(
            f"MultEval compare_runs, {args.runs} runs, {args.boot} bootstrap, {args.trials} "
            f"stratified AR trials: {time.perf_counter() - start:.1f} s, "
            f"peak RSS {peak_mb():.0f} MB (p of s1: {result.systems[1].p_value:.4f})"
        )
        return
    start = time.perf_counter()
    ar = paired_approximate_randomization(
        stats[0], stats[1:], score_fn, n_trials=args.trials, rng=1
    )
    emit(
        f"AR, {args.systems - 1} comparisons × {args.trials} trials: "
        f"{time.perf_counter() - start:.1f} s, peak RSS {peak_mb():.0f} MB "
        f"(p from {ar.p_value.min():.4f} to {ar.p_value.max():.4f})"
    )
    start = time.perf_counter()
    paired_bootstrap(stats[0], stats[1:], score_fn, n_samples=args.boot, rng=1)
    emit(
        f"paired bootstrap, {args.systems - 1} comparisons × {args.boot} samples: "
        f"{time.perf_counter() - start:.1f} s, peak RSS {peak_mb():.0f} MB"
    )


if __name__ == "__main__":
    main()
