"""Word metrics against Koehn's worked examples (Figs. 8.4 and 8.5, eq. 8.2–8.7)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.scoring import PER, WER, WordFMeasure, WordPrecision, WordRecall
from evalcore.scoring.lexical import bag_matches, word_edit_distance

REF = "Israeli officials are responsible for airport security"
A = "Israeli officials responsibility of airport safety"
B = "airport security Israeli officials are responsible"


def score(metric, hyp: str, refs: list[str] | None = None) -> float:
    return metric.corpus_score([hyp], [[r] for r in (refs or [REF])]).score


@pytest.mark.parametrize(
    ("metric", "a", "b"),
    [
        (WordPrecision(), 3 / 6, 6 / 6),  # eq. 8.2
        (WordRecall(), 3 / 7, 6 / 7),  # eq. 8.3
        (WordFMeasure(), 3 / 6.5, 6 / 6.5),  # eq. 8.5: correct / ((6 + 7) / 2)
        (PER(), 4 / 7, 1 / 7),  # eq. 8.6
        (WER(), 4 / 7, 5 / 7),  # Fig. 8.5
    ],
)
def test_koehn_figure_8_4_and_8_5_word_metrics(metric, a, b):
    assert score(metric, A) == pytest.approx(100 * a)
    assert score(metric, B) == pytest.approx(100 * b)


def test_f_measure_is_the_harmonic_mean_of_precision_and_recall():
    p, r = score(WordPrecision(), A), score(WordRecall(), A)
    assert score(WordFMeasure(), A) == pytest.approx(p * r / ((p + r) / 2))


def test_per_counts_superfluous_output_words_as_errors():
    # 4 output words, 2 in the reference of 2: correct 2, superfluous 2 -> PER = 1 - 0/2
    assert score(PER(), "a b c d", ["a b"]) == pytest.approx(100.0)


def test_corpus_scores_divide_summed_counts_not_average_segment_scores():
    metric = WER()
    corpus = metric.corpus_score([A, B], [[REF, REF]]).score
    assert corpus == pytest.approx(100 * (4 + 5) / 14)


def test_several_references_take_the_fewest_errors_over_the_average_reference_length():
    refs = [REF, "Israeli officials responsibility of airport safety right here"]
    # edits: 4 against REF, 2 against the second; lengths 7 and 8
    assert score(WER(), A, refs) == pytest.approx(100 * 2 / 7.5)
    # recall comes from the reference with the best f-measure: 6 correct of its 8 words
    assert score(WordRecall(), A, refs) == pytest.approx(100 * 6 / 8)


def test_empty_lines_do_not_divide_by_zero():
    assert score(WER(), "", [""]) == 0.0
    assert score(WER(), "a b", [""]) == 100.0
    assert score(WordPrecision(), "", ["a"]) == 0.0


def test_lowercase_and_tokenizer_options_change_what_counts_as_a_word():
    assert score(WER(), "Airport security.", ["airport security ."]) > 0
    assert score(WER(lowercase=True), "Airport security.", ["airport security ."]) == 0.0
    assert score(WER(tokenize="none"), "airport security.", ["airport security ."]) > 0
    assert "tok:13a" in str(WER().signature(1))
    assert "case:lc" in str(WER(lowercase=True).signature(2))


def levenshtein_by_enumeration(a: list[str], b: list[str]) -> int:
    """The textbook recursion of Fig. 8.5, memoised, as an independent reference."""
    table = {}
    for i, j in itertools.product(range(len(a) + 1), range(len(b) + 1)):
        if i == 0 or j == 0:
            table[i, j] = i + j
        else:
            table[i, j] = min(
                table[i - 1, j] + 1,
                table[i, j - 1] + 1,
                table[i - 1, j - 1] + (a[i - 1] != b[j - 1]),
            )
    return table[len(a), len(b)]


@settings(max_examples=150, deadline=None)
@given(
    hyp=st.lists(st.sampled_from("abcd"), max_size=12),
    ref=st.lists(st.sampled_from("abcd"), max_size=12),
)
def test_compiled_edit_distance_equals_the_textbook_recursion(hyp, ref):
    assert word_edit_distance(hyp, ref) == levenshtein_by_enumeration(hyp, ref)
    assert word_edit_distance(hyp, ref) == word_edit_distance(ref, hyp)


def test_bag_matches_use_each_reference_word_once():
    assert bag_matches(["the", "the", "the"], ["the", "cat", "the"]) == 2
