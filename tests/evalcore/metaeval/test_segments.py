"""Segment-level correlations with mt-metrics-eval's groupings, against the numbers of its own
test file and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.metaeval.segments import segment_correlation, segment_matrices
from evalcore.stats.ties import tie_calibrated_accuracy

# mt_metrics_eval/stats_test.py CorrelationTest: Correlation(2, [1..6], [2, 1, 4, 3, 3, 7]),
# two systems of three segments each.
HUMAN = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
METRIC = np.array([[2.0, 1.0, 4.0], [3.0, 3.0, 7.0]])


@pytest.mark.parametrize(
    ("method", "average_by", "expected"),
    [
        ("pearson", "none", 0.776),
        ("pearson", "sys", 0.760),
        ("pearson", "item", 1.00),
        ("kendall", "none", 0.552),
        ("kendall", "sys", 0.575),
        ("kendall", "item", 1.00),
    ],
)
def test_groupings_reproduce_mt_metrics_eval_test_numbers(method, average_by, expected):
    value = segment_correlation(HUMAN, METRIC, method=method, average_by=average_by)
    assert value == pytest.approx(expected, abs=5e-4)


def test_by_system_is_the_mean_of_scipys_per_system_correlations():
    rng = np.random.default_rng(1)
    human = rng.normal(size=(4, 30))
    metric = human + rng.normal(size=(4, 30))
    human[2, 5] = np.nan  # a missing human score leaves its cell out
    per_system = [
        sps.spearmanr(h[~np.isnan(h)], m[~np.isnan(h)]).statistic
        for h, m in zip(human, metric, strict=True)
    ]
    value = segment_correlation(human, metric, method="spearman", average_by="sys")
    assert value == pytest.approx(np.mean(per_system), abs=1e-12)


def test_acc_eq_by_item_calibrates_one_threshold_over_all_items():
    result = segment_correlation(HUMAN, METRIC, method="acc_eq", average_by="item")
    assert result == pytest.approx(tie_calibrated_accuracy(HUMAN.T, METRIC.T).accuracy)


def test_matrices_refuse_a_missing_metric_score_where_the_humans_scored():
    human = {"A": [1.0, math.nan], "B": [2.0, 3.0]}
    h, m = segment_matrices(human, {"A": [1.0, math.nan], "B": [1.0, 2.0]}, ["A", "B"])
    assert h.shape == m.shape == (2, 2)
    gap = {"A": [1.0, 0.0], "B": [1.0, math.nan]}
    with pytest.raises(ValueError, match="no score for system 'B', segment 2"):
        segment_matrices(human, gap, ["A", "B"], metric_name="x")
    with pytest.raises(ValueError, match="has no segment scores for system 'B'"):
        segment_matrices(human, {"A": [1.0, 0.0]}, ["A", "B"])
