"""BLEU, chrF, TER and Length against sacreBLEU 2.6 and Koehn's worked examples (Figs. 8.6–8.7).

Tolerance 1e-9 on scores: our vectorised formulas repeat sacreBLEU's arithmetic in the same order,
but numpy's log/exp may differ from Python's math module in the last bit (~1e-14 relative).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu
from sacrebleu.significance import PairedTest

from evalcore.scoring import BLEU, CHRF, TER, Length, make_metric
from tests.evalcore.corpus import corpus

KOEHN_REF = "Israeli officials are responsible for airport security"
KOEHN_A = "Israeli officials responsibility of airport safety"
KOEHN_B = "airport security Israeli officials are responsible"
KOEHN_REFS_87 = [
    KOEHN_REF,
    "Israel is in charge of the security at this airport",
    "The security work for this airport is the responsibility of the Israel government",
    "Israeli side was in charge of the security of this airport",
]

NON_LATIN = {
    "zh": (
        ["猫坐在垫子上。", "今天天气很好", "", "我们明天去北京"],
        ["猫在垫子上。", "今天的天气很好", "你好", "我们明天去上海"],
    ),
    "ru": (
        ["Кошка сидит на ковре.", "Погода сегодня хорошая"],
        ["Кошка сидела на ковре.", "Сегодня хорошая погода"],
    ),
    "ar": (
        ["القط يجلس على السجادة", "الطقس جميل اليوم"],
        ["جلس القط على السجادة", "الطقس جميل جدا اليوم"],
    ),
    "hi": (
        ["बिल्ली चटाई पर बैठी है।", "आज मौसम अच्छा है"],
        ["बिल्ली चटाई पर बैठी थी।", "आज का मौसम अच्छा है"],
    ),
}
JAPANESE = (
    ["猫はマットの上に座った。", "今日はいい天気です"],
    ["猫がマットの上に座っている。", "今日は天気がいいです"],
)
KOREAN = (
    ["고양이가 매트 위에 앉았다.", "오늘 날씨가 좋다"],
    ["고양이는 매트 위에 앉아 있다.", "오늘은 날씨가 좋습니다"],
)


def _check(ours, theirs) -> None:
    assert ours.score == pytest.approx(theirs.score, abs=1e-9, rel=0)


@pytest.mark.parametrize("n_refs", [1, 2, 3, 4])
@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
@pytest.mark.parametrize("tokenize", ["13a", "intl", "zh", "char", "none"])
def test_bleu_corpus_score_equals_sacrebleu(tokenize, smooth, n_refs):
    hyps, refs = corpus(seed=n_refs, n_segments=40, n_refs=n_refs)
    hyps[3] = ""  # an empty hypothesis
    refs[0][5] = ""  # and an empty reference line
    for lowercase in (False, True):
        ours = BLEU(tokenize=tokenize, smooth_method=smooth, lowercase=lowercase)
        theirs = sacrebleu.BLEU(tokenize=tokenize, smooth_method=smooth, lowercase=lowercase)
        _check(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))


@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_bleu_smoothing_values_and_n_gram_orders_follow_sacrebleu(smooth):
    hyps, refs = corpus(seed=11, n_segments=10, n_refs=2, noise=0.8)
    for value in (0.01, 0.5, 2.0):
        for order in (2, 4, 6):
            ours = BLEU(smooth_method=smooth, smooth_value=value, max_ngram_order=order)
            theirs = sacrebleu.BLEU(smooth_method=smooth, smooth_value=value, max_ngram_order=order)
            _check(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))


@pytest.mark.parametrize("lang", sorted(NON_LATIN))
def test_scores_on_non_latin_scripts_equal_sacrebleu(lang):
    hyps, ref = NON_LATIN[lang]
    refs = [ref]
    for tokenize in ("13a", "intl", "zh", "char"):
        _check(
            BLEU(tokenize=tokenize).corpus_score(hyps, refs),
            sacrebleu.BLEU(tokenize=tokenize).corpus_score(hyps, refs),
        )
    for word_order in (0, 2):
        _check(
            CHRF(word_order=word_order).corpus_score(hyps, refs),
            sacrebleu.CHRF(word_order=word_order).corpus_score(hyps, refs),
        )
    _check(
        TER(normalized=True, asian_support=True).corpus_score(hyps, refs),
        sacrebleu.TER(normalized=True, asian_support=True).corpus_score(hyps, refs),
    )


@pytest.mark.parametrize(("tokenize", "texts"), [("ja-mecab", JAPANESE), ("ko-mecab", KOREAN)])
def test_mecab_tokenizers_for_japanese_and_korean_equal_sacrebleu(tokenize, texts):
    hyps, ref = texts
    ours = BLEU(tokenize=tokenize).corpus_score(hyps, [ref])
    theirs = sacrebleu.BLEU(tokenize=tokenize)
    _check(ours, theirs.corpus_score(hyps, [ref]))
    assert str(ours.signature) == "BLEU|" + theirs.get_signature().format()
    assert "mecab" in str(ours.signature)


def test_sentence_bleu_uses_effective_order_and_equals_sacrebleu_sentence_bleu():
    hyps, refs = corpus(seed=5, n_segments=60, n_refs=2, noise=0.6)
    ours = BLEU().sentence_scores(hyps, refs)
    theirs = [sacrebleu.sentence_bleu(h, [r[i] for r in refs]).score for i, h in enumerate(hyps)]
    assert ours == pytest.approx(theirs, abs=1e-9)
    assert BLEU().sentence_score("the cat", ["the cat sat"]) == pytest.approx(
        sacrebleu.sentence_bleu("the cat", ["the cat sat"]).score, abs=1e-9
    )


@pytest.mark.parametrize("word_order", [0, 2])
@pytest.mark.parametrize("n_refs", [1, 2, 4])
def test_chrf_and_chrf_plus_plus_equal_sacrebleu(word_order, n_refs):
    hyps, refs = corpus(seed=20 + n_refs, n_segments=40, n_refs=n_refs)
    hyps[0] = ""
    for lowercase in (False, True):
        for eps_smoothing in (False, True):
            ours = CHRF(word_order=word_order, lowercase=lowercase, eps_smoothing=eps_smoothing)
            theirs = sacrebleu.CHRF(
                word_order=word_order, lowercase=lowercase, eps_smoothing=eps_smoothing
            )
            _check(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    sentence = CHRF(word_order=word_order).sentence_scores(hyps, refs)
    theirs = [
        sacrebleu.sentence_chrf(h, [r[i] for r in refs], word_order=word_order).score
        for i, h in enumerate(hyps)
    ]
    assert sentence == pytest.approx(theirs, abs=1e-9)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"normalized": True},
        {"no_punct": True},
        {"normalized": True, "asian_support": True},
        {"no_punct": True, "asian_support": True},
        {"case_sensitive": True},
    ],
)
@pytest.mark.parametrize("n_refs", [1, 3])
def test_ter_equals_sacrebleu_for_every_option(options, n_refs):
    hyps, refs = corpus(seed=30 + n_refs, n_segments=30, n_refs=n_refs)
    hyps[2] = ""
    refs[0][4] = ""
    _check(
        TER(**options).corpus_score(hyps, refs), sacrebleu.TER(**options).corpus_score(hyps, refs)
    )


def test_signatures_are_sacrebleus_own_strings():
    hyps, refs = corpus(seed=1, n_segments=5, n_refs=2)
    cases = [
        (
            BLEU(tokenize="intl", smooth_method="floor", lowercase=True),
            sacrebleu.BLEU(tokenize="intl", smooth_method="floor", lowercase=True),
            "BLEU",
        ),
        (CHRF(word_order=2), sacrebleu.CHRF(word_order=2), "chrF2++"),
        (TER(normalized=True), sacrebleu.TER(normalized=True), "TER"),
    ]
    for ours, theirs, name in cases:
        theirs.corpus_score(hyps, refs)
        assert (
            str(ours.corpus_score(hyps, refs).signature)
            == f"{name}|{theirs.get_signature().format()}"
        )


def test_signature_with_resampling_places_bs_ar_and_seed_as_sacrebleu_does():
    hyps, refs = corpus(seed=1, n_segments=20)
    named = [("a", hyps), ("b", hyps)]
    signatures, _ = PairedTest(
        named, {"BLEU": sacrebleu.BLEU()}, refs, test_type="bs", n_samples=1000
    )()
    ours = BLEU().signature(1).with_resampling(bootstrap=1000, seed=12345)
    assert str(ours) == "BLEU|" + signatures["BLEU"].format()


def test_koehn_figure_8_6_n_gram_precisions_with_one_reference():
    metric = BLEU(tokenize="none")
    a = metric.statistics([KOEHN_A], [[KOEHN_REF]])[0]
    b = metric.statistics([KOEHN_B], [[KOEHN_REF]])[0]
    # columns: hyp_len, ref_len, correct_1..4, total_1..4
    assert a[2:6].tolist() == [3, 1, 0, 0]
    assert a[6:10].tolist() == [6, 5, 4, 3]
    assert b[2:6].tolist() == [6, 4, 2, 1]
    assert b[6:10].tolist() == [6, 5, 4, 3]
    assert (a[0], a[1]) == (6, 7)  # brevity penalty input: output 6, reference 7


def test_koehn_figure_8_7_clips_against_four_references():
    metric = BLEU(tokenize="none")
    refs = [[r] for r in KOEHN_REFS_87]
    a = metric.statistics([KOEHN_A], refs)[0]
    assert a[2:6].tolist() == [5, 2, 0, 0]
    b = metric.statistics([KOEHN_B], refs)[0]
    assert b[2:6].tolist() == [6, 4, 2, 1]


def test_koehn_figure_8_7_system_b_bleu_4_uses_standard_brevity_penalty():
    score = BLEU(tokenize="none").corpus_score([KOEHN_B], [[KOEHN_REF]])
    precisions = [6 / 6, 4 / 5, 2 / 4, 1 / 3]
    expected = 100 * math.exp(1 - 7 / 6) * math.exp(sum(math.log(p) for p in precisions) / 4)
    assert score.score == pytest.approx(expected, abs=1e-9)
    assert score.details["bp"] == pytest.approx(math.exp(1 - 7 / 6))


def test_closest_reference_length_prefers_the_shorter_on_a_tie():
    hyp = " ".join(["w"] * 10)
    refs = [[" ".join(["x"] * n)] for n in (8, 9, 11, 15)]
    stats = BLEU(tokenize="none").statistics([hyp], refs)[0]
    assert stats[1] == 9


def test_clipping_uses_the_largest_count_in_any_single_reference():
    stats = BLEU(tokenize="none").statistics(["the the the the"], [["the cat"], ["the the mat"]])[0]
    assert stats[2] == 2  # two "the" in one reference, not three across both


def test_length_is_100_times_hypothesis_over_closest_reference_length():
    hyps = ["a b c", "a b c d e"]
    refs = [["a b", "a b c d"], ["a b c d", "a b c d e f g h"]]
    score = Length(tokenize="none").corpus_score(hyps, refs)
    # closest: 2 (|3-2|=1 ties |3-4|=1 -> shorter) and 4 (|5-4|=1 beats |5-8|=3)
    assert score.score == pytest.approx(100 * 8 / 6)
    bleu = sacrebleu.BLEU(tokenize="none").corpus_score(hyps, refs)
    assert score.score == pytest.approx(100 * bleu.sys_len / bleu.ref_len)


def test_empty_corpus_and_all_empty_lines_score_zero_like_sacrebleu():
    assert BLEU().statistics([], [[]]).shape == (0, 10)
    for metric, theirs in (
        (BLEU(), sacrebleu.BLEU()),
        (CHRF(), sacrebleu.CHRF()),
        (TER(), sacrebleu.TER()),
    ):
        _check(metric.corpus_score(["", ""], [["", ""]]), theirs.corpus_score(["", ""], [["", ""]]))


def test_score_functions_are_vectorised_over_leading_axes():
    hyps, refs = corpus(seed=9, n_segments=30, n_refs=2)
    for name in ("bleu", "chrf", "chrf++", "ter", "length"):
        metric = make_metric(name)
        stats = metric.statistics(hyps, refs)
        grid = np.stack([stats[:10].sum(0), stats[10:].sum(0), stats.sum(0)]).reshape(3, 1, -1)
        vectorised = metric.score_from_statistics(grid)
        assert vectorised.shape == (3, 1)
        singles = [float(metric.score_from_statistics(row[0])) for row in grid]
        assert vectorised[:, 0].tolist() == pytest.approx(singles, abs=1e-12)


def test_unknown_tokenizer_or_smoothing_is_refused():
    with pytest.raises(ValueError, match="tokenizer"):
        BLEU(tokenize="moses")
    with pytest.raises(ValueError, match="smoothing"):
        BLEU(smooth_method="laplace")


def test_metrics_survive_pickling_for_worker_processes():
    import pickle

    hyps, refs = corpus(seed=2, n_segments=5)
    for name in ("bleu", "chrf", "ter", "length"):
        metric = make_metric(name)
        clone = pickle.loads(pickle.dumps(metric))
        assert np.array_equal(clone.statistics(hyps, refs), metric.statistics(hyps, refs))


def test_bleu_length_and_the_word_metrics_tokenise_with_one_object_per_process():
    import pickle

    from evalcore.scoring import WER, WordPrecision

    bleu, wer, precision = BLEU(), WER(), WordPrecision()
    shared = bleu._sacre.tokenizer
    assert Length()._sacre.tokenizer is shared
    assert wer._tokenizer is shared
    assert precision._tokenizer is shared
    assert pickle.loads(pickle.dumps(wer))._tokenizer is shared  # as in a worker process
    assert BLEU(tokenize="intl")._sacre.tokenizer is not shared
    # a line the word metrics tokenised first gives BLEU sacreBLEU's own statistics
    hyps, refs = corpus(seed=4, n_segments=30)
    lowered = BLEU(lowercase=True)
    for line in hyps + refs[0]:
        wer.words(line)
    for metric, theirs in ((bleu, sacrebleu.BLEU()), (lowered, sacrebleu.BLEU(lowercase=True))):
        ours = metric.statistics(hyps, refs)
        assert ours.tolist() == theirs._extract_corpus_statistics(hyps, refs)
