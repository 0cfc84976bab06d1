"""WMT20's outlier rule for system-level meta-evaluation (Mathur, Baldwin & Cohn 2020,
"Tangled up in BLEU", §4.2; applied in the WMT20 metrics task).

A few very bad (or very good) systems inflate a metric's Pearson correlation, so WMT20 reports
correlations with and without them. Outliers are found on the *human* system scores with a robust
z-score: the median absolute deviation, scaled to estimate the standard deviation of normal data,
replaces the standard deviation, which the outliers themselves would inflate (Leys et al. 2013).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

# 1 / Φ⁻¹(3/4) = 1.4826…: makes the MAD a consistent estimate of σ for normal data. The paper
# prints it rounded to 1.483; the cut-off 2.5 is the paper's (Leys et al.'s "moderately
# conservative" choice).
MAD_SCALE = 1.483
OUTLIER_CUTOFF = 2.5


@dataclass(frozen=True)
class Outliers:
    """Robust z of each score, (x − median) / MAD, and which exceed the cut-off (absolute)."""

    median: float
    mad: float
    z: NDArray[np.float64]
    outlier: NDArray[np.bool_]
    cutoff: float
    scale: float


def mad_outliers(
    scores: ArrayLike, *, cutoff: float = OUTLIER_CUTOFF, scale: float = MAD_SCALE
) -> Outliers:
    """Outliers among human system scores by WMT20's rule: MAD = scale · median|x − median(x)|,
    z = (x − median(x)) / MAD, an outlier when |z| > cutoff.

    Refuses scores whose MAD is 0 (more than half of the systems share one score): every other
    system would be an infinitely far outlier, which says nothing about the data.
    """
    x = np.asarray(scores, dtype=np.float64).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError("the outlier rule needs at least one score, and only finite scores")
    median = float(np.median(x))
    mad = scale * float(np.median(np.abs(x - median)))
    if mad == 0:
        raise ValueError(
            "more than half of the systems have the same human score, so their median absolute "
            "deviation is 0 and WMT20's outlier rule is undefined; evaluate without it"
        )
    z = (x - median) / mad
    return Outliers(
        median=median,
        mad=mad,
        z=z,
        outlier=np.abs(z) > cutoff,
        cutoff=cutoff,
        scale=scale,
    )
