"""Meta-evaluation of metrics from score files, as mt-metrics-eval and the WMT metrics task do it.

Django-free: plain mappings of system names to scores in, small frozen result objects out.

Modules:
    scorefiles  readers of mt-metrics-eval's ``NAME.sys.score`` / ``NAME.seg.score`` files and of
                WMT's published DA system scores, and matching of system names
    systems     the system-level table: correlations, pairwise and tie-calibrated accuracy,
                WMT20's outlier rule, Williams and permutation tests, clusters of metrics
    segments    segment-level correlations: no grouping, by item, by system
"""

from __future__ import annotations
