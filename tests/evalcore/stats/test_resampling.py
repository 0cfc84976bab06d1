"""Bootstrap and approximate randomisation on statistics, against sacreBLEU's significance code.

sacreBLEU 2.6 draws its resamples with ``default_rng(seed).choice(n, size=(samples, n))`` and its
AR masks with ``default_rng(seed).integers(2, size=(trials, n), dtype=bool)``; we draw the same
numbers from the same seed, so the comparison is of the same resamples, not of two random runs.
Tolerances: sacreBLEU converts bootstrap statistics to float32 before scoring, so its resampled
chrF/TER scores differ from ours by ~1e-6 relative. A resample whose centred difference lies
within that distance of the observed difference could fall on the other side of the strict ">",
so p-values may differ by one sample, 1/(n+1); bootstrap means and CI half-widths by 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.significance import PairedTest, _bootstrap_resample, estimate_ci

from evalcore.scoring import make_metric
from evalcore.stats import resampling
from evalcore.stats.resampling import (
    as_generator,
    bootstrap_ci,
    bootstrap_scores,
    mean_score,
    mean_statistics,
    paired_approximate_randomization,
    paired_bootstrap,
    percentile_interval,
)
from tests.evalcore.corpus import corpus, variant

SEED = 12345
SACRE = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


@pytest.fixture(scope="module")
def systems() -> tuple[list[list[str]], list[list[str]]]:
    """A baseline and three systems that differ from it on 5–20% of 150 lines."""
    base, refs = corpus(seed=7, n_segments=150, n_refs=2)
    outputs = [base] + [
        variant(seed, base, refs, share) for seed, share in ((1, 0.05), (2, 0.1), (3, 0.2))
    ]
    return outputs, refs


def _sacre_paired(name: str, outputs: list[list[str]], refs: list[list[str]], test: str, n: int):
    named = [(f"s{i}", hyps) for i, hyps in enumerate(outputs)]
    _, scores = PairedTest(named, {name: SACRE[name]()}, refs, test_type=test, n_samples=n)()
    key = next(k for k in scores if k != "System")
    return scores[key]


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_paired_bootstrap_p_values_match_sacrebleu_paired_test(name, systems):
    outputs, refs = systems
    metric = make_metric(name)
    stats = np.stack([metric.statistics(h, refs) for h in outputs])
    sacre = _sacre_paired(name, outputs, refs, "bs", 1000)

    ours = paired_bootstrap(stats[0], stats[1:], metric.score_from_statistics, rng=SEED)

    expected = np.array([r.p_value for r in sacre[1:]])
    assert np.abs(ours.p_value - expected).max() <= 1 / 1001 + 1e-12
    assert ours.p_value == pytest.approx(expected, abs=1 / 1001 + 1e-12)
    assert expected.max() > 0.01  # the systems are close enough for the p-values to say something
    assert ours.mean_b == pytest.approx([r.mean for r in sacre[1:]], abs=1e-4)
    assert ours.ci_b == pytest.approx([r.ci for r in sacre[1:]], abs=1e-4)
    assert ours.score_b == pytest.approx([r.score for r in sacre[1:]], abs=1e-9)


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_approximate_randomization_p_values_match_sacrebleu_paired_test(name, systems):
    outputs, refs = systems
    metric = make_metric(name)
    stats = np.stack([metric.statistics(h, refs) for h in outputs])
    sacre = _sacre_paired(name, outputs, refs, "ar", 2000)

    ours = paired_approximate_randomization(
        stats[0], stats[1:], metric.score_from_statistics, n_trials=2000, rng=SEED
    )

    expected = np.array([r.p_value for r in sacre[1:]])
    assert ours.p_value == pytest.approx(expected, abs=1 / 2001 + 1e-12)
    assert expected.max() > 0.01


def test_bootstrap_ci_reproduces_sacrebleu_corpus_score_confidence_interval(systems):
    outputs, refs = systems
    metric = make_metric("bleu")
    stats = metric.statistics(outputs[0], refs)
    sacre_metric = sacrebleu.BLEU()
    sacre_stats = sacre_metric._extract_corpus_statistics(outputs[0], refs)
    _, sacre_scores = _bootstrap_resample(sacre_stats, sacre_metric, 1000)
    mean, half = estimate_ci(np.array([s.score for s in sacre_scores]))

    ci = bootstrap_ci(stats, metric.score_from_statistics, n_samples=1000, rng=SEED)

    assert ci.mean == pytest.approx(mean, abs=1e-6)
    assert ci.half_width == pytest.approx(half, abs=1e-6)
    assert ci.seed == SEED
    assert ci.score == pytest.approx(sacrebleu.BLEU().corpus_score(outputs[0], refs).score)


def test_percentile_interval_drops_25_scores_at_each_end_of_1000_as_koehn_describes():
    samples = np.random.default_rng(0).permutation(np.arange(1000.0))
    low, high = percentile_interval(samples, 0.95)
    assert (low, high) == (25.0, 974.0)


def test_several_systems_share_resamples_and_match_one_at_a_time():
    values = np.random.default_rng(1).normal(size=(3, 80))
    together = bootstrap_ci(mean_statistics(values), mean_score, n_samples=300, rng=5)
    for k in range(3):
        alone = bootstrap_ci(mean_statistics(values[k]), mean_score, n_samples=300, rng=5)
        # The same resamples: equal up to the last bits, which the BLAS kernels of some CPUs
        # round differently for three rows than for one (another resample moves them by ~1e-2).
        assert together.low[k] == pytest.approx(alone.low, rel=1e-12, abs=1e-12)
        assert together.high[k] == pytest.approx(alone.high, rel=1e-12, abs=1e-12)
        assert together.mean[k] == pytest.approx(alone.mean, abs=1e-12)


def test_small_chunks_give_the_same_numbers_as_one_chunk(monkeypatch):
    values = np.random.default_rng(2).normal(size=(2, 300))
    stats = mean_statistics(values)
    big_b = paired_bootstrap(stats[0], stats[1], mean_score, n_samples=500, rng=3)
    big_a = paired_approximate_randomization(stats[0], stats[1], mean_score, n_trials=500, rng=3)
    monkeypatch.setattr(resampling, "_CHUNK_BYTES", 32 * 8 * 300)  # 32 rows per chunk
    small_b = paired_bootstrap(stats[0], stats[1], mean_score, n_samples=500, rng=3)
    small_a = paired_approximate_randomization(stats[0], stats[1], mean_score, n_trials=500, rng=3)
    assert small_b.p_value == big_b.p_value
    assert small_b.wins == big_b.wins
    assert small_a.p_value == big_a.p_value


def test_the_same_seed_gives_the_same_numbers_and_a_generator_is_used_as_given():
    stats = mean_statistics(np.random.default_rng(3).normal(size=100))
    first = bootstrap_ci(stats, mean_score, rng=42)
    second = bootstrap_ci(stats, mean_score, rng=42)
    assert (first.low, first.high, first.mean) == (second.low, second.high, second.mean)
    generator = np.random.default_rng(42)
    assert as_generator(generator) is generator
    from_generator = bootstrap_ci(stats, mean_score, rng=np.random.default_rng(42))
    assert from_generator.low == first.low
    assert from_generator.seed is None


def test_an_unseeded_run_reports_the_seed_that_repeats_it():
    stats = mean_statistics(np.random.default_rng(4).normal(size=60))
    unseeded = bootstrap_ci(stats, mean_score)
    assert unseeded.seed is not None
    again = bootstrap_ci(stats, mean_score, rng=unseeded.seed)
    assert (again.low, again.high) == (unseeded.low, unseeded.high)


def test_rng_rejects_what_is_not_a_seed_or_generator():
    with pytest.raises(TypeError):
        as_generator(1.5)  # type: ignore[arg-type]


def test_a_mean_is_a_statistic_like_any_other():
    x = np.array([1.0, 2.0, 6.0])
    assert mean_statistics(x).tolist() == [[1, 1], [2, 1], [6, 1]]
    assert mean_score(mean_statistics(x).sum(axis=0)) == 3.0
    scores = bootstrap_scores(mean_statistics(x), mean_score, n_samples=50, rng=0)
    assert scores.shape == (50,)
    assert set(np.round(scores * 3).astype(int)) <= set(range(3, 19))


def test_paired_bootstrap_win_loss_and_tie_shares_follow_neubig_algorithm_5():
    a = np.array([1.0, 1.0, 1.0, 1.0])
    b = np.array([1.0, 1.0, 1.0, 3.0])  # b is never worse, better whenever segment 4 is drawn
    result = paired_bootstrap(
        mean_statistics(a), mean_statistics(b), mean_score, n_samples=2000, rng=0
    )
    assert result.wins == 0.0
    assert result.losses + result.ties == pytest.approx(1.0)
    assert result.ties == pytest.approx((3 / 4) ** 4, abs=0.03)  # segment 4 never drawn
    assert result.observed_delta == pytest.approx(0.5)


def test_shapes_that_do_not_pair_are_refused():
    with pytest.raises(ValueError, match="same segments"):
        paired_bootstrap(np.ones((5, 2)), np.ones((6, 2)), mean_score)
    with pytest.raises(ValueError, match="cannot pair"):
        paired_approximate_randomization(np.ones((2, 5, 2)), np.ones((3, 5, 2)), mean_score)
    with pytest.raises(ValueError, match="n_segments"):
        bootstrap_ci(np.ones(5), mean_score)


scores = st.lists(
    st.floats(min_value=-100, max_value=100, allow_nan=False), min_size=2, max_size=40
)


@settings(max_examples=25, deadline=None)
@given(
    values=scores, trials=st.integers(min_value=1, max_value=300), seed=st.integers(0, 2**32 - 1)
)
def test_identical_systems_get_p_of_one_over_trials_plus_one(values, trials, seed):
    stats = mean_statistics(values)
    result = paired_approximate_randomization(stats, stats, mean_score, n_trials=trials, rng=seed)
    assert result.p_value == 1 / (trials + 1)
    boot = paired_bootstrap(stats, stats, mean_score, n_samples=trials, rng=seed)
    assert boot.p_value == 1 / (trials + 1)
    assert boot.ties == 1.0


@settings(max_examples=25, deadline=None)
@given(values=scores, seed=st.integers(0, 2**32 - 1))
def test_the_bootstrap_interval_brackets_the_bootstrap_mean(values, seed):
    ci = bootstrap_ci(mean_statistics(values), mean_score, n_samples=200, rng=seed)
    assert ci.low <= ci.mean + 1e-9
    assert ci.mean <= ci.high + 1e-9


@settings(max_examples=25, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.floats(min_value=0, max_value=10, allow_nan=False),
            st.floats(min_value=0, max_value=10, allow_nan=False),
        ),
        min_size=2,
        max_size=40,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_swapping_the_two_systems_leaves_two_sided_p_values_unchanged(pairs, seed):
    a = mean_statistics([p[0] for p in pairs])
    b = mean_statistics([p[1] for p in pairs])
    ar_ab = paired_approximate_randomization(a, b, mean_score, n_trials=200, rng=seed)
    ar_ba = paired_approximate_randomization(b, a, mean_score, n_trials=200, rng=seed)
    assert ar_ab.p_value == ar_ba.p_value
    bs_ab = paired_bootstrap(a, b, mean_score, n_samples=200, rng=seed)
    bs_ba = paired_bootstrap(b, a, mean_score, n_samples=200, rng=seed)
    assert bs_ab.p_value == bs_ba.p_value
    assert bs_ab.wins == bs_ba.losses


def test_the_chunk_size_follows_the_memory_budget(monkeypatch):
    assert resampling.chunk_rows(10000) == (64 * 2**20 // 80000) // 32 * 32
    monkeypatch.setattr(resampling, "_CHUNK_BYTES", 32 * 8 * 300)
    assert resampling.chunk_rows(300) == 32


def test_integer_statistics_resample_in_float32_with_exactly_the_float64_sums():
    metric = make_metric("bleu")
    hyps, refs = corpus(seed=6, n_segments=200, n_refs=2)
    stats = metric.statistics(hyps, refs)[np.newaxis]
    assert resampling.weight_dtype(stats, 200) == np.float32
    fast = resampling.resampled_scores(
        stats,
        metric.score_from_statistics,
        resampling.bootstrap_counts(np.random.default_rng(1), 300, 200, dtype=np.float32),
    )
    slow = resampling.resampled_scores(
        stats,
        metric.score_from_statistics,
        resampling.bootstrap_counts(np.random.default_rng(1), 300, 200, dtype=np.float64),
    )
    assert np.array_equal(fast, slow)
    assert resampling.weight_dtype(np.array([[0.5, 1.0]]), 10) == np.float64
    assert resampling.weight_dtype(np.array([[2.0**20]]), 100) == np.float64


def test_percentile_interval_leaves_out_undefined_resamples() -> None:
    # A statistic undefined on some resamples (NaN: e.g. the mean of a system none of whose
    # segments was drawn) must not become an interval bound: the order statistics are taken
    # over the defined samples only, exactly as if the NaN resamples had not been drawn.
    rng = np.random.default_rng(3)
    defined = rng.normal(size=960)
    with_nan = np.concatenate([defined, np.full(40, np.nan)])
    rng.shuffle(with_nan)
    low, high = percentile_interval(with_nan, 0.95)
    expected = np.sort(defined)
    drop = 24  # floor(960 · 0.025)
    assert low == expected[drop]
    assert high == expected[960 - 1 - drop]
    assert np.isnan(percentile_interval(np.full(5, np.nan))[0])
