"""Inter- and intra-annotator agreement (Koehn §8.1.2; DESIGN §5).

- Krippendorff's α (interval and ordinal) for 1–5 and 0–100 scores;
- Cohen's κ on the pairwise comparisons of rankings, with P(E) from the observed outcome rates
  (WMT 2011–2016).

Both come in an inter-annotator form (the same output judged by different annotators) and an
intra-annotator form (the same output judged twice by one annotator: repeats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalcore.human.judgments import FloatArray, IntArray, ItemType, Judgments, group_mean_sd
from evalcore.human.rankings import Comparisons

Level = Literal["interval", "ordinal"]
Chance = Literal["tie_rate", "empirical"]


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's α with its counts.

    Attributes:
        level: "interval" or "ordinal".
        alpha: 1 − D_o / D_e; NaN when there are no pairable values or no variation at all.
        observed_disagreement, expected_disagreement: D_o and D_e.
        n_units: units with at least two values (pairable units).
        n_values: values in pairable units (Krippendorff's n).
    """

    level: Level
    alpha: float
    observed_disagreement: float
    expected_disagreement: float
    n_units: int
    n_values: int


def krippendorff_alpha(
    unit: npt.ArrayLike, value: npt.ArrayLike, *, level: Level = "interval"
) -> Alpha:
    """Krippendorff's α from (unit, value) pairs; any number of values per unit, missing allowed.

    With n pairable values (those in units holding m_u ≥ 2 values) and δ the level's distance,

        D_o = (1/n) Σ_u 1/(m_u − 1) Σ_{c≠k in u} δ²(v_c, v_k),
        D_e = 1/(n(n − 1)) Σ_{c≠k, all pairable} δ²(v_c, v_k),      α = 1 − D_o / D_e

    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", §A–E). For the interval
    distance δ² = (v_c − v_k)² the double sums collapse to centred sums of squares,
    Σ_{c≠k in u} (v_c − v_k)² = 2 m_u Σ_{c∈u} (v_c − v̄_u)², so everything is one pass of
    ``bincount``. The ordinal distance δ²(c, k) = (Σ_{g=c}^{k} n_g − (n_c + n_k)/2)² is the
    squared difference of mid-ranks r_c = Σ_{g<c} n_g + n_c/2 (n_g: frequency of value g among
    pairable values), so ordinal α is interval α on mid-ranks.
    """
    units = np.asarray(unit)
    values = np.asarray(value, dtype=np.float64)
    if units.shape != values.shape or values.ndim != 1:
        raise ValueError("unit and value must be one-dimensional arrays of the same length")
    if level not in ("interval", "ordinal"):
        raise ValueError(f"unknown level {level!r}; use 'interval' or 'ordinal'")
    known = np.isfinite(values)
    units, values = units[known], values[known]
    _, code = np.unique(units, return_inverse=True)
    code = code.astype(np.int64)
    n_codes = int(code.max()) + 1 if code.size else 0
    size = np.bincount(code, minlength=n_codes)
    pairable = size[code] >= 2
    code, values = code[pairable], values[pairable]
    n = int(values.shape[0])
    n_units = int((size >= 2).sum())
    if n < 2:
        return Alpha(level, float("nan"), float("nan"), float("nan"), n_units, n)
    if level == "ordinal":
        values = _mid_ranks(values)
    _, unit_sd, unit_size = group_mean_sd(code, values, n_codes)
    present = unit_size >= 2
    # 2 m_u Σ (v − v̄_u)² / (m_u − 1) = 2 m_u s_u² with s_u² the unit's sample variance.
    within = float((2.0 * unit_size[present] * unit_sd[present] ** 2).sum())
    observed = within / n
    total_var = float(values.var(ddof=1))
    expected = 2.0 * total_var
    alpha = 1.0 - observed / expected if expected > 0 else float("nan")
    return Alpha(level, alpha, observed, expected, n_units, n)


def _mid_ranks(values: FloatArray) -> FloatArray:
    """Each value's mid-rank among all values: Σ_{g<v} n_g + n_v / 2."""
    distinct, code, frequency = np.unique(values, return_inverse=True, return_counts=True)
    below = np.cumsum(frequency) - frequency
    mid = below + frequency / 2.0
    del distinct
    return np.asarray(mid[code], dtype=np.float64)


def inter_annotator_alpha(
    judgments: Judgments, *, level: Level = "interval", values: FloatArray | None = None
) -> Alpha:
    """Krippendorff's α between annotators on REAL rows; a unit is one (segment, system) output.

    Units judged by fewer than two annotators do not count. If an annotator judged the same
    output more than once in REAL rows, only the first judgment counts, so every pair of values
    comes from two different annotators. ``values`` defaults to the raw scores (pass
    ``Normalised.z`` for α on z-scores). A merged answer counts once, under the system shown
    (its credited rows would repeat the same pair of values in every credited system's unit).
    """
    scores = judgments.score if values is None else values
    rows = np.flatnonzero(judgments.rows_of(ItemType.REAL) & judgments.answers)
    unit = judgments.system[rows] * judgments.n_segments + judgments.segment[rows]
    key = unit * judgments.n_annotators + judgments.annotator[rows]
    _, first = np.unique(key, return_index=True)
    rows = rows[first]
    unit = unit[first]
    return krippendorff_alpha(unit, scores[rows], level=level)


