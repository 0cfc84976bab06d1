"""Signatures, reference counting, corpus checks and the metric registry."""

from __future__ import annotations

import pytest

from evalcore.scoring import METRIC_NAMES, Signature, check_corpus, count_references, make_metric


def test_signature_puts_shared_keys_first_version_last_and_writes_booleans_as_yes_no():
    sig = Signature.build(
        "X", {"version": "1", "case": "lc", "nrefs": 2, "eff": True, "skip": None}
    )
    assert str(sig) == "X|nrefs:2|case:lc|eff:yes|version:1"
    resampled = sig.with_resampling(bootstrap=1000, trials=10000, seed=7)
    assert str(resampled) == "X|nrefs:2|bs:1000|ar:10000|seed:7|case:lc|eff:yes|version:1"


def test_reference_count_is_var_when_some_lines_lack_a_reference():
    assert count_references([["a", "b"], ["c", "d"]]) == 2
    assert count_references([["a", "b"], ["c", None]]) == "var"


def test_corpus_checks_name_the_stream_that_is_too_short():
    with pytest.raises(ValueError, match="reference stream 2 has 1 lines"):
        check_corpus(["x", "y"], [["a", "b"], ["c"]])
    with pytest.raises(TypeError):
        check_corpus("x", [["a"]])


def test_every_registered_metric_builds_and_scores():
    for name in METRIC_NAMES:
        metric = make_metric(name)
        score = metric.corpus_score(["the cat sat on the mat"], [["the cat sat on a mat"]])
        assert score.signature.metric == metric.label
        assert 0 <= score.score <= 100
    with pytest.raises(ValueError, match="unknown metric"):
        make_metric("meteor")
