"""Meta-evaluation: how well a metric agrees with human judgments.

* Pearson (Koehn eq. 8.10), Spearman (Pearson on tie-averaged ranks, Kos & Bojar), Kendall τ-b and
  τ-c, each on flat score vectors;
* grouping of a (systems × items) score matrix: ``none`` (every cell is a point), ``system``
  (correlate the systems' mean scores) or ``item`` (correlate the systems within each item, then
  average over items, as mt-metrics-eval does);
* the WMT DARR Kendall-like τ over pairs of translations of one source whose human scores differ
  by more than a threshold, and system-level pairwise accuracy;
* a bootstrap confidence interval of a correlation (resampling items), the Williams test for two
  dependent correlations that share the human scores (Graham & Baldwin 2014), and a paired
  permutation test between two metrics' correlations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from .resampling import bootstrap_counts, percentile_interval, resolve_rng

Method = Literal["pearson", "spearman", "kendall", "kendall_c"]
Grouping = Literal["none", "system", "item"]
FloatArray = NDArray[np.float64]

METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall", "kendall_c")


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"x and y need the same length, got {a.size} and {b.size}")
    return a, b


def pearson_rows(x: ArrayLike, y: ArrayLike) -> FloatArray:
    """Pearson's r along the last axis (vectorised over leading axes); NaN if a row is constant."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    da = a - a.mean(axis=-1, keepdims=True)
    db = b - b.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (da * db).sum(axis=-1) / np.sqrt((da * da).sum(axis=-1) * (db * db).sum(axis=-1))
    result: FloatArray = np.clip(r, -1.0, 1.0)
    return result


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson correlation coefficient (Koehn eq. 8.10)."""
    a, b = _pair(x, y)
    return float(pearson_rows(a, b))


def average_ranks(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Ranks 1..n with ties given the mean of the ranks they span (Kos & Bojar's Spearman)."""
    ranks: FloatArray = np.asarray(
        sps.rankdata(np.asarray(x, dtype=np.float64), method="average", axis=axis),
        dtype=np.float64,
    )
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's ρ as Pearson's r on tie-averaged ranks."""
    a, b = _pair(x, y)
    return float(pearson_rows(average_ranks(a), average_ranks(b)))


@dataclass(frozen=True)
class PairCounts:
    """Concordant and discordant pairs, and pairs tied in x, in y, or in both."""

    concordant: int
    discordant: int
    ties_x: int
    ties_y: int
    ties_both: int
    n: int


def pair_counts(x: ArrayLike, y: ArrayLike, *, tie_y: float = 0.0, chunk: int = 2048) -> PairCounts:
    """Count pair types over all i < j, in chunks of rows so memory stays O(chunk · n).

    ``tie_y``: differences in y of at most this much count as ties (the metric's tie threshold ε
    of Deutsch et al. 2023; 0 = only equal values tie)."""
    if tie_y < 0:
        raise ValueError(f"the tie threshold must be at least 0, got {tie_y}")
    a, b = _pair(x, y)
    n = a.size
    conc = disc = tx = ty = txy = 0
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        sx = np.sign(a[start:stop, None] - a[None, :])
        dy = b[start:stop, None] - b[None, :]
        sy = np.sign(dy)
        sy[np.abs(dy) <= tie_y] = 0.0  # a NaN difference stays NaN: neither tie nor order
        upper = np.arange(start, stop)[:, None] < np.arange(n)[None, :]  # each pair once
        prod = (sx * sy)[upper]
        zx = (sx == 0)[upper]
        zy = (sy == 0)[upper]
        conc += int((prod > 0).sum())
        disc += int((prod < 0).sum())
        txy += int((zx & zy).sum())
        tx += int((zx & ~zy).sum())
        ty += int((zy & ~zx).sum())
    return PairCounts(conc, disc, tx, ty, txy, n)


def kendall_tau_rows(x: ArrayLike, y: ArrayLike, *, max_cells: int = 2**16) -> FloatArray:
    """Kendall's τ-b along the last axis, vectorised over leading axes: each row is what
    :func:`kendall_tau` gives for it, bit for bit (the same pair counts, the same formula).

    For short rows repeated many times (systems in every bootstrap resample); memory stays about
    ``max_cells`` pairs, in blocks of rows.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim == 0:
        raise ValueError(
            f"x and y need the same shape of at least one axis, got {a.shape} and {b.shape}"
        )
    n = a.shape[-1]
    first, second = np.triu_indices(n, k=1)
    rows_a = a.reshape(-1, n)
    rows_b = b.reshape(-1, n)
    out = np.empty(rows_a.shape[0], dtype=np.float64)
    block = max(1, max_cells // max(1, first.size))
    n0 = n * (n - 1) / 2
    for start in range(0, rows_a.shape[0], block):
        sx = np.sign(rows_a[start : start + block, first] - rows_a[start : start + block, second])
        sy = np.sign(rows_b[start : start + block, first] - rows_b[start : start + block, second])
        prod = sx * sy
        zx, zy = sx == 0, sy == 0
        s = (prod > 0).sum(axis=-1) - (prod < 0).sum(axis=-1)
        both = (zx & zy).sum(axis=-1)
        tied_x = (zx & ~zy).sum(axis=-1) + both
        tied_y = (zy & ~zx).sum(axis=-1) + both
        denom = np.sqrt((n0 - tied_x) * (n0 - tied_y))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + block] = np.where(denom > 0, s / denom, math.nan)
    result: FloatArray = out.reshape(a.shape[:-1])
    return result


