"""Several optimizer runs per system: MultEval's statistics (Clark et al. 2011, seed 004).

For each system with runs 1..n on the same test set:

* **mean** — the mean over runs of the corpus score;
* **s_sel** — variation due to test-set *selection*: the bootstrap standard deviation of the corpus
  score of each run (n − 1 in the denominator, as MultEval), averaged over runs;
* **s_opt** — variation due to *optimizer* instability: the standard deviation of the corpus
  scores across runs (n − 1; 0 for a single run);
* **p** — the stratified approximate-randomisation p-value against the baseline, pooling all runs.

The stratified AR test (MultEval's ``StratifiedApproximateRandomizationTest``): the statistic is
the absolute difference of the two systems' scores on their *pooled* statistics (all runs'
segments summed). A trial keeps each segment's stratum — the 2n hypotheses of that segment, n
per system — and reassigns them: runs are permuted within the segment and, per run slot, the
two systems are swapped at random. Under the pooled statistic a permutation of run slots followed
by independent swaps is the same distribution as independent swaps per (segment, run), so the
pooled test draws those directly; the ``mean_of_runs`` statistic (mean over pseudo-runs of each
run's corpus score) depends on which hypotheses share a pseudo-run, and permutes explicitly.
p = (c + 1) / (R + 1) with c counting strictly greater differences, so identical systems get
p = 1 / (R + 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .resampling import (
    ApproximateRandomization,
    ScoreFn,
    _ar_exceed_counts,
    bootstrap_scores,
    chunk_rows,
    comparison_tolerance,
    resolve_rng,
)

Statistic = Literal["pooled", "mean_of_runs"]


def _runs(stats: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(stats, dtype=np.float64)
    if array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3:
        raise ValueError(
            f"{name} must be (n_runs, n_segments, n_stats) or (n_segments, n_stats), "
            f"got shape {array.shape}"
        )
    return array


def run_scores(stats: ArrayLike, score_fn: ScoreFn) -> np.ndarray:
    """Corpus score of each run: ``(n_runs,)`` from ``(n_runs, n_segments, n_stats)``."""
    runs = _runs(stats, "stats")
    return np.asarray(score_fn(runs.sum(axis=1)), dtype=np.float64)


def s_opt(scores: ArrayLike) -> float:
    """Standard deviation of the corpus scores across runs (n − 1); 0 for a single run."""
    values = np.asarray(scores, dtype=np.float64)
    return float(values.std(ddof=1)) if values.size > 1 else 0.0


def stratified_approximate_randomization(
    stats_a: ArrayLike,
    stats_b: ArrayLike,
    score_fn: ScoreFn,
    *,
    n_trials: int = 10000,
    statistic: Statistic = "pooled",
    rng: np.random.Generator | int | None = None,
) -> ApproximateRandomization:
    """MultEval's stratified AR test of b against a, each ``(n_runs, n_segments, n_stats)``.

    Both systems need the same number of runs (MultEval's requirement: a stratum holds n
    hypotheses of each). With one run each and the pooled statistic this is exactly
    :func:`~evalcore.stats.resampling.paired_approximate_randomization`, same draws included.
    """
    a = _runs(stats_a, "stats_a")
    b = _runs(stats_b, "stats_b")
    if a.shape != b.shape:
        raise ValueError(
            f"both systems need the same runs, segments and statistics: {a.shape} vs {b.shape}"
        )
    if n_trials < 1:
        raise ValueError("n_trials must be positive")
    generator, seed = resolve_rng(rng)
    n_runs, n_segments, n_stats = a.shape

    if statistic == "pooled":
        observed = float(score_fn(b.sum(axis=(0, 1)))) - float(score_fn(a.sum(axis=(0, 1))))
        # Data points are (segment, run) pairs, segment-major, so one run matches the paired test.
        flat_a = a.transpose(1, 0, 2).reshape(1, n_segments * n_runs, n_stats)
        flat_b = b.transpose(1, 0, 2).reshape(1, n_segments * n_runs, n_stats)
        exceed = _ar_exceed_counts(
            flat_a, flat_b, score_fn, np.array([abs(observed)]), n_trials, generator
        )
        count = int(exceed[0])
    elif statistic == "mean_of_runs":
        observed = float(np.mean(run_scores(b, score_fn)) - np.mean(run_scores(a, score_fn)))
        count = _mean_of_runs_exceed(a, b, score_fn, abs(observed), n_trials, generator)
    else:
        raise ValueError(f"unknown statistic {statistic!r}")
    return ApproximateRandomization(
        p_value=np.asarray((count + 1.0) / (n_trials + 1.0)),
        observed_delta=np.asarray(observed),
        n_trials=n_trials,
        seed=seed,
        exceed_count=np.asarray(count),
    )


def _mean_of_runs_exceed(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    score_fn: ScoreFn,
    threshold: float,
    n_trials: int,
    generator: np.random.Generator,
) -> int:
    """Trials whose |mean over pseudo-runs of b − of a| exceeds ``threshold`` (the observed one)
    by more than :func:`~evalcore.stats.resampling.comparison_tolerance`, so rounding cannot
    break a tie.

    Per trial and segment: a random permutation π of the runs and a random swap bit per run slot;
    pseudo-a's run r takes (swap ? b : a)[π(r)] at that segment, pseudo-b the other one.
    """
    n_runs, n_segments, n_stats = a.shape
    limit = threshold + float(
        comparison_tolerance(
            threshold, run_scores(a, score_fn).mean(), run_scores(b, score_fn).mean()
        )
    )
    pooled = np.stack([a, b])  # (2, runs, segments, k)
    segment_index = np.arange(n_segments)
    # Gathered arrays are (rows, segments, runs, k); keep them within the chunk budget.
    rows = max(1, chunk_rows(n_segments * n_runs * n_stats, multiple=1))
    count = 0
    done = 0
    while done < n_trials:
        size = min(rows, n_trials - done)
        done += size
        perm = np.argsort(generator.random((size, n_segments, n_runs)), axis=-1)
        swap = generator.integers(2, size=(size, n_segments, n_runs)).astype(np.intp)
        # pooled[system, run, segment] for every (trial, segment, run slot)
        from_a = pooled[swap, perm, segment_index[np.newaxis, :, np.newaxis]]
        from_b = pooled[1 - swap, perm, segment_index[np.newaxis, :, np.newaxis]]
        runs_a = from_a.sum(axis=1)  # (rows, runs, k): each pseudo-run's corpus statistics
        runs_b = from_b.sum(axis=1)
        diff = np.abs(
            np.asarray(score_fn(runs_b), dtype=np.float64).mean(axis=-1)
            - np.asarray(score_fn(runs_a), dtype=np.float64).mean(axis=-1)
        )
        count += int((diff > limit).sum())
    return count


@dataclass(frozen=True)
class SystemRuns:
    """MultEval's summary of one system: its run scores, mean, s_sel, s_opt and p."""

    name: str
    runs: tuple[float, ...]
    mean: float
    s_sel: float
    s_opt: float
    p_value: float | None
    """Stratified AR p-value against the baseline; None for the baseline itself."""
    observed_delta: float | None
    """Pooled score of this system minus the baseline's (the AR statistic, signed)."""


