"""Adaptive against uniform allocation of judgments, simulated on a known true ranking.

    .venv/bin/python benchmarks/allocation.py              # 20 seeds
    .venv/bin/python benchmarks/allocation.py --seeds 5    # a quicker run

Ten systems with known true mean scores in six true clusters (ties inside a cluster, gaps of
0.12–0.5 between them, on a z-like scale), judgments = true mean + normal noise (sd 1). Batches
of 200 judgments; after each batch the WMT clusters are computed as the analysis does for DA
(one-sided Mann-Whitney on every pair, α = 0.05). For each seed, every policy runs on its own
draws until its clusters make all the true clusters' decisions (every two systems of different
true clusters apart, in the right order; splitting a true cluster is the test's own false
positive and not held against a policy), or until 40,000 judgments:

* uniform: every system gets the same share of each batch;
* adaptive (``evalcore.human.allocation.allocate_next``): the undecided adjacent pairs of the
  current ranking, nearest to a decision first, with a fifth of the batch kept uniform;
* top-3 (Pearmut's focus mode: the three best systems and the one below them): only the
  decisions about the three best systems (their two clusters, apart from each other and from the
  rest) are asked of it, against uniform allocation asked the same.

Prints the judgments each needed per seed, the medians, and the saving of the median.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalcore.human.allocation import Policy, simulate_allocation

TRUE_MEANS = [0.5, 0.5, 0.3, 0.12, 0.12, 0.0, -0.3, -0.3, -0.3, -0.8]
TRUE_CLUSTERS = [1, 1, 2, 3, 3, 4, 5, 5, 5, 6]
# The decisions asked of the top-3 mode: the three best systems' two clusters apart from each
# other and from the rest (the rest one cluster).
TOP_CLUSTERS = [min(c, 3) for c in TRUE_CLUSTERS]
BATCH = 200
BUDGET = 40_000


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def needed(policy: Policy, target: list[int], seeds: int) -> list[int | None]:
    out = []
    for seed in range(seeds):
        run = simulate_allocation(
            TRUE_MEANS,
            target,
            policy=policy,
            noise_sd=1.0,
            batch=BATCH,
            budget=BUDGET,
            rng=np.random.default_rng(seed),
        )
        out.append(run.reached_at)
    return out


def median(values: list[int | None]) -> float:
    """The median, a run that never got there counted as the budget (so a saving is never
    overstated by it)."""
    return float(np.median([BUDGET if v is None else v for v in values]))


def compare(name: str, policy: Policy, target: list[int], seeds: int) -> None:
    start = time.perf_counter()
    uniform = needed("uniform", target, seeds)
    other = needed(policy, target, seeds)
    emit(f"\n{name} ({seeds} seeds, {time.perf_counter() - start:.0f} s)")
    emit(f"  uniform:  {uniform}")
    emit(f"  {policy}: {other}")
    saving = 1 - median(other) / median(uniform)
    emit(
        f"  median judgments: uniform {median(uniform):,.0f}, {policy} {median(other):,.0f}"
        f" -> {saving:.0%} fewer; not reached within {BUDGET:,}: "
        f"uniform {uniform.count(None)}, {policy} {other.count(None)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    emit(f"true means {TRUE_MEANS}, true clusters {TRUE_CLUSTERS}, batch {BATCH}")
    compare("Every cluster decision", "adaptive", TRUE_CLUSTERS, args.seeds)
    compare("The top three clusters' decisions", "top_k", TOP_CLUSTERS, args.seeds)


if __name__ == "__main__":
    main()
