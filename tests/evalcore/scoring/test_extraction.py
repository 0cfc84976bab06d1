"""Deduplicated, parallel statistics extraction gives exactly the per-output statistics."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.scoring import METRIC_NAMES, MetricOptions, extraction, make_metric
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


@pytest.mark.parametrize("n_refs", [1, 2])
@pytest.mark.parametrize("lowercase", [False, True])
def test_metrics_extracted_together_get_exactly_their_own_statistics(lowercase, n_refs, outputs):
    runs, refs = outputs
    refs = refs[:n_refs]
    options = MetricOptions(lowercase=lowercase, chrf_lowercase=lowercase, smooth_method="floor")
    metrics = {name: make_metric(name, options) for name in METRIC_NAMES if name != "bertr"}
    # A second BLEU whose smoothing differs shares the statistics (smoothing acts on sums), and
    # a chrF of other β and ε-smoothing shares chrF++'s character n-grams against one reference.
    metrics["bleu-add-k"] = make_metric("bleu", MetricOptions(smooth_method="add-k"))
    metrics["chrf-beta-1"] = make_metric(
        "chrf", MetricOptions(chrf_beta=1, chrf_lowercase=lowercase)
    )
    got = extract_all(metrics, runs, refs)
    assert list(got) == list(metrics)
    for name, metric in metrics.items():
        expected = extract_statistics(metric, runs, refs)
        assert got[name].flags.c_contiguous
        assert got[name].dtype == expected.dtype
        assert np.array_equal(got[name], expected), name


def test_chrf_without_chrf_plus_plus_computes_its_own_statistics(outputs, monkeypatch):
    runs, refs = outputs
    computed = []
    real = extraction.extract_statistics
    monkeypatch.setattr(
        extraction,
        "extract_statistics",
        lambda metric, *args, **kwargs: computed.append(metric.label) or real(metric, *args),
    )
    got = extract_all({"chrf": make_metric("chrf")}, runs, refs[:1])
    assert computed == ["chrF2"]
    both = extract_all(
        {"chrf": make_metric("chrf"), "chrf++": make_metric("chrf++")}, runs, refs[:1]
    )
    assert computed == ["chrF2", "chrF2++"]
    assert np.array_equal(both["chrf"], got["chrf"])


def test_metrics_share_statistics_only_with_the_same_tokens_and_characters():
    shared = {
        make_metric(name, MetricOptions(tokenize=tok)).statistics_source(1)[0]
        for name in ("bleu", "length")
        for tok in ("13a", "intl")
    }
    assert len(shared) == 2
    words = {
        make_metric(name, MetricOptions(lowercase=lc)).statistics_source(1)[0]
        for name in ("precision", "recall", "fmeasure")
        for lc in (False, True)
    }
    assert len(words) == 2
    chrf = {
        make_metric(name, MetricOptions(chrf_whitespace=ws)).statistics_source(1)[0]
        for name in ("chrf", "chrf++")
        for ws in (False, True)
    }
    assert len(chrf) == 2
    # Against two references each chooses its own best reference.
    assert len({make_metric(n).statistics_source(2)[0] for n in ("chrf", "chrf++")}) == 2


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
