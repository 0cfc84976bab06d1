"""The compiled TER and Levenshtein kernels give sacreBLEU's numbers: its Python TER
(``translation_edit_rate``, beam, shift heuristics and limits included) is the reference, on
randomised word lists, on real text with every TER option, and on segments of 1,000 and 5,000
words; numba's compiled code is cached and works in forked worker processes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.lib_ter import translation_edit_rate

from annotation.demo.text import DEMO_DOCUMENTS
from evalcore.scoring import TER, make_metric
from evalcore.scoring import edit_distance as kernels
from evalcore.scoring.edit_distance import levenshtein, ter_edits
from evalcore.scoring.extraction import extract_statistics
from tests.conftest import ROOT

WORDS = st.sampled_from(["the", "a", "cat", "sat", "on", "mat", ".", "dog"])


@settings(max_examples=400, deadline=None)
@given(hyp=st.lists(WORDS, max_size=30), ref=st.lists(WORDS, max_size=30))
def test_ter_edits_equal_sacrebleus_on_random_word_lists(hyp, ref):
    assert ter_edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]


@st.composite
def reordered(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A reference and a hypothesis made from it by moving blocks and changing words, the
    edits TER's shifts are for (blocks of up to 12 words, moved up to the whole segment)."""
    words = st.sampled_from([f"w{i}" for i in range(40)])
    ref = draw(st.lists(words, min_size=1, max_size=70))
    hyp = list(ref)
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, len(hyp) - 1))
        block = hyp[start : start + draw(st.integers(1, 12))]
        del hyp[start : start + len(block)]
        target = draw(st.integers(0, len(hyp)))
        hyp[target:target] = block
    changes = draw(st.lists(st.tuples(st.integers(0, len(hyp)), words), max_size=10))
    for position, word in changes:
        hyp[position : position + draw(st.integers(0, 1))] = [word]
    return hyp, ref


@settings(max_examples=300, deadline=None)
@given(pair=reordered())
def test_ter_edits_equal_sacrebleus_on_reordered_hypotheses(pair):
    hyp, ref = pair
    assert ter_edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]


def test_the_beam_and_the_shift_limits_are_sacrebleus_not_a_true_minimum():
    # 100 words before a 40-word reference: the beam (25 cells around the length-ratio
    # diagonal) cannot reach the true alignment, so sacreBLEU counts more edits than
    # Levenshtein's distance without shifts; so must we.
    ref = [f"r{i}" for i in range(40)]
    hyp = [f"x{i}" for i in range(100)] + ref
    assert ter_edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]
    assert ter_edits(hyp, ref) > levenshtein(hyp, ref) == 100


def real_text() -> tuple[list[str], list[str], list[str]]:
    """The demo's sentences: two independent English translations of each (references A and
    B, as written, with case and punctuation) and a third hypothesis with B's sentences in
    A's document order but its words partly reordered."""
    a = [ref_a for _, sentences in DEMO_DOCUMENTS for _, ref_a, _ in sentences]
    b = [ref_b for _, sentences in DEMO_DOCUMENTS for _, _, ref_b in sentences]
    moved = [" ".join(s.split()[3:] + s.split()[:3]) for s in b]
    return a, b, moved


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"case_sensitive": True},
        {"no_punct": True},
        {"normalized": True},
        {"normalized": True, "asian_support": True, "no_punct": True},
    ],
)
def test_ter_statistics_equal_sacrebleus_on_real_text_with_every_option(options):
    a, b, moved = real_text()
    for hyps, refs in ((b, [a]), (a, [b]), (moved, [a, b]), (moved, [a, [None] * len(a)])):
        ours = TER(**options).statistics(hyps, refs)
        theirs = sacrebleu.TER(**options)._extract_corpus_statistics(hyps, refs)
        assert ours.tolist() == theirs


def test_ter_statistics_equal_sacrebleus_on_chinese_with_asian_support():
    refs = ["我们今天去北京。", "他喜欢喝中国茶，也喜欢喝咖啡。"]
    hyps = ["今天我们去北京。", "他也喜欢喝咖啡，喜欢喝中国茶。"]
    options = {"normalized": True, "asian_support": True}
    ours = TER(**options).statistics(hyps, [refs])
    assert ours.tolist() == sacrebleu.TER(**options)._extract_corpus_statistics(hyps, [refs])


