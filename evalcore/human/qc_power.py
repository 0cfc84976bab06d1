"""How well the bad-reference test tells a careful worker from a random clicker, for a given
number of bad-reference pairs, test and threshold.

A worker's QC (:func:`~evalcore.human.qc.bad_reference_test`) runs a one-sided test on their n
(original, bad reference) pairs. Two worker models, on a 0–100 scale:

- **careful worker** (:data:`CAREFUL`): scores an original x ~ N(60, 20²) (items differ) and its
  bad reference x − 20 + ε, ε ~ N(0, 20²): the damaged copy is noticed, 20 points lower on
  average, with as much noise again — a modest effect (standardised difference 1), weaker than
  the synthetic campaigns' diligent annotators (30 points, noise 15 per judgment);
- **random clicker** (:data:`RANDOM`): every score independently uniform on [0, 100].

Both are continuous (no ties), and the three tests are unchanged by an increasing linear map
of a worker's scores, so the figures hold in z space and on any slider scale alike.

A careful worker's chance to pass the paired t is in closed form: their differences
d = x − bad ~ N(20, 20²), so t has the noncentral t distribution with n − 1 degrees of freedom
and noncentrality √n · 20/20, and the power is P(T ≥ t₀.₉₅) (``scipy.stats.nct``). Every other
figure is simulated with a seeded :class:`numpy.random.Generator`: ``simulations`` workers of
the model, each tested with the same scipy call :func:`bad_reference_test` makes (vectorised
over workers). The Monte-Carlo standard error of a share p is √(p(1 − p)/N), under 0.008 for
the default N = 4,000. With several criteria each is tested on its own
(independent answers assumed): a careful worker passes when every criterion passes, a random
clicker fails when some criterion fails. Fewer than two pairs cannot be tested: nobody passes
or fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from evalcore.human.judgments import BoolArray, FloatArray
from evalcore.human.qc import DEFAULT_THRESHOLD, QCTest

DEFAULT_SIMULATIONS = 4000
DEFAULT_SEED = 20240607
#: The power below which a setup is flagged (the usual planning target, Cohen 1988).
LOW_POWER = 0.8
#: What a QC setup should reach: a careful worker passes and a random clicker fails this often.
TARGET = 0.9
#: The most pairs :func:`pairs_for_target` looks at.
MAX_PAIRS = 200


@dataclass(frozen=True)
class CarefulWorker:
    """Originals ~ N(mean, spread²); a bad reference ``degradation`` lower, ± N(0, noise²)."""

    mean: float = 60.0
    spread: float = 20.0
    degradation: float = 20.0
    noise: float = 20.0

    def pairs(
        self, shape: tuple[int, int], rng: np.random.Generator
    ) -> tuple[FloatArray, FloatArray]:
        original = rng.normal(self.mean, self.spread, shape)
        return original, original - self.degradation + rng.normal(0.0, self.noise, shape)


@dataclass(frozen=True)
class RandomClicker:
    """Every score independently uniform on [low, high]."""

    low: float = 0.0
    high: float = 100.0

    def pairs(
        self, shape: tuple[int, int], rng: np.random.Generator
    ) -> tuple[FloatArray, FloatArray]:
        return rng.uniform(self.low, self.high, shape), rng.uniform(self.low, self.high, shape)


CAREFUL = CarefulWorker()
RANDOM = RandomClicker()


def paired_t_power(
    n_pairs: int, *, threshold: float = DEFAULT_THRESHOLD, model: CarefulWorker = CAREFUL
) -> float:
    """The chance that a ``model`` worker passes the one-sided paired t on ``n_pairs`` pairs
    (n ≥ 2): P(T ≥ t_{1−threshold, n−1}) for T noncentral t with noncentrality
    √n · degradation / noise."""
    df = n_pairs - 1
    noncentrality = np.sqrt(n_pairs) * model.degradation / model.noise
    return float(stats.nct.sf(stats.t.isf(threshold, df), df, noncentrality))


def workers_pass(
    original: FloatArray, copy: FloatArray, *, test: QCTest, threshold: float
) -> BoolArray:
    """Whether each worker (a row of ``original`` and ``copy``, one column per pair) passes
    the one-sided bad-reference test: the scipy call of :func:`bad_reference_test`, on all
    workers at once. Fewer than two pairs: no worker passes."""
    if original.shape[1] < 2:
        return np.zeros(original.shape[0], dtype=bool)
    if test == "paired_t":
        p = stats.ttest_rel(original, copy, axis=1, alternative="greater").pvalue
    elif test == "wilcoxon":
        p = stats.wilcoxon(original, copy, axis=1, alternative="greater").pvalue
    elif test == "mannwhitney":
        p = stats.mannwhitneyu(original, copy, axis=1, alternative="greater").pvalue
    else:
        raise ValueError(f"unknown QC test {test!r}; use 'paired_t', 'wilcoxon' or 'mannwhitney'")
    return np.asarray(p <= threshold)


@dataclass(frozen=True)
class QCPower:
    """The chance that a careful worker passes and a random clicker fails the test on
    ``n_pairs`` bad-reference pairs per criterion (see the module docstring for the models)."""

    test: QCTest
    threshold: float
    n_pairs: int
    criteria: int
    careful_pass: float
    random_fail: float
    simulations: int
    seed: int

    @property
    def testable(self) -> bool:
        return self.n_pairs >= 2

    @property
    def low(self) -> bool:
        """Whether either figure is below :data:`LOW_POWER`."""
        return min(self.careful_pass, self.random_fail) < LOW_POWER

    @property
    def meets_target(self) -> bool:
        return min(self.careful_pass, self.random_fail) >= TARGET


def qc_power(
    n_pairs: int,
    *,
    test: QCTest = "paired_t",
    threshold: float = DEFAULT_THRESHOLD,
    criteria: int = 1,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> QCPower:
    """The QC figures for ``n_pairs`` bad-reference pairs per worker and criterion (cached:
    the same arguments give the same figures)."""
    return _qc_power(n_pairs, test, float(threshold), criteria, simulations, seed)


@lru_cache(maxsize=1024)
def _qc_power(
    n_pairs: int, test: QCTest, threshold: float, criteria: int, simulations: int, seed: int
) -> QCPower:
    rng = np.random.default_rng(seed)
    shape = (simulations, max(n_pairs, 0))
    if test == "paired_t" and n_pairs >= 2:
        careful = paired_t_power(n_pairs, threshold=threshold)
    else:
        careful = workers_pass(*CAREFUL.pairs(shape, rng), test=test, threshold=threshold).mean()
    random_pass = workers_pass(*RANDOM.pairs(shape, rng), test=test, threshold=threshold).mean()
    testable = n_pairs >= 2
    return QCPower(
        test=test,
        threshold=threshold,
        n_pairs=n_pairs,
        criteria=criteria,
        careful_pass=float(careful**criteria),
        # A random clicker fails when some criterion's test ran and did not pass.
        random_fail=float(1.0 - random_pass**criteria) if testable else 0.0,
        simulations=simulations,
        seed=seed,
    )


def pairs_for_target(
    *,
    test: QCTest = "paired_t",
    threshold: float = DEFAULT_THRESHOLD,
    criteria: int = 1,
    target: float = TARGET,
) -> int | None:
    """The fewest pairs per worker with which both figures reach ``target`` (None: not within
    :data:`MAX_PAIRS`). A bisection: both figures rise with the pairs for these models (bar
    the rank tests' small discrete steps, which it may step over by a pair)."""

    def enough(n: int) -> bool:
        power = qc_power(n, test=test, threshold=threshold, criteria=criteria)
        return min(power.careful_pass, power.random_fail) >= target

    if not enough(MAX_PAIRS):
        return None
    low, high = 1, MAX_PAIRS  # enough(low) is false (one pair is never tested), enough(high)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high
