"""Allocation policies and stopping rules compared on simulated and on replayed real judgments.

    .venv/bin/python benchmarks/allocation.py           # 20 simulated seeds, 10 per replay
    .venv/bin/python benchmarks/allocation.py --quick   # 4 and 2: a smoke run
    .venv/bin/python benchmarks/allocation.py --seeds 5 --replays 3 --only replay

Policies: uniform (every system the same share of each batch), adaptive
(``evalcore.human.allocation.allocate_next``: the undecided adjacent pairs of the current
ranking, nearest to a decision first, a fifth of the batch uniform) and top-3 (Pearmut's focus
mode: the three best systems and the one below them, a fifth uniform). Each runs under two
stopping rules, the rule that decides an adjacent pair after every batch of 200 judgments:

* ``mannwhitney``: the one-sided Mann-Whitney test at α = 0.05, as if each look were the only
  one (the rule pull mode had before);
* ``anytime``: the anytime-valid test of ``evalcore.human.sequential`` at α = 0.05 (the chance
  that a tied pair is ever declared apart is at most α, however many looks).

A campaign's decisions at a look are the pairs its rule declares apart, every pair tested on its
own (what the per-pair guarantee is about). It ends when every adjacent pair of its ranking is
decided (its stopping rule; top-3: the three best's pairs), when the budget is spent, or once it
has made the truth's decisions and reached the fixed budget below.

Simulation: ten systems in six true clusters (true means 0.5, 0.5 | 0.3 | 0.12, 0.12 | 0.0 |
−0.3 ×3 | −0.8, ties inside a cluster), a judgment = 50 + 25 (true mean + N(0, 1)) rounded and
clipped to 0–100 (a 3-point gap between the closest clusters, sd 25 as DA sliders have).

Replay: WMT21 Flores crowd DA (``shared/data/wmt21-flores-da``, 4 language pairs, 5–9 systems,
~500 raw judgments a system); a campaign draws each judgment it asks for at random, with
replacement, from the system's real ones. The truth's decisions are the WMT clusters of all the
real judgments by their means (a one-sided bootstrap test of the raw means at α = 0.05, seeded:
the anytime rule decides about means; the rank-sum clusters the analysis shows for DA, and
WMT's published ones on z-scores, are printed beside them); a decision is wrong when it orders two
systems against the means of all their real judgments.

Printed per policy and rule: the judgments until the decisions first include every decision
of the truth (median and range over seeds; "not reached" within the budget) and the campaigns
that declared a wrong order at some look by then; and at a fixed budget (simulation 6,000;
replay: as many judgments as WMT collected) the truth's decisions made (mean over seeds, of how
many) and the campaigns whose decisions then include a wrong one.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.allocation_replay import (
    PAIRS,
    flores_folder,
    published_clusters,
    real_judgments,
    resampled,
)
from evalcore.human.allocation import (
    Draw,
    Policy,
    Rule,
    current_clusters,
    da_draws,
    right_decisions,
    simulate_allocation,
    wanted,
    wrong_decisions,
)
from evalcore.human.judgments import BoolArray

TRUE_MEANS = [0.5, 0.5, 0.3, 0.12, 0.12, 0.0, -0.3, -0.3, -0.3, -0.8]
TRUE_CLUSTERS = [1, 1, 2, 3, 3, 4, 5, 5, 5, 6]
BATCH = 200
TOP_K = 3
RULES: tuple[Rule, ...] = ("mannwhitney", "anytime")


@dataclass(frozen=True)
class Scenario:
    name: str
    systems: int
    target: list[int]
    true_means: list[float]
    draws: Callable[[int], Draw]  # seed -> judgments
    budget: int
    fixed: int


def top_target(target: Sequence[int], k: int = TOP_K) -> list[int]:
    """The decisions asked of the top-k mode: the k best systems' clusters apart from each
    other and from the rest (the rest one cluster)."""
    cut = sorted(target)[k - 1] + 1
    return [min(c, cut) for c in target]


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def row(scenario: Scenario, policy: Policy, rule: Rule, target: list[int], seeds: int) -> str:
    reached: list[int | None] = []
    wrong_by_then = right = wrong_at_budget = 0
    want = wanted(target)
    for seed in range(seeds):

        def enough(spent: int, now: Callable[[], BoolArray]) -> bool:
            return spent >= scenario.fixed and bool(np.all(now()[want]))

        run = simulate_allocation(
            scenario.draws(seed),
            scenario.systems,
            policy=policy,
            rule=rule,
            batch=BATCH,
            budget=scenario.budget,
            top_k=TOP_K,
            enough=enough,
        )
        at = run.reached_at(target)
        reached.append(at)
        wrong_by_then += run.ever_wrong(scenario.true_means, at)
        final = run.at(scenario.fixed)
        right += right_decisions(final, target)
        wrong_at_budget += wrong_decisions(final, scenario.true_means) > 0
    got = [scenario.budget if v is None else v for v in reached]
    asked = int(want.sum())
    return (
        f"| {policy} | {rule} | {np.median(got):,.0f} ({min(got):,}–{max(got):,})"
        f" | {reached.count(None)} | {wrong_by_then} of {seeds}"
        f" | {right / seeds:.1f} of {asked} | {wrong_at_budget} of {seeds} |"
    )


def compare(scenario: Scenario, seeds: int) -> None:
    start = time.perf_counter()
    emit(f"\n{scenario.name}: {seeds} seeds, budget {scenario.budget:,}, fixed {scenario.fixed:,}")
    emit(
        "| policy | rule | judgments to the truth's decisions | not reached | wrong by then"
        " | truth's decisions at the fixed budget | wrong at the fixed budget |"
    )
    emit("|---|---|---:|---:|---:|---:|---:|")
    top = top_target(scenario.target)
    for policy, target in (("uniform", scenario.target), ("adaptive", scenario.target)):
        for rule in RULES:
            emit(row(scenario, policy, rule, target, seeds))  # type: ignore[arg-type]
    emit(f"top {TOP_K}: only the decisions about the {TOP_K} best systems asked ({top})")
    for policy in ("uniform", "top_k"):
        for rule in RULES:
            emit(row(scenario, policy, rule, top, seeds))  # type: ignore[arg-type]
    emit(f"({time.perf_counter() - start:.0f} s)")


def simulated() -> Scenario:
    return Scenario(
        name="Simulation",
        systems=len(TRUE_MEANS),
        target=TRUE_CLUSTERS,
        true_means=TRUE_MEANS,
        draws=lambda seed: da_draws(TRUE_MEANS, 1.0, np.random.default_rng(seed)),
        budget=40_000,
        fixed=6_000,
    )


def replayed(pair: str) -> Scenario:
    folder = flores_folder()
    judgments = real_judgments(folder, pair)
    names = list(judgments)
    pools = [judgments[n] for n in names]
    # The truth: clusters by the means of all real judgments (bootstrap test, seeded); the
    # rank-sum clusters and WMT's published ones (z-scores) are printed beside them.
    truth = current_clusters(pools, test="bootstrap", rng=0).tolist()
    rank_sum = current_clusters(pools).tolist()
    published = published_clusters(folder, pair)
    emit(f"\n{pair}: system mean (judgments) clusters: by the means / by rank sums / published")
    for n, p, c, r in zip(names, pools, truth, rank_sum, strict=True):
        emit(f"  {n} {p.mean():.2f} ({len(p)}) {c} / {r} / {published.get(n, '?')}")
    collected = sum(len(p) for p in pools)
    return Scenario(
        name=f"Replay {pair}",
        systems=len(pools),
        target=truth,
        true_means=[float(np.mean(p)) for p in pools],
        draws=lambda seed: resampled(pools, np.random.default_rng(seed)),
        budget=8 * collected,
        fixed=collected,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="simulated campaigns a policy")
    parser.add_argument("--replays", type=int, default=10, help="replays a language pair")
    parser.add_argument("--quick", action="store_true", help="4 and 2: a smoke run")
    parser.add_argument("--only", choices=["simulation", "replay"], default=None)
    args = parser.parse_args()
    seeds, replays = (4, 2) if args.quick else (args.seeds, args.replays)
    if args.only != "replay":
        emit(f"true means {TRUE_MEANS}, true clusters {TRUE_CLUSTERS}, batch {BATCH}")
        compare(simulated(), seeds)
    if args.only != "simulation":
        for pair in PAIRS:
            compare(replayed(pair), replays)


if __name__ == "__main__":
    main()
