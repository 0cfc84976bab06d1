"""The error-span kinds' answers on their own: spans within the shown text (offsets in code
points, the missing-content marker after it), in the kind's severities and categories, without
overlap and within the limit, every problem naming its span; MQM's score as the weighted sum of
Freitag et al. (2021), worked out here by hand."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.protocols import ESA, MQM, PROTOCOLS
from annotation.protocols.mqm import Weights, mqm_score

TEXT = "Das Haus ist grün 😀 und groß."  # 29 code points (the emoji is one), 30 UTF-16 units
OUT = 7


def esa(spans: Any, score: Any = 60) -> tuple[dict[tuple[int, str], float], list[str]]:
    return PROTOCOLS[ESA].validate(
        {str(OUT): {"score": score, "spans": spans}}, [OUT], texts={OUT: TEXT}
    )


def mqm(spans: Any) -> tuple[dict[tuple[int, str], float], list[str]]:
    return PROTOCOLS[MQM].validate({str(OUT): {"spans": spans}}, [OUT], texts={OUT: TEXT})


def span(start: int, end: int, severity: str = "minor", **more: str) -> dict[str, Any]:
    return {"start": start, "end": end, "severity": severity, **more}


def test_the_text_is_measured_in_code_points() -> None:
    assert len(TEXT) == 29
    assert len(TEXT.encode("utf-16-le")) // 2 == 30
    assert TEXT[18:19] == "😀"
    assert TEXT[24:28] == "groß"


def test_an_esa_answer_is_its_score_and_its_spans() -> None:
    values, errors = esa([span(24, 28, "major"), span(0, 3)])
    assert errors == []
    assert values == {(OUT, "score"): 60.0}
    stored = PROTOCOLS[ESA].stored_answer(
        values, [OUT], {str(OUT): {"score": 60, "spans": [span(24, 28, "major"), span(0, 3)]}}
    )
    # In order of their start; the score beside them.
    assert stored == {str(OUT): {"score": 60.0, "spans": [span(0, 3), span(24, 28, "major")]}}
    rows = PROTOCOLS[ESA].span_rows(stored)
    assert rows == [(OUT, 0, 3, 0, "minor", ""), (OUT, 24, 28, 0, "major", "")]


def test_no_spans_is_an_answer_but_no_list_is_not() -> None:
    assert esa([]) == ({(OUT, "score"): 60.0}, [])
    _values, errors = PROTOCOLS[ESA].validate({str(OUT): {"score": 60}}, [OUT], texts={OUT: TEXT})
    assert errors == ["Output 1: the answer has no list of error spans."]


def test_the_score_is_still_asked() -> None:
    _values, errors = esa([], score=None)
    assert errors == ["Output 1: choose a score."]


def test_the_missing_content_marker_is_one_position_after_the_text() -> None:
    assert esa([span(29, 30, "major")])[1] == []
    _values, errors = esa([span(28, 30)])
    assert errors == [
        "Output 1, span 1: characters 28–30 are not within the text of 29 characters (or its "
        "missing-content marker at 29–30)."
    ]


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (span(5, 5), "characters 5–5 are not within the text"),
        (span(-1, 3), "characters -1–3 are not within the text"),
        (span(0, 31), "characters 0–31 are not within the text"),
        (span(0, 2.5), "start and end must be whole numbers."),  # type: ignore[arg-type]
        (span(0, True), "start and end must be whole numbers."),  # type: ignore[arg-type]
        (span(0, 3, "critical"), "severity “critical” is not one of minor, major."),
        (span(0, 3, ["minor"]), "severity ['minor'] is not one of minor, major."),  # type: ignore[arg-type]
        (span(0, 3, category=["style"]), "the category must be a string."),  # type: ignore[arg-type]
        (span(0, 3, category="style"), "this protocol's spans have no category."),
        ({"start": 0, "end": 3, "severity": "minor", "colour": "red"}, "unknown field colour."),
        ("0-3", "a span is {start, end, severity}."),
    ],
)
def test_a_bad_span_is_named_with_what_is_wrong(bad: Any, problem: str) -> None:
    _values, errors = esa([span(0, 3), bad])
    assert len(errors) == 1
    assert errors[0].startswith("Output 1, span 2: ")
    assert problem in errors[0]


def test_spans_may_not_overlap() -> None:
    _values, errors = esa([span(4, 8), span(0, 5)])
    assert errors == [
        "Output 1: the spans at characters 0–5 and 4–8 overlap; spans may not overlap."
    ]
    # Touching is not overlapping.
    assert esa([span(4, 8), span(0, 4)])[1] == []


def test_an_mqm_span_needs_a_category_of_the_typology() -> None:
    _values, errors = mqm([span(0, 3)])
    assert errors == ["Output 1, span 1: category (none) is not one of this protocol's categories."]
    _values, errors = mqm([span(0, 3, category="accuracy/wrong")])
    assert "category “accuracy/wrong”" in errors[0]
    _values, errors = mqm([span(0, 3, "neutral", category="style")])
    assert errors == []


def test_mqm_allows_five_errors_per_output() -> None:
    five = [span(4 * i, 4 * i + 3, category="style") for i in range(5)]
    assert mqm(five)[1] == []
    _values, errors = mqm([*five, span(21, 24, category="style")])
    assert errors == ["Output 1: at most 5 error spans, not 6."]


def test_the_mqm_score_is_the_sum_of_googles_weights() -> None:
    spans = [
        span(0, 3, "major", category="accuracy/mistranslation"),  # 5
        span(4, 8, "minor", category="fluency/punctuation"),  # 0.1
        span(9, 12, "minor", category="style"),  # 1
        span(13, 17, "neutral", category="fluency/grammar"),  # 0
        span(29, 30, "minor", category="non-translation"),  # 25, whatever the severity
    ]
    values, errors = mqm(spans)
    assert errors == []
    # The analysis reads it negated, as WMT releases MQM: higher is better.
    assert values == {(OUT, "mqm"): pytest.approx(-31.1, abs=1e-12)}
    assert mqm_score(spans, Weights()) == pytest.approx(31.1, abs=1e-12)
    # A major punctuation error weighs as any major one; other weights are the protocol's.
    assert mqm_score([span(0, 1, "major", category="fluency/punctuation")], Weights()) == 5.0
    heavier = Weights(major=10.0, minor_punctuation=0.5)
    assert mqm_score(spans, heavier) == pytest.approx(10 + 0.5 + 1 + 0 + 25)
    assert mqm([])[0] == {(OUT, "mqm"): 0.0}


def test_the_editor_gets_the_kinds_severities_and_categories() -> None:
    esa_json = PROTOCOLS[ESA].as_json()
    assert [s["key"] for s in esa_json["severities"]] == ["minor", "major"]
    assert esa_json["categories"] == []
    assert esa_json["maxSpans"] == 0
    mqm_json = PROTOCOLS[MQM].as_json()
    assert [s["shortcut"] for s in mqm_json["severities"]] == ["1", "2", "3"]
    assert len(mqm_json["categories"]) == 16
    # MQM asks nothing but the spans; ESA asks its score after them.
    assert PROTOCOLS[MQM].criteria_for(1) == ()
    assert [c.key for c in PROTOCOLS[ESA].criteria_for(1)] == ["score"]
