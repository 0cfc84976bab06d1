"""Whether a tutorial answer meets its expectation, kind by kind, against verdicts worked out by
hand; and what an organizer's expectation may say."""

from __future__ import annotations

from annotation.protocols import PROTOCOLS
from annotation.tutorial.expectations import (
    check_met,
    expectation_lines,
    expectation_met,
    expectation_problems,
)

DA = PROTOCOLS["direct_assessment"]
AF = PROTOCOLS["adequacy_fluency"]
RANKING = PROTOCOLS["ranking"]
ESA = PROTOCOLS["esa"]
MQM = PROTOCOLS["mqm"]

TEXT = "The house is small and old."  # "small" is characters 13–18, "old" 23–26


def test_a_da_score_inside_the_range_meets_it_and_one_outside_names_both() -> None:
    expectation = {"scores": {"1": {"score": [0, 30]}}}
    assert expectation_met(DA, expectation, [TEXT], {(1, "score"): 30.0}, {}).met
    verdict = expectation_met(DA, expectation, [TEXT], {(1, "score"): 31.0}, {})
    assert not verdict.met
    assert verdict.notes == ["Translation 1: score 31, expected 0–30."]


def test_adequacy_and_fluency_ranges_are_checked_per_output_and_criterion() -> None:
    expectation = {
        "scores": {"1": {"adequacy": [1, 2]}, "2": {"adequacy": [4, 5], "fluency": [4, 5]}}
    }
    texts = ["Das Haus.", "The house."]
    good = {(1, "adequacy"): 2.0, (1, "fluency"): 5.0, (2, "adequacy"): 5.0, (2, "fluency"): 4.0}
    assert expectation_met(AF, expectation, texts, good, {}).met
    # Output 2's fluency 3 is the one miss (output 1's fluency is not constrained).
    bad = {**good, (2, "fluency"): 3.0, (1, "fluency"): 1.0}
    verdict = expectation_met(AF, expectation, texts, bad, {})
    assert verdict.notes == ["Translation 2: fluency 3, expected 4–5."]


def test_a_ranking_meets_the_order_only_with_strictly_better_ranks() -> None:
    expectation = {"order": [2, 1, 3]}
    texts = ["a b", "c d", "e f"]
    # Ranks 2, 1, 3: output 2 best, then 1, then 3 — as expected.
    assert expectation_met(
        RANKING, expectation, texts, {(1, "rank"): 2.0, (2, "rank"): 1.0, (3, "rank"): 3.0}, {}
    ).met
    # A tie of outputs 2 and 1 breaks the first pair only.
    verdict = expectation_met(
        RANKING, expectation, texts, {(1, "rank"): 1.0, (2, "rank"): 1.0, (3, "rank"): 3.0}, {}
    )
    assert verdict.notes == [
        "Translation 2 should be judged better than translation 1 (rank: you gave 1 and 1)."
    ]


def test_an_expected_span_is_met_by_an_overlapping_span_of_its_severity() -> None:
    expectation = {"spans": {"1": [{"start": 13, "end": 18, "severity": "major"}]}}
    # Characters 10–15 overlap 13–18.
    met = expectation_met(ESA, expectation, [TEXT], {}, {1: [(10, 15, "major", "")]})
    assert met.met
    # Right place, wrong severity; and a span that ends where it starts (10–13) misses.
    for span in [(13, 18, "minor", ""), (10, 13, "major", "")]:
        verdict = expectation_met(ESA, expectation, [TEXT], {}, {1: [span]})
        assert verdict.notes == [
            "Translation 1: an error should be marked over “small” (characters 13–18) "
            "(severity major); none of your marks covers it."
        ]


def test_esa_checks_the_score_and_the_spans_together() -> None:
    expectation = {
        "scores": {"1": {"score": [0, 50]}},
        "spans": {"1": [{"start": 23, "end": 26}]},
    }
    spans = {1: [(23, 26, "minor", "")]}
    assert expectation_met(ESA, expectation, [TEXT], {(1, "score"): 50.0}, spans).met
    assert len(expectation_met(ESA, expectation, [TEXT], {(1, "score"): 51.0}, {}).notes) == 2


def test_only_these_spans_refuses_a_span_elsewhere_and_no_span_expects_none() -> None:
    clean = {"spans": {"1": []}, "only_spans": True}
    assert expectation_met(ESA, clean, [TEXT], {}, {}).met
    verdict = expectation_met(ESA, clean, [TEXT], {}, {1: [(4, 9, "minor", "")]})
    assert verdict.notes == ["Translation 1: “house” is not an error here."]


def test_an_mqm_category_matches_its_subcategories_and_the_mqm_score_has_a_range() -> None:
    expectation = {
        "spans": {"1": [{"start": 13, "end": 18, "category": "accuracy"}]},
        "scores": {"1": {"mqm": [-5, -5]}},
    }
    spans = {1: [(13, 18, "major", "accuracy/mistranslation")]}
    assert expectation_met(MQM, expectation, [TEXT], {(1, "mqm"): -5.0}, spans).met
    fluency = {1: [(13, 18, "major", "fluency/grammar")]}
    assert not expectation_met(MQM, expectation, [TEXT], {(1, "mqm"): -5.0}, fluency).met