def intra_annotator_alpha(
    judgments: Judgments, *, level: Level = "interval", values: FloatArray | None = None
) -> Alpha:
    """Krippendorff's α between the first and the repeated judgment of the same output.

    Every REPEAT row with an ``original`` forms a unit of two values (test–retest reliability),
    pooled over annotators.
    """
    scores = judgments.score if values is None else values
    repeat = np.flatnonzero((judgments.item_type == ItemType.REPEAT) & (judgments.original >= 0))
    unit = np.concatenate([repeat, repeat])
    value = np.concatenate([scores[judgments.original[repeat]], scores[repeat]])
    return krippendorff_alpha(unit, value, level=level)


@dataclass(frozen=True)
class Kappa:
    """Cohen's κ on pairwise comparisons, with the counts behind it.

    Attributes:
        kind: "inter" (pairs of judgments by different annotators) or "intra" (by the same one).
        kappa: (P(A) − P(E)) / (1 − P(E)); NaN without any pair of judgments.
        p_agreement: P(A), the share of judgment pairs with the same outcome.
        p_chance: P(E) = P(A>B)² + P(A<B)² + P(A=B)².
        p_better, p_worse, p_tie: the outcome rates used in P(E).
        chance: "tie_rate" or "empirical" (see :func:`ranking_kappa`).
        n_pairs: pairs of judgments of the same comparison; n_agreements: those that agree.
        n_comparisons: comparisons the outcome rates were estimated from.
    """

    kind: Literal["inter", "intra"]
    kappa: float
    p_agreement: float
    p_chance: float
    p_better: float
    p_worse: float
    p_tie: float
    chance: Chance
    n_pairs: int
    n_agreements: int
    n_comparisons: int


def ranking_kappa(
    comparisons: Comparisons,
    *,
    kind: Literal["inter", "intra"] = "inter",
    chance: Chance = "tie_rate",
) -> Kappa:
    """Cohen's κ on pairwise comparisons from rankings (WMT; Callison-Burch et al., Bojar et al.).

    κ = (P(A) − P(E)) / (1 − P(E)), P(E) = P(A>B)² + P(A<B)² + P(A=B)².

    A comparison unit is (segment, system a, system b). "inter": P(A) over all pairs of REAL
    judgments of a unit by two different annotators. "intra": over the comparisons on REPEAT
    screens, each against the same annotator's comparison of the same pair on the original
    screen (``Comparisons.original_outcome``). The outcome rates come from all REAL
    comparisons; "tie_rate" (default) uses only the observed tie rate, P(A>B) = P(A<B) =
    (1 − P(A=B)) / 2, since which system is "A" is arbitrary; "empirical" estimates P(A>B) and
    P(A<B) separately with A the system of the lower code.
    """
    if kind not in ("inter", "intra"):
        raise ValueError(f"unknown kappa kind {kind!r}; use 'inter' or 'intra'")
    if chance not in ("tie_rate", "empirical"):
        raise ValueError(f"unknown chance model {chance!r}; use 'tie_rate' or 'empirical'")
    real = comparisons.item_type == ItemType.REAL
    if kind == "inter":
        n_pairs, n_agreements = _inter_annotator_pairs(comparisons.select(real))
    else:
        repeats = (comparisons.item_type == ItemType.REPEAT) & comparisons.has_original
        n_pairs = int(repeats.sum())
        n_agreements = int(
            (comparisons.outcome[repeats] == comparisons.original_outcome[repeats]).sum()
        )

    outcomes = comparisons.outcome[real]
    n_comparisons = int(outcomes.shape[0])
    if n_comparisons:
        p_tie = float((outcomes == 0).mean())
        if chance == "tie_rate":
            p_better = p_worse = (1.0 - p_tie) / 2.0
        else:
            p_better = float((outcomes > 0).mean())
            p_worse = float((outcomes < 0).mean())
    else:
        p_tie = p_better = p_worse = float("nan")
    p_chance = p_better**2 + p_worse**2 + p_tie**2
    p_agreement = n_agreements / n_pairs if n_pairs else float("nan")
    kappa = (p_agreement - p_chance) / (1.0 - p_chance) if p_chance < 1 else float("nan")
    return Kappa(
        kind=kind,
        kappa=float(kappa),
        p_agreement=float(p_agreement),
        p_chance=float(p_chance),
        p_better=p_better,
        p_worse=p_worse,
        p_tie=p_tie,
        chance=chance,
        n_pairs=n_pairs,
        n_agreements=n_agreements,
        n_comparisons=n_comparisons,
    )


def _inter_annotator_pairs(comparisons: Comparisons) -> tuple[int, int]:
    """(pairs of judgments of one unit by different annotators, pairs that agree).

    Counted from group sizes: a group of m judgments holds m(m − 1)/2 pairs. Pairs by different
    annotators are all pairs of the unit minus the pairs within (unit, annotator) groups, so an
    annotator who saw the same comparison twice is never compared with themself.
    """
    y = comparisons.n_systems
    unit = _factorise((comparisons.segment * y + comparisons.system_a) * y + comparisons.system_b)
    annotator = _factorise(comparisons.annotator)
    n_annotators = int(annotator.max()) + 1 if annotator.size else 1
    outcome = comparisons.outcome.astype(np.int64) + 1  # 0, 1, 2

    def pairs(keys: IntArray) -> int:
        _, counts = np.unique(keys, return_counts=True)
        return int((counts * (counts - 1) // 2).sum())

    unit_annotator = unit * n_annotators + annotator
    same_all = pairs(unit_annotator)
    same_agree = pairs(unit_annotator * 3 + outcome)
    return pairs(unit) - same_all, pairs(unit * 3 + outcome) - same_agree


def _factorise(keys: IntArray) -> IntArray:
    _, code = np.unique(keys, return_inverse=True)
    return code.astype(np.int64)