@dataclass(frozen=True)
class MultiRunComparison:
    """All systems of one metric against a baseline, with the settings that reproduce them."""

    systems: tuple[SystemRuns, ...]
    baseline: str
    n_bootstrap: int
    n_trials: int
    seed: int | None
    statistic: Statistic


def compare_runs(
    systems: Sequence[tuple[str, ArrayLike]],
    score_fn: ScoreFn,
    *,
    baseline: str,
    n_bootstrap: int = 1000,
    n_trials: int = 10000,
    statistic: Statistic = "pooled",
    rng: np.random.Generator | int | None = None,
    boot_std: ArrayLike | None = None,
    baseline_tests: Mapping[int, tuple[float, float]] | None = None,
) -> MultiRunComparison:
    """MultEval's evaluation of several systems, each ``(n_runs, n_segments, n_stats)``.

    The bootstrap draws one set of resamples that every run of every system shares; each AR
    comparison with the baseline starts from the same seed, as sacreBLEU's paired tests do, so a
    system's p-value does not depend on which other systems are in the table.

    A caller that has computed the same numbers already passes them instead of having them
    computed again: ``boot_std``, every run's bootstrap standard deviation from the same
    resamples (``bootstrap_ci(stacked runs, n_samples=n_bootstrap, rng=seed).std``), and
    ``baseline_tests``, ``(p, score − baseline's score)`` of every other system by index (the
    baseline's row of :func:`evalcore.stats.allpairs.all_pairs_tests` on the pooled runs, when
    every system has as many runs and the statistic is pooled).
    """
    names = [name for name, _ in systems]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
    if len(set(names)) != len(names):
        raise ValueError("system names must be unique")
    arrays = [_runs(stats, name) for name, stats in systems]
    shapes = {array.shape[1:] for array in arrays}
    if len(shapes) != 1:
        raise ValueError(f"all systems need the same segments and statistics, got {shapes}")
    generator, seed = resolve_rng(rng)
    if seed is None:
        # A Generator was passed: derive one seed from it so each comparison can restart from it.
        seed = int(generator.integers(2**32))

    # s_sel: one bootstrap over all runs of all systems at once (shared resamples).
    stacked = np.concatenate(arrays, axis=0)
    if boot_std is None:
        boot_generator = np.random.default_rng(seed)
        samples = bootstrap_scores(stacked, score_fn, n_samples=n_bootstrap, rng=boot_generator)
        boot_std = samples.std(axis=0, ddof=1) if n_bootstrap > 1 else np.zeros(stacked.shape[0])
    boot_std = np.asarray(boot_std, dtype=np.float64)

    if baseline_tests is None:
        tests = _tests_against_baseline(
            arrays, names.index(baseline), score_fn, n_trials, statistic, seed
        )
    else:
        tests = dict(baseline_tests)
    results = []
    offset = 0
    for i, (name, array) in enumerate(zip(names, arrays, strict=True)):
        n_runs = array.shape[0]
        scores = run_scores(array, score_fn)
        s_sel = float(boot_std[offset : offset + n_runs].mean())
        offset += n_runs
        p_value, delta = tests.get(i, (None, None))
        results.append(
            SystemRuns(
                name=name,
                runs=tuple(float(s) for s in scores),
                mean=float(scores.mean()),
                s_sel=s_sel,
                s_opt=s_opt(scores),
                p_value=p_value,
                observed_delta=delta,
            )
        )
    return MultiRunComparison(
        systems=tuple(results),
        baseline=baseline,
        n_bootstrap=n_bootstrap,
        n_trials=n_trials,
        seed=seed,
        statistic=statistic,
    )