def test_an_attention_check_fails_when_the_damaged_copy_scores_no_lower() -> None:
    check = {"1": [13, 24]}
    damaged = "The house is the old dog old."
    # Scored 80 on the original and 80 on the damaged copy: not lower.
    verdict = check_met(DA, check, [damaged], {(1, "score"): 80.0}, {}, {(1, "score"): 80.0})
    assert verdict.notes == [
        "Translation 1 was damaged on purpose: “the old dog” (characters 13–24) was put in "
        "from another text.",
        "It should be judged worse than the same translation without the damage (an earlier "
        "item): you gave 80 here and 80 there.",
    ]
    assert check_met(DA, check, [damaged], {(1, "score"): 79.0}, {}, {(1, "score"): 80.0}).met


def test_an_attention_check_of_adequacy_and_fluency_needs_nothing_better_and_something_worse() -> (
    None
):
    check = {"1": [4, 9]}
    before = {(1, "adequacy"): 4.0, (1, "fluency"): 4.0}
    worse = {(1, "adequacy"): 2.0, (1, "fluency"): 4.0}
    mixed = {(1, "adequacy"): 2.0, (1, "fluency"): 5.0}
    assert check_met(AF, check, [TEXT], worse, {}, before).met
    assert not check_met(AF, check, [TEXT], mixed, {}, before).met


def test_a_ranking_attention_check_wants_the_damaged_output_ranked_worse() -> None:
    check = {"2": [4, 9]}
    texts = ["a b c", TEXT]
    before = {(1, "rank"): 2.0, (2, "rank"): 1.0}
    assert check_met(RANKING, check, texts, {(1, "rank"): 1.0, (2, "rank"): 2.0}, {}, before).met
    assert not check_met(
        RANKING, check, texts, {(1, "rank"): 2.0, (2, "rank"): 1.0}, {}, before
    ).met


def test_an_mqm_attention_check_needs_a_span_over_the_damage() -> None:
    check = {"1": [13, 24]}
    damaged = "The house is the old dog old."
    assert check_met(MQM, check, [damaged], {}, {1: [(17, 20, "minor", "style")]}, {}).met
    verdict = check_met(MQM, check, [damaged], {}, {1: [(0, 3, "minor", "style")]}, {})
    assert verdict.notes[-1] == "It needed an error marked over the damaged part."


def test_an_esa_attention_check_needs_both_a_span_and_a_lower_score() -> None:
    check = {"1": [13, 24]}
    damaged = "The house is the old dog old."
    span = {1: [(13, 16, "major", "")]}
    before = {(1, "score"): 90.0}
    assert check_met(ESA, check, [damaged], {(1, "score"): 40.0}, span, before).met
    assert not check_met(ESA, check, [damaged], {(1, "score"): 40.0}, {}, before).met
    assert not check_met(ESA, check, [damaged], {(1, "score"): 95.0}, span, before).met


def test_organizer_expectations_are_checked_against_the_kind() -> None:
    assert expectation_problems(DA, {"scores": {"1": {"score": [0, 30]}}}, [TEXT]) == []
    assert expectation_problems(DA, {"scores": {"1": {"score": [30, 0]}}}, [TEXT]) == [
        "“scores”: the score range must be [low, high] within 0–100."
    ]
    assert expectation_problems(DA, {"scores": {"2": {"score": [0, 1]}}}, [TEXT]) == [
        "“scores”: there is no output 2."
    ]
    assert expectation_problems(DA, {"spans": {"1": []}}, [TEXT]) == [
        "This protocol marks no error spans."
    ]
    assert expectation_problems(RANKING, {"order": [1, 1]}, ["a", "b"]) == [
        "“order” must list two or more different output numbers from 1 to 2."
    ]
    assert expectation_problems(
        ESA, {"spans": {"1": [{"start": 0, "end": 99, "severity": "major"}]}}, [TEXT]
    ) == ["An expected span must lie within the output's 27 characters."]
    assert expectation_problems(
        MQM, {"spans": {"1": [{"start": 0, "end": 3, "category": "nonsense"}]}}, [TEXT]
    ) == ["Unknown category nonsense."]
    # A severity or category of the wrong type is refused like an unknown one.
    assert expectation_problems(
        ESA, {"spans": {"1": [{"start": 0, "end": 3, "severity": ["major"]}]}}, [TEXT]
    ) == ["Unknown severity ['major']."]
    assert expectation_problems(
        MQM, {"spans": {"1": [{"start": 0, "end": 3, "category": {"a": 1}}]}}, [TEXT]
    ) == ["Unknown category {'a': 1}."]
    assert expectation_problems(DA, {}, [TEXT]) == [
        "Say what a good answer does: a score range, an order or spans."
    ]


def test_an_expectation_reads_as_words_on_the_organizers_page() -> None:
    expectation = {
        "scores": {"1": {"score": [0, 50]}},
        "spans": {"1": [{"start": 13, "end": 18, "severity": "major"}]},
        "only_spans": True,
    }
    assert expectation_lines(ESA, expectation, [TEXT]) == [
        "Translation 1: score 0–50",
        "Translation 1: an error over “small” (13–18) major",
        "No other errors marked",
    ]
    assert expectation_lines(RANKING, {"order": [2, 1]}, ["a", "b"]) == ["Better to worse: 2 › 1"]
    assert expectation_lines(DA, {"check": {"1": [4, 9]}}, [TEXT]) == [
        "Translation 1 damaged at “house” (4–9): judged worse"
    ]