#: Above this many points τ-b comes from scipy's O(n log n) count instead of comparing every
#: pair (O(n²): 0.2 s a system of 2,000 segments, seconds at 10,000 segment scores).
KENDALL_PAIRWISE_MAX = 500


def kendall_tau(x: ArrayLike, y: ArrayLike, variant: Literal["b", "c"] = "b") -> float:
    """Kendall's τ-b (ties corrected) or τ-c (Stuart's, for rectangular tables). τ-b of more
    than :data:`KENDALL_PAIRWISE_MAX` points without a NaN is scipy's (the same formula; the
    counts are exact integers either way, so only the last bits of the ratio may differ)."""
    if variant == "b":
        a, b = _pair(x, y)
        if a.size > KENDALL_PAIRWISE_MAX and not (np.isnan(a).any() or np.isnan(b).any()):
            return float(sps.kendalltau(a, b, variant="b").statistic)
    counts = pair_counts(x, y)
    s = counts.concordant - counts.discordant
    n = counts.n
    if variant == "b":
        n0 = n * (n - 1) / 2
        tied_x = counts.ties_x + counts.ties_both
        tied_y = counts.ties_y + counts.ties_both
        denom = math.sqrt((n0 - tied_x) * (n0 - tied_y))
        return s / denom if denom > 0 else math.nan
    if variant == "c":
        a, b = _pair(x, y)
        m = min(np.unique(a).size, np.unique(b).size)
        if m < 2:
            return math.nan
        return 2.0 * s / (n * n * (m - 1) / m)
    raise ValueError(f"unknown variant {variant!r}")


def correlation(x: ArrayLike, y: ArrayLike, method: Method = "pearson") -> float:
    """One of :data:`METHODS` on two flat score vectors."""
    if method == "pearson":
        return pearson(x, y)
    if method == "spearman":
        return spearman(x, y)
    if method == "kendall":
        return kendall_tau(x, y, "b")
    if method == "kendall_c":
        return kendall_tau(x, y, "c")
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def _matrices(human: ArrayLike, metric: ArrayLike) -> tuple[FloatArray, FloatArray]:
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(metric, dtype=np.float64)
    if h.ndim != 2 or h.shape != m.shape:
        raise ValueError(
            f"human and metric must be (n_systems, n_items) matrices of one shape, "
            f"got {h.shape} and {m.shape}"
        )
    return h, m


