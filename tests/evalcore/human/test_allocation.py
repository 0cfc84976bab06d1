"""Adaptive allocation: the adjacent pairs' p-values are the anytime-valid test's (by default) or
scipy's one-sided Mann-Whitney tests, the judgments a pair still needs follow the formulas worked
by hand, the batch goes to undecided pairs (nearest to a decision first) with a fifth kept
uniform, nothing once every pair is decided, the top-k mode to the k best and the one below; the
clusters are the analysis' WMT clusters; a simulation's decisions at every look are the rule's on
what was judged by then, and it decides a clearly ordered truth under every policy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.allocation import (
    adjacent_pairs,
    allocate_next,
    current_clusters,
    da_draws,
    decision_history,
    decisions,
    in_proportion,
    judgments_to_decide,
    mannwhitney_matrix,
    right_decisions,
    simulate_allocation,
    wanted,
    wrong_decisions,
)
from evalcore.human.sequential import order_p_value


def normal(mean: float, n: int, seed: int) -> np.ndarray:
    return mean + np.random.default_rng(seed).standard_normal(n)


def da(mean: float, n: int, seed: int) -> np.ndarray:
    """DA-like scores: normal around ``mean`` with sd 20, rounded and clipped to 0-100."""
    return np.clip(np.round(mean + 20 * np.random.default_rng(seed).standard_normal(n)), 0, 100)


def test_adjacent_pairs_follow_the_means_with_scipys_one_sided_p_values() -> None:
    samples = [normal(0.0, 40, 1), normal(1.0, 50, 2), normal(0.4, 30, 3)]
    pairs = adjacent_pairs(samples, rule="mannwhitney")
    assert [(h, lo) for h, lo, _ in pairs] == [(1, 2), (2, 0)]
    for high, low, p in pairs:
        expected = stats.mannwhitneyu(samples[high], samples[low], alternative="greater").pvalue
        assert p == pytest.approx(expected, rel=1e-12)


def test_adjacent_pairs_are_tested_anytime_valid_by_default() -> None:
    samples = [da(50.0, 40, 1), da(70.0, 50, 2), da(55.0, 30, 3)]
    pairs = adjacent_pairs(samples)
    assert [(h, lo) for h, lo, _ in pairs] == [(1, 2), (2, 0)]
    for high, low, p in pairs:
        assert p == order_p_value(samples[high], samples[low], (0.0, 100.0))
    # Another scale: a 1-7 criterion's scores scaled by its range.
    seven = [np.array([7.0, 6.0, 7.0] * 10), np.array([2.0, 1.0, 3.0] * 10)]
    assert adjacent_pairs(seven, bounds=(1.0, 7.0))[0][2] == order_p_value(*seven, (1.0, 7.0))


def test_the_mann_whitney_matrix_is_scipys_for_every_ordered_pair() -> None:
    rng = np.random.default_rng(4)
    for sizes in [(3, 4, 9), (8, 8, 20), (9, 5, 50), (500, 480, 300)]:
        for rounded in (True, False):
            xs = [rng.normal(50, 25, n) for n in sizes]
            xs = [np.round(x) for x in xs] if rounded else xs
            p = mannwhitney_matrix(xs)
            for a, b in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]:
                expected = stats.mannwhitneyu(xs[a], xs[b], alternative="greater").pvalue
                assert p[a, b] == pytest.approx(expected, rel=1e-12, abs=1e-300)
            assert np.isnan(np.diag(p)).all()


def test_the_judgments_a_pair_needs_are_the_normal_approximation() -> None:
    high = np.array([1.0, 2.0, 3.0])  # mean 2, variance 1
    low = np.array([0.5, 1.5, 2.5, 1.5])  # mean 1.5, variance 2/3
    z = 1.6448536269514722 + 0.8416212335729143  # z(0.95) + z(0.8)
    expected = z * z * (1 + 2 / 3) / 0.5**2 - 3
    assert judgments_to_decide(high, low, rule="mannwhitney") == pytest.approx(expected, rel=1e-12)
    # The anytime-valid rule: 2 ln(2 / 0.05) = 2 ln 40 = 7.3778 in place of z².
    anytime = 7.377758908227871 * (1 + 2 / 3) / 0.5**2 - 3
    assert judgments_to_decide(high, low) == pytest.approx(anytime, rel=1e-12)
    # A pair that has more than it needs still gets one more; a reversed pair needs "infinitely"
    # many (the difference is floored at 1e-9).
    assert judgments_to_decide(high + 100, low) == 1.0
    assert judgments_to_decide(low, high) > 1e15


def test_the_batch_goes_to_undecided_pairs_nearest_to_a_decision_first() -> None:
    # 0 and 1 decided apart; 1 and 2 close (undecided, near); 2 and 3 tied (undecided, far).
    samples = [da(90.0, 200, 1), da(50.0, 200, 2), da(46.0, 200, 3), da(46.0, 200, 4)]
    pairs = adjacent_pairs(samples)
    assert pairs[0][:2] == (0, 1)
    assert pairs[0][2] <= 0.05
    undecided = [(h, lo) for h, lo, p in pairs if p > 0.05]
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


@pytest.mark.parametrize("rule", ["anytime", "mannwhitney"])
def test_nothing_is_allocated_once_every_adjacent_pair_is_decided(rule: str) -> None:
    samples = [da(80.0, 100, 1), da(50.0, 100, 2), da(20.0, 100, 3)]
    assert all(p < 0.05 for _, _, p in adjacent_pairs(samples, rule=rule))  # type: ignore[arg-type]
    assert allocate_next(samples, 60, rule=rule).tolist() == [0, 0, 0]  # type: ignore[arg-type]


def test_a_pair_mann_whitney_decides_at_one_look_is_not_yet_decided_anytime() -> None:
    # Four points apart at sd 20 with 400 each: p = 0.0016 at this one look, but a test that
    # may be looked at after every batch asks for more.
    samples = [da(54.0, 400, 7), da(50.0, 400, 8)]
    [(_, _, once)] = adjacent_pairs(samples, rule="mannwhitney")
    [(_, _, anytime)] = adjacent_pairs(samples)
    assert once < 0.05 < anytime
    assert allocate_next(samples, 10, rule="mannwhitney").sum() == 0
    assert allocate_next(samples, 10).sum() == 10


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


def test_decisions_are_counted_against_the_target_and_the_true_means() -> None:
    target = [1, 1, 2, 3]
    assert wanted(target).sum() == 5  # 0 and 1 above 2 and 3, 2 above 3
    decided = np.zeros((4, 4), dtype=bool)
    decided[0, 2] = decided[1, 2] = decided[0, 3] = True
    assert right_decisions(decided, target) == 3
    true_means = [0.5, 0.5, 0.2, 0.0]
    assert wrong_decisions(decided, true_means) == 0
    decided[0, 1] = True  # a tie split
    decided[3, 2] = True  # a reversal
    assert wrong_decisions(decided, true_means) == 2
    assert right_decisions(decided, target) == 3


@pytest.mark.parametrize("rule", ["anytime", "mannwhitney"])
def test_the_decision_history_is_the_rules_decisions_on_what_was_judged_then(rule: str) -> None:
    samples = [da(60.0, 300, 1), da(52.0, 250, 2), da(40.0, 280, 3), da(52.0, 90, 4)]
    looks = [np.array([20, 20, 20, 20]), np.array([100, 80, 90, 40]), np.array([300, 250, 280, 90])]
    history = decision_history(samples, looks, rule=rule)  # type: ignore[arg-type]
    for seen, got in zip(looks, history, strict=True):
        prefix = [x[:n] for x, n in zip(samples, seen, strict=True)]
        assert (got == decisions(prefix, rule=rule)).all()  # type: ignore[arg-type]
    assert history[-1][0, 2]  # 60 above 40 decided in the end


def test_a_fixed_policy_splits_each_batch_in_its_proportions() -> None:
    assert in_proportion(np.array([1.0, 2.0, 3.0]), 30).tolist() == [5, 10, 15]
    # 10/3 rounded down is 3 each; the one left goes to the first largest share.
    assert in_proportion(np.array([1.0, 1.0, 1.0]), 10).tolist() == [4, 3, 3]
    run = simulate_allocation(
        da_draws([1.0, 0.0, -1.0], 0.5, np.random.default_rng(1)),
        3,
        policy="fixed",
        shares=[1.0, 2.0, 3.0],
        rule="mannwhitney",
        batch=30,
        budget=60,
    )
    # Means 25 points apart, sd 12.5: ten judgments each decide every pair at one look.
    assert run.spent == [30]
    assert run.stopped
    assert run.reached_at([1, 2, 3]) == 30


@pytest.mark.parametrize("rule", ["anytime", "mannwhitney"])
@pytest.mark.parametrize("policy", ["uniform", "adaptive", "top_k"])
def test_a_simulation_decides_a_clear_truth_under_every_policy(policy: str, rule: str) -> None:
    true_means = [1.0, 0.0, -1.0]
    run = simulate_allocation(
        da_draws(true_means, 1.0, np.random.default_rng(7)),
        3,
        policy=policy,  # type: ignore[arg-type]
        rule=rule,  # type: ignore[arg-type]
        batch=30,
        top_k=1,
        budget=3000,
    )
    assert run.spent == list(range(30, run.spent[-1] + 1, 30))
    # Every adjacent pair decided (top 1: the best and the one below): the stopping rule.
    assert run.stopped
    assert not run.ever_wrong(true_means)
    if policy == "top_k":
        assert run.decided[-1][0, 1]
        return
    reached = run.reached_at([1, 2, 3])
    assert reached is not None
    assert reached % 30 == 0
