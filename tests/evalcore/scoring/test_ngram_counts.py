"""chrF's and BLEU's statistics counted in numpy (evalcore.scoring.ngram_counts) are
sacreBLEU's, integer for integer: sacreBLEU's own ``_extract_corpus_statistics`` is the
reference, on real text with every option, several references (some missing), randomised inputs
(case, punctuation, whitespace, repeated n-grams, scripts, empty lines), batches too wide for one
pass, and text Python cannot encode; the extraction's path (distinct hypotheses per segment)
gives the same."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.demo.text import DEMO_DOCUMENTS
from evalcore.scoring import BLEU, CHRF, make_metric, ngram_counts
from evalcore.scoring.extraction import extract_statistics


def sacre_rows(options: dict, hyps: list[str], refs: list[list[str | None]]) -> list:
    return sacrebleu.CHRF(**options)._extract_corpus_statistics(hyps, refs)


def real_text() -> tuple[list[str], list[str], list[str]]:
    """The demo's two English translations of each sentence (case and punctuation as written),
    and B's sentences with their words partly moved."""
    a = [ref_a for _, sentences in DEMO_DOCUMENTS for _, ref_a, _ in sentences]
    b = [ref_b for _, sentences in DEMO_DOCUMENTS for _, _, ref_b in sentences]
    moved = [" ".join(s.split()[3:] + s.split()[:3]) for s in b]
    return a, b, moved


OPTIONS = [
    {},
    {"word_order": 2},
    {"word_order": 1, "char_order": 4},
    {"word_order": 2, "lowercase": True},
    {"word_order": 2, "whitespace": True},
    {"char_order": 1},
    {"word_order": 2, "eps_smoothing": True, "beta": 1},
]


@pytest.mark.parametrize("options", OPTIONS)
def test_statistics_equal_sacrebleus_on_real_text_with_every_option(options):
    a, b, moved = real_text()
    missing: list[str | None] = [None if k % 3 == 0 else s for k, s in enumerate(b)]
    for hyps, refs in ((b, [a]), (a, [b]), (moved, [a, b]), (moved, [a, missing])):
        ours = CHRF(**options).statistics(hyps, refs)
        assert ours.tolist() == sacre_rows(options, hyps, refs)


@pytest.mark.parametrize("options", OPTIONS)
def test_corpus_scores_equal_sacrebleus(options):
    a, b, moved = real_text()
    for hyps, refs in ((moved, [a]), (moved, [a, b])):
        ours = CHRF(**options).corpus_score(hyps, refs).score
        theirs = sacrebleu.CHRF(**options).corpus_score(hyps, refs).score
        assert ours == pytest.approx(theirs, abs=1e-9)


