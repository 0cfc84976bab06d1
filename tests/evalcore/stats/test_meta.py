"""System-level correlation with bootstrap intervals over segments: point values equal scipy's
coefficients on sacreBLEU's corpus scores; the interval agrees with scipy.stats.bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from scipy import stats as sps

from evalcore.scoring import make_metric
from evalcore.stats.meta import least_squares_line, system_correlation_bootstrap
from evalcore.stats.resampling import mean_score, mean_statistics

WORDS = [
    "the",
    "a",
    "house",
    "dog",
    "cat",
    "runs",
    "fast",
    "slow",
    "today",
    "tomorrow",
    "city",
    "river",
    "old",
    "new",
    "big",
    "small",
]


def corpus(n_segments: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(5, 12)))) for _ in range(n_segments)]


def degrade(refs: list[str], rate: float, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for ref in refs:
        words = [w if rng.random() > rate else str(rng.choice(WORDS)) for w in ref.split()]
        out.append(" ".join(words))
    return out


@pytest.fixture(scope="module")
def campaign():  # type: ignore[no-untyped-def]
    refs = corpus(60, 1)
    rates = [0.05, 0.15, 0.3, 0.45, 0.6, 0.8]
    runs = [[degrade(refs, rate, 100 * s + r) for r in range(2)] for s, rate in enumerate(rates)]
    rng = np.random.default_rng(7)
    # Human per-segment scores: worse for higher degradation, with noise.
    human = np.stack([np.clip(1 - rate + rng.normal(0, 0.3, size=60), 0, 1) for rate in rates])
    return refs, runs, human


def test_the_point_values_are_scipys_coefficients_of_sacrebleu_corpus_scores(campaign) -> None:  # type: ignore[no-untyped-def]
    refs, runs, human = campaign
    bleu = make_metric("bleu")
    stats = np.stack([[bleu.statistics(run, [refs]) for run in system] for system in runs])
    human_stats = np.stack([mean_statistics(h) for h in human])
    result = system_correlation_bootstrap(
        human_stats, stats, bleu.score_from_statistics, n_samples=200, rng=3
    )
    metric_points = [
        np.mean([sacrebleu.corpus_bleu(run, [refs]).score for run in system]) for system in runs
    ]
    human_points = human.mean(axis=1)
    assert result["pearson"].value == pytest.approx(
        sps.pearsonr(human_points, metric_points)[0], abs=1e-9
    )
    assert result["spearman"].value == pytest.approx(
        sps.spearmanr(human_points, metric_points)[0], abs=1e-9
    )
    assert result["kendall"].value == pytest.approx(
        sps.kendalltau(human_points, metric_points)[0], abs=1e-9
    )
    for r in result.values():
        assert r.low <= r.high
        assert r.n_systems == 6


def test_the_interval_agrees_with_scipy_bootstrap_over_segments() -> None:
    rng = np.random.default_rng(11)
    n_systems, n_segments = 8, 120
    quality = np.linspace(0.2, 0.9, n_systems)
    human = quality[:, None] + rng.normal(0, 0.6, size=(n_systems, n_segments))
    metric = quality[:, None] + rng.normal(0, 0.6, size=(n_systems, n_segments))
    ours = system_correlation_bootstrap(
        np.stack([mean_statistics(h) for h in human]),
        np.stack([mean_statistics(m) for m in metric])[:, np.newaxis],
        mean_score,
        methods=("pearson",),
        n_samples=4000,
        rng=5,
    )["pearson"]

    def statistic(idx: np.ndarray) -> float:
        return float(sps.pearsonr(human[:, idx].mean(axis=1), metric[:, idx].mean(axis=1))[0])

    reference = sps.bootstrap(
        (np.arange(n_segments),),
        statistic,
        n_resamples=4000,
        method="percentile",
        vectorized=False,
        random_state=np.random.default_rng(6),
    ).confidence_interval
    assert ours.value == pytest.approx(statistic(np.arange(n_segments)), abs=1e-12)
    # Two independent Monte-Carlo estimates of the same percentiles.
    assert ours.low == pytest.approx(reference.low, abs=0.04)
    assert ours.high == pytest.approx(reference.high, abs=0.04)


def test_the_same_seed_gives_the_same_interval(campaign) -> None:  # type: ignore[no-untyped-def]
    refs, runs, human = campaign
    chrf = make_metric("chrf")
    stats = np.stack([[chrf.statistics(run, [refs]) for run in system] for system in runs])
    human_stats = np.stack([mean_statistics(h) for h in human])
    a = system_correlation_bootstrap(
        human_stats, stats, chrf.score_from_statistics, n_samples=100, rng=9
    )
    b = system_correlation_bootstrap(
        human_stats, stats, chrf.score_from_statistics, n_samples=100, rng=9
    )
    assert a == b


def test_the_fitted_line_is_numpys_least_squares() -> None:
    slope, intercept = least_squares_line([1, 2, 3, 4], [2.1, 3.9, 6.2, 7.8])
    reference = sps.linregress([1, 2, 3, 4], [2.1, 3.9, 6.2, 7.8])
    assert slope == pytest.approx(reference.slope)
    assert intercept == pytest.approx(reference.intercept)


def test_the_closed_form_line_matches_polyfit_and_scipy_on_random_data() -> None:
    rng = np.random.default_rng(11)
    for n in [2, 3, 5, 21, 100]:
        for _ in range(20):
            x = rng.normal(50, 20, size=n)
            y = 0.3 * x + rng.normal(0, 5, size=n) - 7
            slope, intercept = least_squares_line(x, y)
            fitted = np.polyfit(x, y, 1)
            reference = sps.linregress(x, y)
            assert slope == pytest.approx(fitted[0], rel=1e-9, abs=1e-12)
            assert intercept == pytest.approx(fitted[1], rel=1e-9, abs=1e-9)
            assert slope == pytest.approx(reference.slope, rel=1e-9, abs=1e-12)
            assert intercept == pytest.approx(reference.intercept, rel=1e-9, abs=1e-9)
    assert all(map(np.isnan, least_squares_line([3, 3, 3], [1, 2, 3])))
    assert all(map(np.isnan, least_squares_line([1], [2])))


def test_a_human_statistic_that_is_not_a_ratio_is_resampled_as_its_point_is() -> None:
    # Expected Wins from per-segment pairwise win counts: the point and every resample are the
    # same function of summed counts. Replayed here with scipy and the documented draw
    # default_rng(seed).choice(n, size=(samples, n)).
    rng = np.random.default_rng(3)
    n_systems, n_segments, n_samples = 5, 40, 300
    quality = np.linspace(0.0, 1.0, n_systems)
    wins = np.zeros((n_segments, n_systems, n_systems))
    for s in range(n_segments):
        for a in range(n_systems):
            for b in range(n_systems):
                if a != b and rng.random() < 0.5 + 0.4 * (quality[a] - quality[b]):
                    wins[s, a, b] += 1
    metric = quality[:, None] + rng.normal(0, 0.5, size=(n_systems, n_segments))

    def expected_wins(summed: np.ndarray) -> np.ndarray:
        w = summed.reshape(*summed.shape[:-1], n_systems, n_systems)
        decided = w + np.swapaxes(w, -1, -2)
        share = np.divide(w, decided, out=np.zeros_like(w), where=decided > 0)
        return share.sum(axis=-1) / (decided > 0).sum(axis=-1)

    result = system_correlation_bootstrap(
        wins.reshape(n_segments, -1),
        np.stack([mean_statistics(m) for m in metric])[:, np.newaxis],
        mean_score,
        human_score_fn=expected_wins,
        n_samples=n_samples,
        rng=8,
    )
    point_h = expected_wins(wins.sum(axis=0).ravel())
    point_m = metric.mean(axis=1)
    assert result["pearson"].value == pytest.approx(sps.pearsonr(point_h, point_m)[0], abs=1e-12)
    assert result["kendall"].value == pytest.approx(sps.kendalltau(point_h, point_m)[0], abs=1e-12)
    idx = np.random.default_rng(8).choice(n_segments, size=(n_samples, n_segments))
    replay = sorted(
        sps.pearsonr(expected_wins(wins[row].sum(axis=0).ravel()), metric[:, row].mean(axis=1))[0]
        for row in idx
    )
    drop = int(n_samples * 0.025)
    assert result["pearson"].low == pytest.approx(replay[drop], abs=1e-12)
    assert result["pearson"].high == pytest.approx(replay[n_samples - 1 - drop], abs=1e-12)
    assert result["pearson"].low <= result["pearson"].value <= result["pearson"].high