def _tests_against_baseline(
    arrays: list[NDArray[np.float64]],
    base_index: int,
    score_fn: ScoreFn,
    n_trials: int,
    statistic: Statistic,
    seed: int,
) -> dict[int, tuple[float, float]]:
    """Stratified AR of every system against the baseline, each from the same seed.

    For the pooled statistic all systems go through one pass of the same masks (what separate
    calls with the same seed would draw), so twenty systems cost one set of matrix products.
    """
    base = arrays[base_index]
    others = [i for i in range(len(arrays)) if i != base_index]
    if not others:
        return {}
    same_runs = all(arrays[i].shape == base.shape for i in others)
    if statistic != "pooled" or not same_runs:
        out = {}
        for i in others:
            test = stratified_approximate_randomization(
                base, arrays[i], score_fn, n_trials=n_trials, statistic=statistic, rng=seed
            )
            out[i] = (float(test.p_value), float(test.observed_delta))
        return out
    n_runs, n_segments, n_stats = base.shape

    def flat(array: NDArray[np.float64]) -> NDArray[np.float64]:
        return array.transpose(1, 0, 2).reshape(n_segments * n_runs, n_stats)

    flat_base = flat(base)[np.newaxis]
    flat_others = np.stack([flat(arrays[i]) for i in others])
    base_score = np.asarray(score_fn(flat_base.sum(axis=1)), dtype=np.float64)
    other_scores = np.asarray(score_fn(flat_others.sum(axis=1)), dtype=np.float64)
    observed = other_scores - base_score
    exceed = _ar_exceed_counts(
        flat_base, flat_others, score_fn, np.abs(observed), n_trials, np.random.default_rng(seed)
    )
    p_values = (exceed + 1.0) / (n_trials + 1.0)
    return {i: (float(p_values[k]), float(observed[k])) for k, i in enumerate(others)}