def grouped_correlation(
    human: ArrayLike,
    metric: ArrayLike,
    *,
    method: Method = "pearson",
    grouping: Grouping = "system",
) -> float:
    """Correlation of a (systems × items) matrix of human and metric scores; NaN = missing.

    ``none``: every scored cell is a point. ``system``: each system's mean over its scored items.
    ``item``: within each item across systems, averaged over the items where it is defined.
    """
    h, m = _matrices(human, metric)
    present = ~(np.isnan(h) | np.isnan(m))
    if grouping == "none":
        return correlation(h[present], m[present], method)
    if grouping == "system":
        with np.errstate(invalid="ignore"):
            hs = np.where(present, h, 0).sum(axis=1) / present.sum(axis=1)
            ms = np.where(present, m, 0).sum(axis=1) / present.sum(axis=1)
        keep = ~(np.isnan(hs) | np.isnan(ms))
        return correlation(hs[keep], ms[keep], method)
    if grouping == "item":
        values = []
        for j in range(h.shape[1]):
            rows = present[:, j]
            if rows.sum() < 2:
                continue
            value = correlation(h[rows, j], m[rows, j], method)
            if not math.isnan(value):
                values.append(value)
        return float(np.mean(values)) if values else math.nan
    raise ValueError(f"unknown grouping {grouping!r}")


@dataclass(frozen=True)
class DarrTau:
    """WMT DARR Kendall-like τ = (concordant − discordant) / (concordant + discordant)."""

    tau: float
    concordant: int
    discordant: int
    pairs: int


def darr_kendall(
    human: ArrayLike,
    metric: ArrayLike,
    groups: ArrayLike,
    *,
    threshold: float = 25.0,
    inclusive: bool = False,
) -> DarrTau:
    """Kendall-like τ over DA relative-ranking pairs (WMT 2017–2019; Mathur et al. 2019).

    Pairs are two translations of the same source (same ``groups`` label) whose human scores
    differ by more than ``threshold`` (25 points on the 0–100 DA scale), as the findings papers
    word it; ``inclusive`` also keeps a difference of exactly ``threshold``, as mt-metrics-eval's
    ``KendallLike`` does (``>=``). A pair is concordant when the metric orders it as the humans
    do; a metric tie counts as discordant, as in WMT.
    """
    h, m = _pair(human, metric)
    g = np.asarray(groups).ravel()
    if g.shape != h.shape:
        raise ValueError("groups needs one label per score")
    conc = disc = 0
    order = np.argsort(g, kind="stable")
    labels, starts = np.unique(g[order], return_index=True)
    bounds = [*starts.tolist(), len(order)]
    for k in range(len(labels)):
        idx = order[bounds[k] : bounds[k + 1]]
        if idx.size < 2:
            continue
        i, j = np.triu_indices(idx.size, k=1)
        dh = h[idx[i]] - h[idx[j]]
        dm = m[idx[i]] - m[idx[j]]
        keep = np.abs(dh) >= threshold if inclusive else np.abs(dh) > threshold
        agree = np.sign(dh[keep]) == np.sign(dm[keep])
        conc += int(agree.sum())
        disc += int((~agree).sum())
    pairs = conc + disc
    tau = (conc - disc) / pairs if pairs else math.nan
    return DarrTau(tau=tau, concordant=conc, discordant=disc, pairs=pairs)


def pairwise_accuracy(human: ArrayLike, metric: ArrayLike) -> float:
    """Share of system pairs that the metric orders as the humans do (Kocmi et al. 2021):
    sign(Δ metric) = sign(Δ human) over all pairs i < j."""
    h, m = _pair(human, metric)
    if h.size < 2:
        return math.nan
    i, j = np.triu_indices(h.size, k=1)
    return float(np.mean(np.sign(h[i] - h[j]) == np.sign(m[i] - m[j])))


# --------------------------------------------------------------------------------------------
# Resampling


def _rowwise(method: Method) -> Callable[[FloatArray, FloatArray], FloatArray]:
    """A correlation that works on the last axis of (samples × points) arrays."""
    if method == "pearson":
        return pearson_rows
    if method == "spearman":
        return lambda a, b: pearson_rows(average_ranks(a), average_ranks(b))
    if method in ("kendall", "kendall_c"):
        variant: Literal["b", "c"] = "b" if method == "kendall" else "c"

        def rows(a: FloatArray, b: FloatArray) -> FloatArray:
            return np.array([kendall_tau(x, y, variant) for x, y in zip(a, b, strict=True)])

        return rows
    raise ValueError(f"unknown method {method!r}")


