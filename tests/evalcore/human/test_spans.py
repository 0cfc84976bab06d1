"""Span agreement against scikit-learn (F1 and Cohen's κ over the positions' labels) and a
hand-worked example; the degraded range of a bad reference and whether a marking finds it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, f1_score

from evalcore.human.spans import (
    degraded_range,
    finds,
    marked_positions,
    span_agreement,
)


def test_a_hand_worked_pair() -> None:
    # A text of 9 code points and its marker: positions 0..9.
    # a marks 2–5 and the marker (9–10): positions 2,3,4,9; b marks 3–7: positions 3,4,5,6.
    result = span_agreement([([(2, 5), (9, 10)], [(3, 7)], 9)])
    # both {3,4} = 2, only a {2,9} = 2, only b {5,6} = 2, neither 4 of 10.
    assert result.f1 == pytest.approx(2 * 2 / (4 + 4))
    p_o, p_e = 6 / 10, 0.4 * 0.4 + 0.6 * 0.6
    assert result.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert (result.n_pairs, result.n_both_clean, result.n_positions) == (1, 0, 10)


def test_clean_pairs_add_to_kappa_but_not_to_f1() -> None:
    alone = span_agreement([([(0, 2)], [(0, 3)], 5)])
    with_clean = span_agreement([([(0, 2)], [(0, 3)], 5), ([], [], 5)])
    assert with_clean.f1 == alone.f1
    assert with_clean.n_both_clean == 1
    assert with_clean.kappa != alone.kappa
    nothing = span_agreement([([], [], 5)])
    assert np.isnan(nothing.f1)
    assert np.isnan(nothing.kappa)


markings = st.integers(0, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(st.integers(0, n), st.integers(1, 4)), max_size=4),
        st.lists(st.tuples(st.integers(0, n), st.integers(1, 4)), max_size=4),
        st.just(n),
    )
)


def clip(marks: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    return [(s, min(s + w, n + 1)) for s, w in marks]


@settings(max_examples=200, deadline=None)
@given(st.lists(markings, min_size=1, max_size=5))
def test_pooled_agreement_equals_scikit_learns(pairs: list) -> None:  # type: ignore[type-arg]
    pairs = [(clip(a, n), clip(b, n), n) for a, b, n in pairs]
    labels_a = np.concatenate([marked_positions(a, n) for a, _b, n in pairs])
    labels_b = np.concatenate([marked_positions(b, n) for _a, b, n in pairs])
    result = span_agreement(pairs)
    if labels_a.any() or labels_b.any():
        assert result.f1 == pytest.approx(f1_score(labels_a, labels_b))
    if len(set(labels_a) | set(labels_b)) > 1:
        assert result.kappa == pytest.approx(cohen_kappa_score(labels_a, labels_b))


def test_a_span_outside_its_text_is_refused() -> None:
    with pytest.raises(ValueError, match="outside a text of 4"):
        marked_positions([(3, 6)], 4)


def test_the_degraded_range_and_whether_it_is_found() -> None:
    original = "Der Hund läuft schnell über die Wiese."
    degraded = "Der Hund Segel am Haus über die Wiese."
    start, end = degraded_range(original, degraded)
    assert (start, end) == (9, 22)
    assert degraded[start:end] == "Segel am Haus"
    assert finds([(start + 2, start + 4)], (start, end))
    assert finds([(0, start + 1)], (start, end))
    assert not finds([(0, start)], (start, end))
    assert not finds([(end, len(degraded) + 1)], (start, end))
    # A phrase that begins and ends with the letters it replaced: still whole words.
    assert degraded_range("Er läuft sehr schnell.", "Er lag am Haus schnell.") == (3, 14)
    assert degraded_range("猫がいる", "猫の家いる", whole_words=False) == (1, 3)
    # Appended after a one-word output.
    assert degraded_range("Ja", "Ja am Haus") == (2, 10)
    assert not finds([(0, 2)], degraded_range("Ja", "Ja"))
