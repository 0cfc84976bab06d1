"""Deduplicated, parallel statistics extraction gives exactly the per-output statistics."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.scoring import METRIC_NAMES, MetricOptions, make_metric
from evalcore.scoring.extraction import distinct_pairs, extract_all, extract_statistics
from tests.evalcore.corpus import corpus, variant


@pytest.fixture(scope="module")
def outputs():
    base, refs = corpus(seed=4, n_segments=80, n_refs=2)
    runs = [base, variant(1, base, refs, 0.3), variant(2, base, refs, 0.3), base]
    return runs, refs


@pytest.mark.parametrize(
    "name", ["bleu", "chrf++", "ter", "length", "wer", "per", "fmeasure", "lemma_overlap"]
)
@pytest.mark.parametrize("workers", [1, 2])
def test_extraction_equals_scoring_each_output_on_its_own(name, workers, outputs):
    runs, refs = outputs
    metric = make_metric(name)
    expected = np.stack([metric.statistics(run, refs) for run in runs])
    assert np.array_equal(extract_statistics(metric, runs, refs, workers=workers), expected)


@pytest.mark.parametrize("lowercase", [False, True])
def test_metrics_extracted_together_get_exactly_their_own_statistics(lowercase, outputs):
    runs, refs = outputs
    options = MetricOptions(lowercase=lowercase, chrf_lowercase=lowercase, smooth_method="floor")
    metrics = {name: make_metric(name, options) for name in METRIC_NAMES if name != "bertr"}
    # A second BLEU whose smoothing differs shares the statistics (smoothing acts on sums).
    metrics["bleu-add-k"] = make_metric("bleu", MetricOptions(smooth_method="add-k"))
    got = extract_all(metrics, runs, refs)
    assert list(got) == list(metrics)
    for name, metric in metrics.items():
        expected = extract_statistics(metric, runs, refs)
        assert got[name].flags.c_contiguous
        assert got[name].dtype == expected.dtype
        assert np.array_equal(got[name], expected), name


def test_metrics_share_statistics_only_with_the_same_tokens():
    shared = {
        make_metric(name, MetricOptions(tokenize=tok)).statistics_source()[0]
        for name in ("bleu", "length")
        for tok in ("13a", "intl")
    }
    assert len(shared) == 2
    words = {
        make_metric(name, MetricOptions(lowercase=lc)).statistics_source()[0]
        for name in ("precision", "recall", "fmeasure")
        for lc in (False, True)
    }
    assert len(words) == 2


def test_duplicates_are_counted_once(outputs):
    runs, _ = outputs
    assert distinct_pairs(runs) < 4 * 80
    assert distinct_pairs([runs[0], runs[0]]) == 80


def test_outputs_of_the_wrong_length_are_refused(outputs):
    runs, refs = outputs
    with pytest.raises(ValueError, match="lines"):
        extract_statistics(make_metric("bleu"), [runs[0][:-1]], refs)


def test_bertr_statistics_come_out_the_same_when_all_segments_share_one_pass(outputs):
    runs, refs = outputs
    metric = make_metric("bertr")
    short = [run[:12] for run in runs]
    short_refs = [stream[:12] for stream in refs]
    expected = np.stack([metric.statistics(run, short_refs) for run in short])
    got = extract_statistics(metric, short, short_refs)
    # Batches of other sizes pad differently, which moves float32 encoder outputs in the last bits.
    assert got == pytest.approx(expected, abs=1e-5)
