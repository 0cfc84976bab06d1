"""Lemma overlap: SemPOS eq. 1 with a single class, on simplemma lemmas of content words."""

from __future__ import annotations

import pytest

from evalcore.scoring import LemmaOverlap


def test_matches_lemmas_not_surface_forms_and_ignores_order_and_stop_words():
    metric = LemmaOverlap(lang="en")
    assert (
        metric.corpus_score(["The officials were responsible"], [["official is responsible"]]).score
        == 100.0
    )
    assert metric.content_lemmas("The cats were sitting on the mats.") == {
        "cat": 1,
        "sitting": 1,
        "mat": 1,
    }


def test_score_is_sum_of_minimum_counts_over_sum_of_maximum_counts():
    metric = LemmaOverlap(lang="en")
    hyp = "airport airport security officials"
    ref = "airport security security government"
    # counts hyp {airport 2, security 1, official 1}, ref {airport 1, security 2, government 1}
    # min: 1 + 1 + 0 + 0 = 2; max: 2 + 2 + 1 + 1 = 6
    stats = metric.statistics([hyp], [[ref]])
    assert stats.tolist() == [[2.0, 6.0]]
    assert metric.corpus_score([hyp], [[ref]]).score == pytest.approx(100 * 2 / 6)


def test_corpus_score_pools_counts_over_segments():
    metric = LemmaOverlap(lang="en")
    score = metric.corpus_score(["airport", "cat dog"], [["airport", "dog"]]).score
    assert score == pytest.approx(100 * (1 + 1) / (1 + 2))


def test_lemmatises_a_morphologically_rich_language():
    metric = LemmaOverlap(lang="de")
    assert metric.corpus_score(["Die Häuser"], [["das Haus"]]).score == 100.0


def test_blank_candidate_and_reference_score_zero_as_in_sempos():
    assert LemmaOverlap().corpus_score([""], [[""]]).score == 0.0


def test_the_best_of_several_references_counts_and_the_signature_names_the_approximation():
    metric = LemmaOverlap()
    assert metric.corpus_score(["airport security"], [["cat"], ["airport security"]]).score == 100.0
    signature = str(metric.signature(2))
    assert signature.startswith("LemmaOverlap|nrefs:2|lang:en|lemmas:simplemma-")
    assert "stop:stopwordsiso-" in signature


def test_a_words_lemma_is_remembered_per_language_and_numbers_carry_none():
    # "die" is an English content word and a German stop word: the remembered lemma of a
    # token is its language's
    assert LemmaOverlap(lang="en").content_lemmas("die 42 dies") == {"die": 2}
    assert LemmaOverlap(lang="de").content_lemmas("die 42") == {}
    assert LemmaOverlap(lang="en").content_lemmas("die") == {"die": 1}
