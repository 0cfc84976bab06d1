"""MultEval's multi-run statistics: mean, s_sel, s_opt and the stratified AR p-value (seed 004)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.scoring import make_metric
from evalcore.stats.multirun import (
    compare_runs,
    run_scores,
    s_opt,
    stratified_approximate_randomization,
)
from evalcore.stats.resampling import (
    bootstrap_ci,
    mean_score,
    mean_statistics,
    paired_approximate_randomization,
)
from tests.evalcore.corpus import corpus, variant


@pytest.fixture(scope="module")
def bleu_runs():
    """Three runs of a baseline and of a changed system, as BLEU statistics."""
    base, refs = corpus(seed=3, n_segments=120)
    metric = make_metric("bleu")
    baseline = [variant(10 + r, base, refs, 0.15) for r in range(3)]
    system = [variant(20 + r, base, refs, 0.4) for r in range(3)]
    stats_base = np.stack([metric.statistics(h, refs) for h in baseline])
    stats_sys = np.stack([metric.statistics(h, refs) for h in system])
    return metric, stats_base, stats_sys


def test_mean_is_over_runs_and_s_opt_is_the_sample_standard_deviation_of_run_scores(bleu_runs):
    metric, base, system = bleu_runs
    result = compare_runs(
        [("base", base), ("sys", system)],
        metric.score_from_statistics,
        baseline="base",
        n_bootstrap=200,
        n_trials=200,
        rng=1,
    )
    scores = run_scores(system, metric.score_from_statistics)
    sys_result = result.systems[1]
    assert sys_result.runs == pytest.approx(tuple(scores))
    assert sys_result.mean == pytest.approx(np.mean(scores))
    assert sys_result.s_opt == pytest.approx(np.std(scores, ddof=1))
    assert s_opt([5.0]) == 0.0


def test_s_sel_is_the_bootstrap_standard_deviation_averaged_over_runs(bleu_runs):
    metric, base, system = bleu_runs
    result = compare_runs(
        [("base", base), ("sys", system)],
        metric.score_from_statistics,
        baseline="base",
        n_bootstrap=300,
        n_trials=50,
        rng=7,
    )
    per_run = bootstrap_ci(
        np.concatenate([base, system]), metric.score_from_statistics, n_samples=300, rng=7
    ).std
    assert result.systems[0].s_sel == pytest.approx(per_run[:3].mean())
    assert result.systems[1].s_sel == pytest.approx(per_run[3:].mean())
    assert result.systems[0].p_value is None


def test_one_run_each_reduces_to_the_paired_test_with_the_same_draws(bleu_runs):
    metric, base, system = bleu_runs
    stratified = stratified_approximate_randomization(
        base[:1], system[:1], metric.score_from_statistics, n_trials=500, rng=9
    )
    paired = paired_approximate_randomization(
        base[0], system[0], metric.score_from_statistics, n_trials=500, rng=9
    )
    assert stratified.p_value == paired.p_value


def test_the_pooled_statistic_scores_all_runs_summed(bleu_runs):
    metric, base, system = bleu_runs
    result = stratified_approximate_randomization(
        base, system, metric.score_from_statistics, n_trials=100, rng=1
    )
    pooled = metric.score_from_statistics(system.sum(axis=(0, 1))) - metric.score_from_statistics(
        base.sum(axis=(0, 1))
    )
    assert result.observed_delta == pytest.approx(pooled)


def test_a_clearly_better_system_is_significant_and_a_copy_is_not_beaten(bleu_runs):
    metric, base, _system = bleu_runs
    for statistic in ("pooled", "mean_of_runs"):
        test = stratified_approximate_randomization(
            base,
            base.copy(),
            metric.score_from_statistics,
            n_trials=300,
            statistic=statistic,
            rng=2,
        )
        assert test.p_value == 1 / 301
    improved = np.stack([base[r] for r in range(3)])
    improved[:, :, 2:6] += 1  # one more match of every order in every segment
    for statistic in ("pooled", "mean_of_runs"):
        test = stratified_approximate_randomization(
            base, improved, metric.score_from_statistics, n_trials=300, statistic=statistic, rng=2
        )
        assert test.p_value < 0.05


def test_compare_runs_p_values_do_not_depend_on_the_other_systems(bleu_runs):
    metric, base, system = bleu_runs
    alone = compare_runs(
        [("b", base), ("s", system)],
        metric.score_from_statistics,
        baseline="b",
        n_bootstrap=50,
        n_trials=300,
        rng=4,
    )
    crowd = compare_runs(
        [("b", base), ("x", base[::-1]), ("s", system)],
        metric.score_from_statistics,
        baseline="b",
        n_bootstrap=50,
        n_trials=300,
        rng=4,
    )
    assert alone.systems[1].p_value == crowd.systems[2].p_value
    # The same runs in another order: no difference pooled, and shuffles only make one.
    assert crowd.systems[1].observed_delta == 0.0
    assert crowd.systems[1].p_value > 0.5


def test_inputs_that_cannot_be_compared_are_refused(bleu_runs):
    metric, base, system = bleu_runs
    with pytest.raises(ValueError, match="same runs"):
        stratified_approximate_randomization(base, system[:2], metric.score_from_statistics)
    with pytest.raises(ValueError, match="baseline"):
        compare_runs([("a", base)], metric.score_from_statistics, baseline="z")
    with pytest.raises(ValueError, match="unique"):
        compare_runs([("a", base), ("a", base)], metric.score_from_statistics, baseline="a")


runs_strategy = st.integers(min_value=1, max_value=4).flatmap(
    lambda runs: st.lists(
        st.lists(st.floats(0, 10, allow_nan=False), min_size=runs, max_size=runs),
        min_size=2,
        max_size=25,
    )
)


@settings(max_examples=20, deadline=None)
@given(values=runs_strategy, trials=st.integers(1, 200), seed=st.integers(0, 2**32 - 1))
def test_identical_systems_get_p_of_one_over_trials_plus_one(values, trials, seed):
    stats = mean_statistics(np.array(values).T)  # (runs, segments, 2)
    for statistic in ("pooled", "mean_of_runs"):
        result = stratified_approximate_randomization(
            stats, stats, mean_score, n_trials=trials, statistic=statistic, rng=seed
        )
        assert result.p_value == 1 / (trials + 1)


@settings(max_examples=20, deadline=None)
@given(a=runs_strategy, shift=st.floats(-3, 3, allow_nan=False), seed=st.integers(0, 2**32 - 1))
def test_swapping_the_systems_leaves_the_stratified_p_value_unchanged(a, shift, seed):
    first = np.array(a).T
    second = first[::-1] + shift
    sa, sb = mean_statistics(first), mean_statistics(second)
    for statistic in ("pooled", "mean_of_runs"):
        ab = stratified_approximate_randomization(
            sa, sb, mean_score, n_trials=100, statistic=statistic, rng=seed
        )
        ba = stratified_approximate_randomization(
            sb, sa, mean_score, n_trials=100, statistic=statistic, rng=seed
        )
        assert ab.p_value == ba.p_value


@pytest.mark.parametrize("fractional", [False, True])
def test_numbers_passed_in_from_the_ci_and_the_all_pairs_row_are_exactly_those_computed(
    fractional,
):
    # What the analysis passes: bootstrap_ci's std of the stacked runs (the same resamples) and
    # the baseline's row of all_pairs_tests on the pooled runs (the same masks).
    from evalcore.stats.allpairs import all_pairs_tests
    from evalcore.stats.resampling import bootstrap_ci, mean_score, mean_statistics

    rng = np.random.default_rng(3)
    if fractional:
        arrays = list(mean_statistics(np.round(rng.normal(50, 15, (4, 3, 60)), 2) / 3.0))
        score_fn = mean_score
    else:
        metric = make_metric("bleu")
        base, refs = corpus(seed=2, n_segments=60)
        arrays = [
            np.stack(
                [metric.statistics(variant(10 * s + r, base, refs, 0.3), refs) for r in range(3)]
            )
            for s in range(4)
        ]
        score_fn = metric.score_from_statistics
    systems = [(f"s{i}", a) for i, a in enumerate(arrays)]
    settings_ = {"baseline": "s2", "n_bootstrap": 200, "n_trials": 500, "rng": 77}
    computed = compare_runs(systems, score_fn, **settings_)
    pooled = np.stack([a.transpose(1, 0, 2).reshape(-1, a.shape[2]) for a in arrays])
    tests = all_pairs_tests(pooled, score_fn, n_samples=200, n_trials=500, seed=77)
    row = {j: (float(tests.ar_p[2, j]), float(tests.observed_delta[2, j])) for j in (0, 1, 3)}
    ci = bootstrap_ci(np.concatenate(arrays), score_fn, n_samples=200, rng=77)
    passed = compare_runs(systems, score_fn, **settings_, boot_std=ci.std, baseline_tests=row)
    assert passed == computed
