"""QC power: careful workers and random clickers simulated through the real bad-reference
test agree with the figures shown; the figures agree with closed forms and exact null
distributions worked out here from first principles."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from evalcore.human.judgments import FloatArray, ItemType, Judgments
from evalcore.human.qc import QCTest, bad_reference_test
from evalcore.human.qc_power import (
    CAREFUL,
    RANDOM,
    TARGET,
    paired_t_power,
    pairs_for_target,
    qc_power,
)

WORKERS = 1500


def _through_bad_reference_test(
    original: FloatArray, copy: FloatArray, *, test: QCTest, threshold: float = 0.05
) -> np.ndarray:
    """Each row a worker: their n real judgments and n bad references in one Judgments
    table, and the verdict of the campaign's own QC function on it."""
    workers, n = original.shape
    annotator = np.repeat(np.arange(workers), 2 * n)
    score = np.concatenate([original, copy], axis=1).ravel()
    kinds = np.r_[np.full(n, ItemType.REAL), np.full(n, ItemType.BAD_REF)]
    starts = np.arange(workers)[:, None] * 2 * n
    original_row = np.concatenate(
        [np.full((workers, n), -1), starts + np.arange(n)[None, :]], axis=1
    ).ravel()
    judgments = Judgments.from_arrays(
        annotator=annotator,
        segment=np.tile(np.arange(2 * n), workers),
        system=np.zeros(annotator.size, dtype=int),
        score=score,
        item_type=np.tile(kinds, workers),
        original=original_row,
    )
    return bad_reference_test(judgments, test=test, threshold=threshold).passed


def _agree(shown: float, simulated: float, n_shown: int, n_simulated: int) -> bool:
    """Within four standard errors of the difference of two independent shares (both exact
    at 0 or 1, where the error is nil)."""
    p = (shown * n_shown + simulated * n_simulated) / (n_shown + n_simulated)
    error = math.sqrt(p * (1 - p) * (1 / n_shown + 1 / n_simulated))
    return abs(shown - simulated) <= 4 * error + 1e-12


CASES = [
    ("paired_t", 2),
    ("paired_t", 5),
    ("paired_t", 12),
    ("wilcoxon", 8),
    ("mannwhitney", 3),
    ("mannwhitney", 12),
]


@pytest.mark.parametrize(("test", "n"), CASES)
def test_shown_figures_match_workers_simulated_through_the_real_qc_test(
    test: QCTest, n: int
) -> None:
    rng = np.random.default_rng(777)  # not the figures' seed: an independent simulation
    shown = qc_power(n, test=test)
    careful = _through_bad_reference_test(*CAREFUL.pairs((WORKERS, n), rng), test=test).mean()
    random_pass = _through_bad_reference_test(*RANDOM.pairs((WORKERS, n), rng), test=test).mean()
    assert _agree(shown.careful_pass, careful, shown.simulations, WORKERS)
    assert _agree(shown.random_fail, 1 - random_pass, shown.simulations, WORKERS)


def test_paired_t_power_is_the_noncentral_t_integral_worked_out_by_hand() -> None:
    """P(T ≥ c) with T = (Z + δ)/√(V/ν), Z normal, V χ²_ν: ∫ Φ(δ − c√(v/ν)) f_ν(v) dv."""
    for n in (2, 5, 10, 11, 30):
        nu = n - 1
        delta = math.sqrt(n) * CAREFUL.degradation / CAREFUL.noise
        c = stats.t.isf(0.05, nu)
        by_hand, _ = integrate.quad(
            lambda v, nu=nu, delta=delta, c=c: (
                stats.norm.cdf(delta - c * math.sqrt(v / nu)) * stats.chi2.pdf(v, nu)
            ),
            0,
            np.inf,
        )
        assert paired_t_power(n) == pytest.approx(by_hand, abs=1e-6)
    # Ten pairs fall just short of 90 %: the target needs eleven.
    assert paired_t_power(10) < TARGET < paired_t_power(11)


def _signed_rank_pass_share(n: int, alpha: float = 0.05) -> float:
    """Under a random clicker the differences are symmetric about 0: every sign pattern of
    the ranks 1..n is equally likely. The share of patterns whose exact one-sided p-value
    P(W⁺ ≥ w) is at most ``alpha``."""
    totals = [
        sum(r for r, s in zip(range(1, n + 1), signs, strict=True) if s)
        for signs in itertools.product((0, 1), repeat=n)
    ]
    counts = np.bincount(totals)
    tail = np.cumsum(counts[::-1])[::-1] / len(totals)
    return float(sum(counts[w] for w in range(counts.size) if tail[w] <= alpha) / len(totals))


def _rank_sum_pass_share(n: int, alpha: float = 0.05) -> float:
    """Under a random clicker the 2n scores are exchangeable: every choice of the ranks the
    originals take is equally likely. The share whose exact p-value P(U ≥ u) ≤ ``alpha``."""
    u = [sum(ranks) - n * (n + 1) // 2 for ranks in itertools.combinations(range(1, 2 * n + 1), n)]
    counts = np.bincount(u)
    tail = np.cumsum(counts[::-1])[::-1] / len(u)
    return float(sum(counts[w] for w in range(counts.size) if tail[w] <= alpha) / len(u))


@pytest.mark.parametrize("n", [2, 4, 5, 8, 12])
def test_random_clicker_fails_the_signed_rank_test_as_its_exact_null_says(n: int) -> None:
    shown = qc_power(n, test="wilcoxon")
    exact_fail = 1 - _signed_rank_pass_share(n)
    assert _agree(shown.random_fail, exact_fail, shown.simulations, 10**9)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_random_clicker_fails_the_rank_sum_test_as_its_exact_null_says(n: int) -> None:
    shown = qc_power(n, test="mannwhitney")
    exact_fail = 1 - _rank_sum_pass_share(n)
    assert _agree(shown.random_fail, exact_fail, shown.simulations, 10**9)


def test_the_issues_two_pairs_cannot_tell_a_careful_worker_from_a_random_one() -> None:
    """Two bad references per task: a careful worker passes the paired t 18 % of the time;
    the rank tests can never pass anyone (their smallest p-values are 1/4 and 1/6)."""
    assert qc_power(2).careful_pass == pytest.approx(0.1796, abs=1e-3)
    assert qc_power(2, test="wilcoxon").careful_pass == 0
    assert qc_power(2, test="mannwhitney").careful_pass == 0
    assert qc_power(2).low


def test_fewer_than_two_pairs_judge_nobody() -> None:
    for n in (0, 1):
        power = qc_power(n)
        assert not power.testable
        assert power.careful_pass == 0
        assert power.random_fail == 0


def test_pairs_for_target_is_the_fewest_pairs_that_reach_it() -> None:
    for test in ("paired_t", "wilcoxon", "mannwhitney"):
        n = pairs_for_target(test=test)
        assert n is not None
        assert qc_power(n, test=test).meets_target
        assert not qc_power(n - 1, test=test).meets_target
    # The paired test uses the pairing: about half the pairs of WMT's unpaired rank-sum test.
    assert pairs_for_target(test="paired_t") == 11
    assert pairs_for_target(test="mannwhitney") >= 2 * 11 - 2


def test_two_criteria_need_both_to_pass_and_either_to_fail() -> None:
    one, two = qc_power(12), qc_power(12, criteria=2)
    assert two.careful_pass == pytest.approx(one.careful_pass**2)
    assert two.random_fail == pytest.approx(1 - (1 - one.random_fail) ** 2)
    assert two.random_fail >= TARGET
