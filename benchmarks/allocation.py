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
* oracle: every batch in fixed proportions that know the truth, each system's share
  proportional to 1/d², d the true gap to the nearest system of another cluster (what a fixed
  design would give if the true means were known): a yardstick for what allocation can save;
* top-3 (Pearmut's focus mode: the three best systems and the one below them): only the
  decisions about the three best systems (their two clusters, apart from each other and from the
  rest) are asked of it, against uniform allocation asked the same.

Prints the judgments each needed per seed, the medians, the saving of the median, and how many
campaigns ended with clusters other than the truth (a tie split by chance: the decisions asked
were all made, but one more was made wrongly).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalcore.human.allocation import Policy, same_clusters, simulate_allocation

TRUE_MEANS = [0.5, 0.5, 0.3, 0.12, 0.12, 0.0, -0.3, -0.3, -0.3, -0.8]
TRUE_CLUSTERS = [1, 1, 2, 3, 3, 4, 5, 5, 5, 6]
# The decisions asked of the top-3 mode: the three best systems' two clusters apart from each
# other and from the rest (the rest one cluster).
TOP_CLUSTERS = [min(c, 3) for c in TRUE_CLUSTERS]
BATCH = 200
BUDGET = 40_000


def oracle_shares(means: list[float], clusters: list[int]) -> list[float]:
    """1/d² per system, d its true gap to the nearest system of another cluster."""
    gaps = [
        min(abs(m - o) for o, c in zip(means, clusters, strict=True) if c != own)
        for m, own in zip(means, clusters, strict=True)
    ]
    return [1 / (g * g) for g in gaps]


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def needed(policy: Policy, target: list[int], seeds: int) -> tuple[list[int | None], int]:
    """The judgments each seed needed, and how many campaigns ended with clusters other than
    the truth."""
    out = []
    wrong = 0
    for seed in range(seeds):
        run = simulate_allocation(
            TRUE_MEANS,
            target,
            policy=policy,
            noise_sd=1.0,
            batch=BATCH,
            budget=BUDGET,
            shares=oracle_shares(TRUE_MEANS, TRUE_CLUSTERS) if policy == "fixed" else None,
            rng=np.random.default_rng(seed),
        )
        out.append(run.reached_at)
        # Judged on the systems whose target cluster is their true one (top-3: the three best).
        kept = [k for k, (t, c) in enumerate(zip(target, TRUE_CLUSTERS, strict=True)) if t == c]
        wrong += run.clusters is None or not same_clusters(
            run.clusters[kept], [target[k] for k in kept]
        )
    return out, wrong


def median(values: list[int | None]) -> float:
    """The median, a run that never got there counted as the budget (so a saving is never
    overstated by it)."""
    return float(np.median([BUDGET if v is None else v for v in values]))


def compare(name: str, policies: list[Policy], target: list[int], seeds: int) -> None:
    start = time.perf_counter()
    uniform, uniform_wrong = needed("uniform", target, seeds)
    emit(f"\n{name} ({seeds} seeds)")
    emit(f"  uniform: {uniform}")
    emit(
        f"  uniform: median {median(uniform):,.0f}; not reached within {BUDGET:,}:"
        f" {uniform.count(None)}; clusters other than the truth: {uniform_wrong}"
    )
    for policy in policies:
        other, wrong = needed(policy, target, seeds)
        label = "oracle" if policy == "fixed" else policy
        saving = 1 - median(other) / median(uniform)
        emit(f"  {label}: {other}")
        emit(
            f"  {label}: median {median(other):,.0f} -> {saving:.0%} fewer than uniform;"
            f" not reached within {BUDGET:,}: {other.count(None)};"
            f" clusters other than the truth: {wrong}"
        )
    emit(f"  ({time.perf_counter() - start:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    emit(f"true means {TRUE_MEANS}, true clusters {TRUE_CLUSTERS}, batch {BATCH}")
    compare("Every cluster decision", ["adaptive", "fixed"], TRUE_CLUSTERS, args.seeds)
    compare("The top three clusters' decisions", ["top_k"], TOP_CLUSTERS, args.seeds)


if __name__ == "__main__":
    main()
