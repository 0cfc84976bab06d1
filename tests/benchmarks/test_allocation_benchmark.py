"""The allocation benchmark (benchmarks/allocation.py): the real judgments it replays are
WMT21's (their counts and means per system are the release's published N and RAW.SCR), and a
tiny run prints every policy under both rules on the simulation and on each language pair. No
timing is asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.allocation import top_target
from benchmarks.allocation_replay import PAIRS, published_clusters, real_judgments, resampled
from tests.support.shared_data import shared_data_or_skip
from tests.support.wmt21_flores import published_system_scores

ROOT = Path(__file__).resolve().parents[2]
FLORES = shared_data_or_skip("wmt21-flores-da")


@pytest.mark.parametrize("pair", PAIRS)
def test_the_replayed_judgments_are_the_releases(pair: str) -> None:
    judgments = real_judgments(FLORES, pair)
    published = published_system_scores(pair)
    assert set(judgments) == set(published)
    for name, scores in judgments.items():
        raw, _z, n = published[name]
        assert len(scores) == n
        assert float(np.mean(scores)) == pytest.approx(raw, abs=1e-9)
        assert scores.min() >= 0
        assert scores.max() <= 100
    assert set(published_clusters(FLORES, pair)) == set(published)


def test_published_clusters_and_the_top_k_target() -> None:
    clusters = published_clusters(FLORES, "zu-xh")
    assert clusters == {"TRANSSION": 1, "HuaweiTSC": 2, "MS-EgDC": 2, "GTCOM": 2, "Online-G": 3}
    # The top three's decisions: the clusters down to the third best's, the rest one cluster.
    assert top_target([1, 1, 2, 3, 3, 4, 5]) == [1, 1, 2, 3, 3, 3, 3]
    assert top_target([1, 2, 2, 2, 3]) == [1, 2, 2, 2, 3]


def test_a_replay_draws_only_real_judgments_seeded() -> None:
    pools = [np.array([10.0, 20.0, 30.0]), np.array([99.0])]
    first = resampled(pools, np.random.default_rng(4))(0, 50)
    assert set(first.tolist()) == {10.0, 20.0, 30.0}
    assert resampled(pools, np.random.default_rng(4))(0, 50).tolist() == first.tolist()
    assert resampled(pools, np.random.default_rng(4))(1, 3).tolist() == [99.0] * 3


@pytest.mark.slow  # the benchmark in a process of its own
def test_a_tiny_run_prints_every_policy_under_both_rules() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/allocation.py", "--seeds=1", "--replays=1"],
        cwd=ROOT,
        # Where the test found the data (beside a clean clone's origin, for one).
        env={**os.environ, "EVALSITE_SHARED_DATA": str(FLORES.parent)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for scenario in ["Simulation", *(f"Replay {pair}" for pair in PAIRS)]:
        assert f"\n{scenario}: 1 seeds" in out, out
    for policy in ("uniform", "adaptive", "top_k"):
        for rule in ("mannwhitney", "anytime"):
            row = rf"\| {policy} \| {rule} \| [\d,]+ \([\d,]+–[\d,]+\) \| \d \| \d of 1 \|"
            assert re.search(row, out), (policy, rule, out)
