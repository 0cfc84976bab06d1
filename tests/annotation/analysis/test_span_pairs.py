"""Pooled κ over pairs of markings depends on which side of each pair a marking is on, so the
span summary fixes the sides (the annotator with the lower id first) instead of taking them in
the order the database returns the rows: the same judgments give the same κ whatever that
order."""

from __future__ import annotations

from annotation.analysis.spans import _inter_pairs
from evalcore.human.spans import span_agreement


def test_the_inter_annotator_kappa_does_not_depend_on_the_order_of_the_rows() -> None:
    # Three annotators (ids 7, 3, 5) on two outputs; 3 marks much more than the others.
    per_output = {
        10: [(7, [(0, 2)]), (3, [(0, 6), (8, 9)]), (5, [])],
        11: [(5, [(1, 2)]), (7, []), (3, [(0, 4)])],
    }
    lengths = {10: 12, 11: 9}
    reordered = {o: list(reversed(marks)) for o, marks in per_output.items()}
    kept = span_agreement(_inter_pairs(per_output, lengths))
    turned = span_agreement(_inter_pairs(reordered, lengths))
    assert kept == turned
    # Without fixed sides the two orders give two values of κ (F1 is symmetric and agrees).
    naive = span_agreement(
        (first, second, lengths[o])
        for o, marks in reordered.items()
        for i, (a, first) in enumerate(marks)
        for b, second in marks[i + 1 :]
    )
    assert naive.f1 == kept.f1
    assert naive.kappa != kept.kappa
