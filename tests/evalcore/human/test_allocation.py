"""Adaptive allocation: the adjacent pairs' p-values are scipy's one-sided Mann-Whitney tests, the
judgments a pair still needs follow the normal-approximation formula worked by hand, the batch goes
to undecided pairs (nearest to a decision first) with a fifth kept uniform, nothing once every
pair is decided, the top-k mode to the k best and the one below; the clusters are the analysis'
WMT clusters; a simulation separates a clearly ordered truth under every policy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.allocation import (
    adjacent_pairs,
    allocate_next,
    current_clusters,
    in_proportion,
    judgments_to_decide,
    same_clusters,
    separates,
    simulate_allocation,
)


def normal(mean: float, n: int, seed: int) -> np.ndarray:
    return mean + np.random.default_rng(seed).standard_normal(n)


def test_adjacent_pairs_follow_the_means_with_scipys_one_sided_p_values() -> None:
    samples = [normal(0.0, 40, 1), normal(1.0, 50, 2), normal(0.4, 30, 3)]
    pairs = adjacent_pairs(samples)
    assert [(h, lo) for h, lo, _ in pairs] == [(1, 2), (2, 0)]
    for high, low, p in pairs:
        expected = stats.mannwhitneyu(samples[high], samples[low], alternative="greater").pvalue
        assert p == expected


def test_the_judgments_a_pair_needs_are_the_normal_approximation() -> None:
    high = np.array([1.0, 2.0, 3.0])  # mean 2, variance 1
    low = np.array([0.5, 1.5, 2.5, 1.5])  # mean 1.5, variance 2/3
    z = 1.6448536269514722 + 0.8416212335729143  # z(0.95) + z(0.8)
    expected = z * z * (1 + 2 / 3) / 0.5**2 - 3
    assert judgments_to_decide(high, low) == pytest.approx(expected, rel=1e-12)
    # A pair that has more than it needs still gets one more; a reversed pair needs "infinitely"
    # many (the difference is floored at 1e-9).
    assert judgments_to_decide(high + 100, low) == 1.0
    assert judgments_to_decide(low, high) > 1e15


def test_the_batch_goes_to_undecided_pairs_nearest_to_a_decision_first() -> None:
    # 0 and 1 decided apart; 1 and 2 close (undecided, near); 2 and 3 tied (undecided, far).
    samples = [normal(3.0, 200, 1), normal(1.0, 200, 2), normal(0.8, 200, 3), normal(0.8, 200, 4)]
    pairs = adjacent_pairs(samples)
    assert pairs[0][:2] == (0, 1)
    assert pairs[0][2] < 0.05
    undecided = [(h, lo) for h, lo, p in pairs if p >= 0.05]
    assert len(undecided) == 2
    counts = allocate_next(samples, 100)
    assert counts.sum() == 100
    # A fifth (20) uniform, 5 each; the other 80 by the inverse of what each pair needs.
    need = np.array([judgments_to_decide(samples[h], samples[lo]) for h, lo in undecided])
    shares = np.floor(80 * (1 / need) / (1 / need).sum()).astype(int)
    shares[int(np.argmax(1 / need))] += 80 - shares.sum()
    expected = np.full(4, 5)
    for (h, lo), share in zip(undecided, shares, strict=True):
        expected[h] += share - share // 2
        expected[lo] += share // 2
    assert counts.tolist() == expected.tolist()
    # System 0, decided on both sides, gets only its uniform share.
    assert counts[0] == 5


def test_nothing_is_allocated_once_every_adjacent_pair_is_decided() -> None:
    samples = [normal(4.0, 100, 1), normal(2.0, 100, 2), normal(0.0, 100, 3)]
    assert all(p < 0.05 for _, _, p in adjacent_pairs(samples))
    assert allocate_next(samples, 60).tolist() == [0, 0, 0]


def test_unjudged_systems_come_first_and_top_k_focuses_on_the_best() -> None:
    samples = [normal(0.0, 10, 1), np.empty(0), np.empty(0)]
    assert allocate_next(samples, 9).tolist() == [0, 5, 4]
    samples = [normal(m, 30, k) for k, m in enumerate([0.0, 3.0, 1.0, 2.0, -1.0])]
    # A fifth (10) to every system, the rest (40) to the two best (1 and 3) and the one below
    # them (2): 14, 13 and 13.
    assert allocate_next(samples, 50, top_k=2).tolist() == [2, 16, 15, 15, 2]


def test_current_clusters_are_the_wmt_clusters_of_the_rank_sum_tests() -> None:
    apart = [normal(2.0, 80, 1), normal(0.0, 80, 2)]
    p = stats.mannwhitneyu(apart[0], apart[1], alternative="greater").pvalue
    assert p < 0.05
    assert current_clusters(apart).tolist() == [1, 2]
    tied = [normal(0.0, 80, 3), normal(0.0, 80, 4)]
    assert stats.mannwhitneyu(tied[0], tied[1], alternative="greater").pvalue >= 0.05
    assert stats.mannwhitneyu(tied[1], tied[0], alternative="greater").pvalue >= 0.05
    assert current_clusters(tied).tolist() == [1, 1]


def test_separates_asks_every_decision_of_the_target_and_nothing_more() -> None:
    target = [1, 1, 2, 3]
    assert separates([1, 1, 2, 3], target)
    assert separates([1, 2, 3, 4], target)  # a tie split: the test's own false positive
    assert not separates([1, 1, 1, 2], target)  # 2 and 3 not apart
    assert not separates([2, 2, 1, 3], target)  # apart, but in the wrong order


def test_same_clusters_also_holds_a_chance_split_against_a_policy() -> None:
    target = [1, 1, 2, 3]
    assert same_clusters([1, 1, 2, 3], target)
    assert same_clusters([4, 4, 5, 6], target)  # other numbers, the same clusters
    assert not same_clusters([1, 2, 3, 4], target)  # the tie split by chance
    assert not same_clusters([1, 1, 1, 2], target)  # a decision missing


def test_a_fixed_policy_splits_each_batch_in_its_proportions() -> None:
    assert in_proportion(np.array([1.0, 2.0, 3.0]), 30).tolist() == [5, 10, 15]
    # 10/3 rounded down is 3 each; the one left goes to the first largest share.
    assert in_proportion(np.array([1.0, 1.0, 1.0]), 10).tolist() == [4, 3, 3]
    run = simulate_allocation(
        [3.0, 0.0, -3.0],
        [1, 2, 3],
        policy="fixed",
        shares=[1.0, 2.0, 3.0],
        noise_sd=1.0,
        batch=30,
        budget=60,
        rng=np.random.default_rng(1),
    )
    assert run.reached_at == 30
    assert run.clusters is not None
    assert same_clusters(run.clusters, [1, 2, 3])


@pytest.mark.parametrize("policy", ["uniform", "adaptive"])
def test_a_simulation_separates_a_clear_truth_under_both_policies(policy: str) -> None:
    run = simulate_allocation(
        [1.0, 0.0, -1.0],
        [1, 2, 3],
        policy=policy,  # type: ignore[arg-type]
        noise_sd=1.0,
        batch=30,
        budget=3000,
        rng=np.random.default_rng(7),
    )
    assert run.reached_at is not None
    assert run.reached_at == run.spent <= 3000
    assert run.reached_at % 30 == 0
