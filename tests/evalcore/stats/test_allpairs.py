"""All pairs at once give, bit for bit, what one call per system against all gives.

The per-row calls (:func:`paired_bootstrap`, :func:`paired_approximate_randomization`, each with
the same seed) are the reference, themselves tested against sacreBLEU in
``test_resampling.py``. Equality is exact (``array_equal``), for integer statistics (products in
float32) and fractional ones (TER with two references, means of human scores: float64), with
ties between identical systems and a chunk of masks that the score batches split.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.scoring import make_metric
from evalcore.stats import allpairs
from evalcore.stats.allpairs import all_pairs_tests
from evalcore.stats.resampling import (
    mean_score,
    mean_statistics,
    paired_approximate_randomization,
    paired_bootstrap,
)
from tests.evalcore.corpus import corpus, variant

SEED = 2024


def _stats(name: str, n_systems: int = 6) -> np.ndarray:
    base, refs = corpus(seed=11, n_segments=120, n_refs=2)
    outputs = [base, base]  # two identical systems: every comparison of them a tie
    outputs += [variant(seed, base, refs, 0.05 * seed) for seed in range(1, n_systems - 1)]
    metric = make_metric(name)
    return np.stack([metric.statistics(h, refs) for h in outputs])


def _one_against_all(stats: np.ndarray, score_fn, n_samples: int, n_trials: int):
    rows = []
    for i in range(stats.shape[0]):
        pb = paired_bootstrap(stats[i], stats, score_fn, n_samples=n_samples, rng=SEED)
        ar = paired_approximate_randomization(
            stats[i], stats, score_fn, n_trials=n_trials, rng=SEED
        )
        rows.append((pb.p_value, pb.wins, pb.losses, pb.observed_delta, ar.p_value))
    return [np.stack(column) for column in zip(*rows, strict=True)]


def _assert_same(stats: np.ndarray, score_fn, n_samples: int = 300, n_trials: int = 700) -> None:
    expected = _one_against_all(stats, score_fn, n_samples, n_trials)
    got = all_pairs_tests(stats, score_fn, n_samples=n_samples, n_trials=n_trials, seed=SEED)
    actual = [got.bootstrap_p, got.wins, got.losses, got.observed_delta, got.ar_p]
    names = ("bootstrap_p", "wins", "losses", "delta", "ar_p")
    for field, a, e in zip(names, actual, expected, strict=True):
        assert np.array_equal(a, e, equal_nan=True), field


@pytest.mark.parametrize("name", ["bleu", "chrf++", "ter", "wer", "lemma_overlap"])
def test_all_pairs_equal_one_system_against_all_for_metric_statistics(name):
    stats = _stats(name)
    _assert_same(stats, make_metric(name).score_from_statistics)


def test_all_pairs_equal_one_system_against_all_for_fractional_means():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(60, 20, size=(7, 90)), 3) / 7.0
    x[3] = x[2]
    _assert_same(mean_statistics(x), mean_score)


def test_all_pairs_equal_one_system_against_all_when_scores_are_batched(monkeypatch):
    # Batches of a few trials inside each chunk of masks, and chunks of 64 masks.
    monkeypatch.setattr(allpairs, "_SCORE_BYTES", 8 * 6 * 6 * 9 * 5)
    monkeypatch.setattr("evalcore.stats.resampling._CHUNK_BYTES", 8 * 120 * 64)
    stats = _stats("bleu")
    _assert_same(stats, make_metric("bleu").score_from_statistics, n_trials=300)