TEXT = st.text(
    alphabet=st.sampled_from([*"abcAB .,!?()'-\t", "é", "ß", "中", "文", "🙂", "\u0301"]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    segments=st.lists(
        st.tuples(
            st.lists(TEXT, min_size=1, max_size=4),
            st.lists(st.one_of(TEXT, st.none()), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=6,
    ),
    option=st.sampled_from(OPTIONS),
)
def test_statistics_equal_sacrebleus_on_random_text(segments, option):
    # every segment keeps a reference in the first stream, as a corpus must
    work = [(hyps, [refs[0] or "", *refs[1:]]) for hyps, refs in segments]
    metric = CHRF(**option)
    rows = metric.statistics_for_segments([(refs, hyps) for hyps, refs in work])
    expected = []
    for hyps, refs in work:
        streams = [[r] * len(hyps) for r in refs]
        expected += sacre_rows(option, hyps, streams)
    assert rows.tolist() == expected


def test_the_extraction_of_many_systems_gives_sacrebleus_statistics():
    a, b, moved = real_text()
    outputs = [b, moved, a, b]  # two systems alike: each distinct pair counted once
    for name in ("chrf", "chrf++"):
        metric = make_metric(name)
        found = extract_statistics(metric, outputs, [a, b])
        for k, hyps in enumerate(outputs):
            options = {"word_order": metric.word_order}
            assert found[k].tolist() == sacre_rows(options, hyps, [a, b])


def test_a_batch_with_too_many_characters_is_halved_and_still_sacrebleus():
    # 3,000 distinct CJK characters need 12 bits each: six of them and a line number exceed
    # the 62 bits of a batch, so the batch is counted in parts; a segment of its own fits.
    rng = np.random.default_rng(5)
    chars = [chr(0x4E00 + k) for k in range(3000)]
    refs = ["".join(rng.choice(chars, 60)) for _ in range(40)]
    hyps = [r[:30] + "".join(rng.choice(chars, 30)) for r in refs]
    sacre = sacrebleu.CHRF(word_order=2)
    assert (
        ngram_counts._chrf_batch(sacre, [([r], [h]) for r, h in zip(refs, hyps, strict=True)])
        is None
    )
    ours = CHRF(word_order=2).statistics(hyps, [refs])
    assert ours.tolist() == sacre_rows({"word_order": 2}, hyps, [refs])


def test_a_segment_that_cannot_be_packed_or_encoded_is_left_to_sacrebleu():
    wide = "".join(chr(0x4E00 + k) for k in range(1100))  # 11 bits × 6 orders > 62 bits alone
    lone = "abc\ud800def"  # a lone surrogate: no UTF-32
    sacre = sacrebleu.CHRF()
    assert ngram_counts.chrf_rows(sacre, [([wide], [wide[::-1]]), ([lone], [lone])]) == [
        None,
        None,
    ]
    for hyps, refs in (([wide[::-1]], [[wide]]), (["abc\ud800de"], [[lone]])):
        assert CHRF().statistics(hyps, refs).tolist() == sacre_rows({}, hyps, refs)


@pytest.mark.parametrize(
    "options",
    [{}, {"word_order": 2}, {"beta": 1, "word_order": 1}, {"eps_smoothing": True, "beta": 3}],
)
def test_scores_from_statistics_are_sacrebleus_f_scores_bit_for_bit(options):
    # many rows at once, as the significance tests score them, with zeros in every column
    metric, sacre = CHRF(**options), sacrebleu.CHRF(**options)
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 40, size=(4000, len(metric.stat_names)))
    rows[rng.random(rows.shape) < 0.15] = 0
    ours = metric.score_from_statistics(rows.reshape(40, 100, -1).astype(np.float64))
    theirs = [sacre._compute_f_score(row) for row in rows.tolist()]
    assert ours.reshape(-1).tolist() == theirs


BLEU_OPTIONS = [
    {},
    {"lowercase": True},
    {"tokenize": "intl"},
    {"tokenize": "zh"},
    {"tokenize": "char"},
    {"tokenize": "none", "max_ngram_order": 2},
    {"max_ngram_order": 6},
]


def sacre_bleu_rows(options: dict, hyps: list[str], refs: list[list[str | None]]) -> list:
    return sacrebleu.BLEU(**options)._extract_corpus_statistics(hyps, refs)


@pytest.mark.parametrize("options", BLEU_OPTIONS)
def test_bleu_statistics_equal_sacrebleus_on_real_text_with_every_option(options):
    a, b, moved = real_text()
    missing: list[str | None] = [None if k % 3 == 0 else s for k, s in enumerate(b)]
    shorter = [" ".join(s.split()[:-2]) for s in a]
    for hyps, refs in (
        (b, [a]),
        (moved, [a, b]),
        (moved, [a, missing]),
        (a, [b, shorter, moved, missing]),  # the closest length, the shorter on a tie
    ):
        ours = BLEU(**options).statistics(hyps, refs)
        assert ours.tolist() == sacre_bleu_rows(options, hyps, refs)


WORDS = st.sampled_from(["the", "The", "a", "cat", "cat.", "sat", "on", "mat", ",", "3.5", "中文"])


@settings(max_examples=300, deadline=None)
@given(
    segments=st.lists(
        st.tuples(
            st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=4),
            st.lists(
                st.one_of(st.lists(WORDS, max_size=12).map(" ".join), st.none()),
                min_size=1,
                max_size=4,
            ),
        ),
        min_size=1,
        max_size=6,
    ),
    option=st.sampled_from(BLEU_OPTIONS),
)
def test_bleu_statistics_equal_sacrebleus_on_random_text(segments, option):
    work = [(hyps, [refs[0] or "", *refs[1:]]) for hyps, refs in segments]
    rows = BLEU(**option).statistics_for_segments([(refs, hyps) for hyps, refs in work])
    expected = []
    for hyps, refs in work:
        expected += sacre_bleu_rows(option, hyps, [[r] * len(hyps) for r in refs])
    assert rows.tolist() == expected


def test_bleu_and_length_of_many_systems_by_the_extraction_are_sacrebleus():
    a, b, moved = real_text()
    outputs = [b, moved, a, b]
    for name, columns in (("bleu", slice(None)), ("length", slice(0, 2))):
        found = extract_statistics(make_metric(name), outputs, [a, b])
        for k, hyps in enumerate(outputs):
            expected = np.asarray(sacre_bleu_rows({}, hyps, [a, b]))[:, columns]
            assert found[k].tolist() == expected.tolist()


def test_a_bleu_batch_with_too_many_words_is_halved_and_still_sacrebleus():
    # 40,000 distinct words need 16 bits each: four of them and a line number exceed the 62
    # bits of a batch of 32 segments; a segment of its own fits
    refs = [" ".join(f"w{k * 1000 + i}" for i in range(1000)) for k in range(40)]
    hyps = [" ".join(r.split()[::-1][:900]) for r in refs]
    sacre = sacrebleu.BLEU(tokenize="none")
    work = [([r], [h]) for r, h in zip(refs, hyps, strict=True)]
    assert ngram_counts._bleu_batch(sacre, work[:32]) is None
    ours = BLEU(tokenize="none").statistics(hyps, [refs])
    assert ours.tolist() == sacre_bleu_rows({"tokenize": "none"}, hyps, [refs])