def test_the_reference_path_runs_sacrebleus_own_code_with_the_same_statistics():
    a, b, _ = real_text()
    assert type(TER(compiled=False)._sacre) is sacrebleu.TER
    assert np.array_equal(TER(compiled=False).statistics(b, [a]), TER().statistics(b, [a]))


def long_pair(n_words: int) -> tuple[list[str], list[str]]:
    """A segment of ``n_words`` words of real text: the demo's reference A, document after
    document, repeated; the hypothesis is the same sentences as reference B words them, each
    pass over the documents in another order (a long document translated out of order)."""
    docs = [[(a.lower().split(), b.lower().split()) for _, a, b in s] for _, s in DEMO_DOCUMENTS]
    ref: list[str] = []
    hyp: list[str] = []
    rotation = 0
    while len(ref) < n_words:
        order = [(d + rotation) % len(docs) for d in range(len(docs))]
        for d in range(len(docs)):
            ref.extend(word for words, _ in docs[d] for word in words)
            hyp.extend(word for _, words in docs[order[d]] for word in words)
        rotation += 1
    return hyp[:n_words], ref[:n_words]


def test_a_segment_of_200_words_gives_sacrebleus_edits():
    hyp, ref = long_pair(200)
    assert ter_edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]


# sacreBLEU 2.6.0's translation_edit_rate on long_pair(n), computed once because it is slow: on
# the (busy) development machine 30 s for 1,000 words and 2,085 s for 5,000 (ours: 0.03-0.04 s).
LONG_SEGMENT_EDITS = {1000: 824, 5000: 4635}


@pytest.mark.parametrize("n_words", sorted(LONG_SEGMENT_EDITS))
def test_segments_of_1000_and_5000_words_give_sacrebleus_edits(n_words):
    hyp, ref = long_pair(n_words)
    assert ter_edits(hyp, ref) == LONG_SEGMENT_EDITS[n_words]


@settings(max_examples=200, deadline=None)
@given(hyp=st.lists(WORDS, max_size=40), ref=st.lists(WORDS, max_size=40))
def test_levenshtein_equals_the_textbook_table(hyp, ref):
    table = np.zeros((len(hyp) + 1, len(ref) + 1), dtype=int)
    table[:, 0] = range(len(hyp) + 1)
    table[0, :] = range(len(ref) + 1)
    for i in range(1, len(hyp) + 1):
        for j in range(1, len(ref) + 1):
            substitution = table[i - 1, j - 1] + (hyp[i - 1] != ref[j - 1])
            table[i, j] = min(substitution, table[i - 1, j] + 1, table[i, j - 1] + 1)
    assert levenshtein(hyp, ref) == table[-1, -1]


def test_levenshtein_of_5000_words():
    hyp, ref = long_pair(5000)
    assert levenshtein(hyp, ref) == levenshtein(ref, hyp) <= 5000
    assert levenshtein(ref, ref) == 0


def test_compiled_code_is_cached_under_pycache_and_loaded_by_a_new_process():
    kernels.warm_up()  # compiles, or loads what an earlier run cached
    cache = kernels._ter.stats.cache_path
    assert os.path.dirname(cache) == str(ROOT / "evalcore" / "scoring")
    assert os.path.basename(cache) == "__pycache__"  # .gitignore keeps it out of the repository
    script = (
        "from evalcore.scoring import edit_distance as k; k.warm_up(); "
        "print(sum(k._ter.stats.cache_misses.values()), sum(k._ter.stats.cache_hits.values()), "
        "sum(k._levenshtein.stats.cache_misses.values()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "1", "0"]  # nothing compiled again


def test_forked_worker_processes_compute_sacrebleus_ter():
    a, b, moved = real_text()
    outputs = [b, moved, b]
    ours = extract_statistics(make_metric("ter"), outputs, [a], workers=2)
    theirs = sacrebleu.TER()
    for output, stats in zip(outputs, ours, strict=True):
        assert stats.tolist() == theirs._extract_corpus_statistics(output, [a])


def test_numba_is_imported_only_where_ter_or_wer_is_computed():
    # importing numba takes about a second: web processes, which import the scoring package
    # but compute no TER, should not pay it
    script = "import sys, evalcore.scoring; print('numba' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