@dataclass(frozen=True)
class CorrelationCI:
    """A correlation with its percentile bootstrap interval over resampled items."""

    value: float
    low: float
    high: float
    n_samples: int
    confidence: float
    seed: int | None


def correlation_bootstrap_ci(
    human: ArrayLike,
    metric: ArrayLike,
    *,
    method: Method = "pearson",
    grouping: Literal["none", "system"] = "system",
    n_samples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> CorrelationCI:
    """Bootstrap CI of a correlation, resampling items (test-set segments) with replacement.

    ``human`` and ``metric`` are (systems × items) matrices (NaN = missing). With ``system``
    grouping every resample recomputes each system's mean over the drawn items (the WMT
    system-level interval); with ``none`` the drawn items' cells are the points.
    """
    h, m = _matrices(human, metric)
    generator, seed = resolve_rng(rng)
    value = grouped_correlation(h, m, method=method, grouping=grouping)
    n_items = h.shape[1]
    corr = _rowwise(method)
    present = ~(np.isnan(h) | np.isnan(m))
    samples: list[FloatArray] = []
    if grouping == "system":
        hz = np.where(present, h, 0).T  # (items, systems)
        mz = np.where(present, m, 0).T
        nz = present.astype(np.float64).T
        for counts in bootstrap_counts(generator, n_samples, n_items):
            with np.errstate(invalid="ignore", divide="ignore"):
                n_drawn = counts @ nz
                hs = (counts @ hz) / n_drawn
                ms = (counts @ mz) / n_drawn
            samples.append(corr(hs, ms))
    elif grouping == "none":
        if not present.all():
            raise ValueError("grouping 'none' bootstrap needs a complete matrix")
        for start in range(0, n_samples, 256):
            rows = min(256, n_samples - start)
            idx = generator.choice(n_items, size=(rows, n_items), replace=True)
            hs = h[:, idx].transpose(1, 0, 2).reshape(rows, -1)
            ms = m[:, idx].transpose(1, 0, 2).reshape(rows, -1)
            samples.append(corr(hs, ms))
    else:
        raise ValueError(f"unknown grouping {grouping!r}")
    values = np.concatenate(samples)
    low, high = percentile_interval(values[~np.isnan(values)], confidence)
    return CorrelationCI(
        value=value,
        low=float(low),
        high=float(high),
        n_samples=n_samples,
        confidence=confidence,
        seed=seed,
    )


@dataclass(frozen=True)
class WilliamsTest:
    """Williams test that r(h, m1) > r(h, m2) given r(m1, m2) (one-sided, df = n − 3)."""

    t: float
    p_value: float
    df: int


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsTest:
    """Williams (1959) test for two dependent correlations sharing variable 1, as Graham &
    Baldwin (2014) apply it to metrics: r12 = r(human, metric A), r13 = r(human, metric B),
    r23 = r(metric A, metric B), n items. One-sided p for r12 > r13.

    t = (r12 − r13) · √((n − 1)(1 + r23)) / √(2K(n − 1)/(n − 3) + (r12 + r13)²/4 · (1 − r23)³),
    K = 1 − r12² − r13² − r23² + 2 r12 r13 r23.

    Two identical metrics (r23 = 1) leave the test undefined: K = −(r12 − r13)² may round
    below 0 there, and t and p are NaN then rather than an error.
    """
    if n < 4:
        raise ValueError("the Williams test needs n >= 4")
    k = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    variance = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if not variance > 0:  # also NaN (a constant metric)
        return WilliamsTest(t=math.nan, p_value=math.nan, df=n - 3)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(variance)
    df = n - 3
    return WilliamsTest(t=t, p_value=float(sps.t.sf(t, df)), df=df)


def williams_test_scores(
    human: ArrayLike, metric_a: ArrayLike, metric_b: ArrayLike, method: Method = "pearson"
) -> WilliamsTest:
    """Williams test from the scores themselves: is metric a's correlation higher than b's?"""
    h, a = _pair(human, metric_a)
    _, b = _pair(human, metric_b)
    return williams_test(
        correlation(h, a, method), correlation(h, b, method), correlation(a, b, method), h.size
    )


@dataclass(frozen=True)
class CorrelationPermutation:
    """Paired permutation test of r(h, a) − r(h, b), p = (c + 1) / (R + 1)."""

    delta: float
    p_value: float
    n_trials: int
    seed: int | None


def _swapped_pearson(
    h: FloatArray, za: FloatArray, zb: FloatArray
) -> Callable[[NDArray[np.bool_]], FloatArray]:
    """r(h, a') − r(h, b') for rows of swaps (a' takes b's value where a row is True, b' a's),
    from three sums per row that a swap changes by a matrix product: Σa', Σa'² and Σh·a' (and
    b's, their complements). Linear in the points, where forming every a' and b' is not."""
    n = h.size
    hc = h - h.mean()
    hh = float(hc @ hc)
    d = zb - za
    change = np.stack([d, zb * zb - za * za, hc * d], axis=1)
    base_a = np.array([za.sum(), za @ za, hc @ za])
    base_b = np.array([zb.sum(), zb @ zb, hc @ zb])

    def r(sums: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            out: FloatArray = sums[:, 2] / np.sqrt(hh * (sums[:, 1] - sums[:, 0] ** 2 / n))
        return out

    def diff(swap: NDArray[np.bool_]) -> FloatArray:
        parts = []
        for start in range(0, swap.shape[0], 128):
            moved = swap[start : start + 128].astype(np.float64) @ change
            parts.append(r(base_a + moved) - r(base_b - moved))
        return np.concatenate(parts)

    return diff


def correlation_permutation_test(
    human: ArrayLike,
    metric_a: ArrayLike,
    metric_b: ArrayLike,
    *,
    method: Method = "pearson",
    n_trials: int = 1000,
    alternative: Literal["two-sided", "greater"] = "two-sided",
    rng: np.random.Generator | int | None = None,
) -> CorrelationPermutation:
    """Do two metrics correlate differently with the humans? (Deutsch et al. 2021, PERM-BOTH.)

    ``two-sided`` counts trials with |Δ| > |observed Δ|; ``greater`` (does a correlate better
    than b?) counts trials with Δ ≥ observed Δ, as mt-metrics-eval's ``PermutationSigDiff``.

    Under the null hypothesis the two metrics are exchangeable on every point, so each trial swaps
    a's and b's score at a random half of the points. Scores are z-normalised per metric first so
    that swapping mixes like with like (every method here is invariant to that change); negate an
    error rate before passing it, so both metrics point the same way.
    """
    h, a = _pair(human, metric_a)
    _, b = _pair(human, metric_b)
    generator, seed = resolve_rng(rng)

    def z(v: FloatArray) -> FloatArray:
        sd = float(v.std())
        scaled: FloatArray = (v - v.mean()) / (sd if sd > 0 else 1.0)
        return scaled

    za, zb = z(a), z(b)
    corr = _rowwise(method)
    observed = correlation(h, za, method) - correlation(h, zb, method)
    swapped_pearson = _swapped_pearson(h, za, zb) if method == "pearson" else None
    # The sums' rounding differs from the direct r's: a trial equal to the data (no swap, or
    # swaps of equal scores) must still count as equal to the observed Δ, so Δs within 1e-12
    # of it are taken as equal.
    reference, slack = observed, 0.0
    if swapped_pearson is not None:
        reference = float(swapped_pearson(np.zeros((1, h.size), dtype=bool))[0])
        slack = 1e-12
    exceed = 0
    for start in range(0, n_trials, 512):
        rows = min(512, n_trials - start)
        swap = generator.integers(2, size=(rows, h.size), dtype=bool)
        if swapped_pearson is not None:
            diff = swapped_pearson(swap)
        else:
            pa = np.where(swap, zb, za)
            pb = np.where(swap, za, zb)
            hh = np.broadcast_to(h, pa.shape)
            diff = corr(hh, pa) - corr(hh, pb)
        if alternative == "greater":
            exceed += int((diff >= reference - slack).sum())
        else:
            exceed += int((np.abs(diff) > abs(reference) + slack).sum())
    return CorrelationPermutation(
        delta=observed,
        p_value=(exceed + 1.0) / (n_trials + 1.0),
        n_trials=n_trials,
        seed=seed,
    )
