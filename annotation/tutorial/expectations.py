"""What a good answer to a tutorial item does, and whether an answer did it.

An expectation is JSON, the same in the organizer's form, an uploaded file and the API; outputs
are numbered from 1 in screen order:

- ``"scores": {"1": {"score": [0, 30]}}`` — output 1's score within 0–30 (both ends included),
  for any criterion the kind asks or works out (adequacy, fluency, DA's or ESA's score, MQM's);
- ``"order": [2, 1]`` — output 2 judged better than output 1 on the kind's first asked criterion
  (for ranking: a strictly better rank), for each pair of neighbours in the list;
- ``"spans": {"1": [{"start": 4, "end": 9, "severity": "major"}]}`` — output 1 has an error span
  overlapping characters 4–9 (code points of the output), with that severity (and category,
  where given; a category also matches its subcategories) if given; with ``"only_spans": true``
  every span marked must overlap an expected one (``"spans": {"1": []}`` then expects none).

An attention check (a degraded copy of another tutorial item) has ``"check": {"1": [s, e]}``:
the degraded range of each damaged output. It expects each damaged output judged worse than the
annotator judged it on the original (on the kind's asked criteria: nowhere better, somewhere
worse) and, for a kind that marks spans, a span over the damaged part. Nothing here names a
protocol kind: what an expectation may contain follows from the kind's criteria and spans.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from annotation.protocols import Criterion, Protocol
from evalcore.human.spans import finds

SCORES = "scores"
ORDER = "order"
SPANS = "spans"
ONLY_SPANS = "only_spans"
CHECK = "check"
KEYS = {SCORES, ORDER, SPANS, ONLY_SPANS}

# An answer as the tutorial reads it: values by (output number, criterion key) and spans by
# output number as (start, end, severity, category).
Values = Mapping[tuple[int, str], float]
Spans = Mapping[int, Sequence[tuple[int, int, str, str]]]


@dataclass(frozen=True)
class Verdict:
    """Whether an answer met its item's expectation, and what it missed (one line each)."""

    met: bool
    notes: list[str] = field(default_factory=list)


def range_criteria(protocol: Protocol, n_outputs: int) -> dict[str, Criterion]:
    """The criteria a score range may name: those the screen asks and those worked out."""
    found = {c.key: c for c in protocol.criteria}
    found.update({c.key: c for c in protocol.criteria_for(n_outputs)})
    return found


def expectation_problems(protocol: Protocol, expectation: Any, texts: Sequence[str]) -> list[str]:
    """What is wrong with an organizer's ``expectation`` for a screen showing ``texts`` (empty
    when nothing is): unknown keys, outputs that are not there, ranges outside a scale, spans
    outside a text or with a severity or category the kind does not have."""
    if not isinstance(expectation, Mapping):
        return [_("The expectation must be an object.")]
    problems: list[str] = []
    unknown = set(expectation) - KEYS
    if unknown:
        problems.append(_("Unknown expectation: %(name)s.") % {"name": sorted(unknown)[0]})
    if not any(expectation.get(k) is not None for k in (SCORES, ORDER, SPANS)):
        problems.append(_("Say what a good answer does: a score range, an order or spans."))
    problems += _score_problems(protocol, expectation.get(SCORES), len(texts))
    problems += _order_problems(expectation.get(ORDER), len(texts))
    problems += _span_problems(protocol, expectation.get(SPANS), texts)
    return problems


def _output(key: Any, n_outputs: int) -> int | None:
    try:
        number = int(key)
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= n_outputs and str(number) == str(key) else None


def _score_problems(protocol: Protocol, scores: Any, n_outputs: int) -> list[str]:
    if scores is None:
        return []
    if not isinstance(scores, Mapping):
        return [_("“scores” must map output numbers to ranges.")]
    criteria = range_criteria(protocol, n_outputs)
    problems = []
    for key, ranges in scores.items():
        if _output(key, n_outputs) is None or not isinstance(ranges, Mapping):
            problems.append(_("“scores”: there is no output %(key)s.") % {"key": key})
            continue
        for name, bounds in ranges.items():
            criterion = criteria.get(name)
            if criterion is None:
                problems.append(_("“scores”: unknown criterion %(name)s.") % {"name": name})
                continue
            if not (
                isinstance(bounds, list)
                and len(bounds) == 2
                and all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds)
                and criterion.minimum <= bounds[0] <= bounds[1] <= criterion.maximum
            ):
                problems.append(
                    _("“scores”: the %(name)s range must be [low, high] within %(lo)d–%(hi)d.")
                    % {"name": name, "lo": criterion.minimum, "hi": criterion.maximum}
                )
    return problems


def _order_problems(order: Any, n_outputs: int) -> list[str]:
    if order is None:
        return []
    if (
        not isinstance(order, list)
        or len(order) < 2
        or any(_output(str(o), n_outputs) is None for o in order)
        or len(set(order)) != len(order)
    ):
        return [
            _("“order” must list two or more different output numbers from 1 to %(n)d.")
            % {"n": n_outputs}
        ]
    return []


def _span_problems(protocol: Protocol, spans: Any, texts: Sequence[str]) -> list[str]:
    if spans is None:
        return []
    if not protocol.marks_spans:
        return [_("This protocol marks no error spans.")]
    if not isinstance(spans, Mapping):
        return [_("“spans” must map output numbers to lists of spans.")]
    problems = []
    for key, given in spans.items():
        number = _output(key, len(texts))
        if number is None or not isinstance(given, list):
            problems.append(_("“spans”: there is no output %(key)s.") % {"key": key})
            continue
        for span in given:
            problems += _one_span_problems(protocol, span, len(texts[number - 1]))
    return problems


def _one_span_problems(protocol: Protocol, span: Any, length: int) -> list[str]:
    if not isinstance(span, Mapping) or set(span) - {"start", "end", "severity", "category"}:
        return [_("An expected span is {start, end, severity, category}.")]
    start, end = span.get("start"), span.get("end")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= length + 1):
        return [
            _("An expected span must lie within the output's %(n)d characters.") % {"n": length}
        ]
    severities = {s.key for s in getattr(protocol, "severities", ())}
    severity = span.get("severity")
    # A list or an object is no key (and cannot be looked up in a set).
    if severity is not None and (not isinstance(severity, str) or severity not in severities):
        return [_("Unknown severity %(name)s.") % {"name": severity}]
    categories = {c.key for c in getattr(protocol, "categories", ())}
    category = span.get("category")
    if category is not None and not isinstance(category, str):
        return [_("Unknown category %(name)s.") % {"name": category}]
    if category is not None and not any(_category_matches(c, category) for c in categories):
        return [_("Unknown category %(name)s.") % {"name": category}]
    return []


def _category_matches(given: str, expected: str) -> bool:
    return given == expected or given.startswith(expected + "/")


def _shown(value: float) -> str:
    return f"{value:g}"


def expectation_met(
    protocol: Protocol,
    expectation: Mapping[str, Any],
    texts: Sequence[str],
    values: Values,
    spans: Spans,
) -> Verdict:
    """Whether a (valid) answer meets an organizer's expectation, with a note per miss."""
    notes = _score_notes(protocol, expectation.get(SCORES) or {}, len(texts), values)
    if expectation.get(ORDER):
        notes += _order_notes(protocol, expectation[ORDER], len(texts), values)
    if expectation.get(SPANS) is not None:
        notes += _span_notes(
            expectation[SPANS], texts, spans, only=bool(expectation.get(ONLY_SPANS))
        )
    return Verdict(not notes, notes)


def _score_notes(
    protocol: Protocol, scores: Mapping[str, Any], n_outputs: int, values: Values
) -> list[str]:
    criteria = range_criteria(protocol, n_outputs)
    notes = []
    for key, ranges in scores.items():
        for name, (low, high) in ranges.items():
            value = values.get((int(key), name))
            if value is None or not low <= value <= high:
                notes.append(
                    _("Translation %(n)s: %(criterion)s %(value)s, expected %(lo)s–%(hi)s.")
                    % {
                        "n": key,
                        "criterion": str(criteria[name].label).lower(),
                        "value": "—" if value is None else _shown(value),
                        "lo": _shown(low),
                        "hi": _shown(high),
                    }
                )
    return notes


def _better(criterion: Criterion, a: float, b: float) -> bool:
    return a > b if criterion.higher_is_better else a < b


def _order_notes(
    protocol: Protocol, order: Sequence[int], n_outputs: int, values: Values
) -> list[str]:
    criterion = protocol.criteria_for(n_outputs)[0]
    notes = []
    for first, second in itertools.pairwise(order):
        a, b = values.get((int(first), criterion.key)), values.get((int(second), criterion.key))
        if a is None or b is None or not _better(criterion, a, b):
            notes.append(
                _(
                    "Translation %(a)s should be judged better than translation %(b)s "
                    "(%(criterion)s: you gave %(va)s and %(vb)s)."
                )
                % {
                    "a": first,
                    "b": second,
                    "criterion": str(criterion.label).lower(),
                    "va": "—" if a is None else _shown(a),
                    "vb": "—" if b is None else _shown(b),
                }
            )
    return notes


def _span_notes(
    expected: Mapping[str, Any], texts: Sequence[str], spans: Spans, *, only: bool
) -> list[str]:
    notes = []
    for key, wanted in expected.items():
        number = int(key)
        text = texts[number - 1]
        given = list(spans.get(number, ()))
        for span in wanted:
            if not any(_covers(span, g) for g in given):
                notes.append(_missed(number, text, span))
        if only:
            for start, end, _severity, _category in given:
                if not any(start < s["end"] and s["start"] < end for s in wanted):
                    notes.append(
                        _("Translation %(n)d: “%(text)s” is not an error here.")
                        % {"n": number, "text": _excerpt(text, start, end)}
                    )
    return notes


def _covers(span: Mapping[str, Any], given: tuple[int, int, str, str]) -> bool:
    start, end, severity, category = given
    if not (start < span["end"] and span["start"] < end):
        return False
    if span.get("severity") is not None and severity != span["severity"]:
        return False
    return span.get("category") is None or _category_matches(category, span["category"])


def _excerpt(text: str, start: int, end: int) -> str:
    return text[start:end] if start < len(text) else _("missing content")


def _missed(number: int, text: str, span: Mapping[str, Any]) -> str:
    detail = ""
    if span.get("severity"):
        detail = _(" (severity %(severity)s)") % {"severity": span["severity"]}
    if span.get("category"):
        detail += _(" (category %(category)s)") % {"category": span["category"]}
    return _(
        "Translation %(n)d: an error should be marked over “%(text)s” (characters "
        "%(start)d–%(end)d)%(detail)s; none of your marks covers it."
    ) % {
        "n": number,
        "text": _excerpt(text, span["start"], span["end"]),
        "start": span["start"],
        "end": span["end"],
        "detail": detail,
    }


def check_met(
    protocol: Protocol,
    check: Mapping[str, Sequence[int]],
    texts: Sequence[str],
    values: Values,
    spans: Spans,
    original: Values | None,
) -> Verdict:
    """An attention check: each damaged output judged worse than the same annotator judged it
    on the original item (``original``'s values; None when that answer is not there) and, for
    a kind that marks spans, marked over the damaged part. A failed check's notes name the
    damaged part and say what was missed."""
    criteria = protocol.criteria_for(len(texts))
    notes = []
    for key, (start, end) in check.items():
        number = int(key)
        missed = []
        if criteria and original is not None:
            copy = [values.get((number, c.key)) for c in criteria]
            before = [original.get((number, c.key)) for c in criteria]
            pairs = [(c, a, b) for c, a, b in zip(criteria, copy, before, strict=True)]
            known = [(c, a, b) for c, a, b in pairs if a is not None and b is not None]
            worse = any(_better(c, b, a) for c, a, b in known)
            never_better = not any(_better(c, a, b) for c, a, b in known)
            if not (worse and never_better):
                missed.append(
                    _(
                        "It should be judged worse than the same translation without the "
                        "damage (an earlier item): you gave %(copy)s here and %(original)s there."
                    )
                    % {
                        "copy": ", ".join("—" if a is None else _shown(a) for _c, a, _b in pairs),
                        "original": ", ".join(
                            "—" if b is None else _shown(b) for _c, _a, b in pairs
                        ),
                    }
                )
        if protocol.marks_spans and not finds(
            [(s, e) for s, e, _sev, _cat in spans.get(number, ())], (start, end)
        ):
            missed.append(_("It needed an error marked over the damaged part."))
        if missed:
            notes.append(
                _(
                    "Translation %(n)d was damaged on purpose: “%(text)s” (characters "
                    "%(start)d–%(end)d) was put in from another text."
                )
                % {
                    "n": number,
                    "text": _excerpt(texts[number - 1], start, end),
                    "start": start,
                    "end": end,
                }
            )
            notes += missed
    return Verdict(not notes, notes)


def expectation_lines(
    protocol: Protocol, expectation: Mapping[str, Any], texts: Sequence[str]
) -> list[str]:
    """An expectation in words, a line per part (the organizer's page lists them)."""
    criteria = range_criteria(protocol, len(texts))
    lines = []
    for key, ranges in (expectation.get(SCORES) or {}).items():
        for name, (low, high) in ranges.items():
            label = str(criteria[name].label).lower() if name in criteria else name
            lines.append(
                _("Translation %(n)s: %(criterion)s %(lo)s–%(hi)s")
                % {"n": key, "criterion": label, "lo": _shown(low), "hi": _shown(high)}
            )
    if expectation.get(ORDER):
        lines.append(
            _("Better to worse: %(order)s") % {"order": " › ".join(map(str, expectation[ORDER]))}
        )
    for key, spans in (expectation.get(SPANS) or {}).items():
        text = texts[int(key) - 1] if 0 < int(key) <= len(texts) else ""
        for span in spans:
            detail = " ".join(str(span[k]) for k in ("severity", "category") if span.get(k))
            lines.append(
                _("Translation %(n)s: an error over “%(text)s” (%(start)d–%(end)d) %(detail)s")
                % {
                    "n": key,
                    "text": _excerpt(text, span["start"], span["end"]),
                    "start": span["start"],
                    "end": span["end"],
                    "detail": detail,
                }
            )
    if expectation.get(ONLY_SPANS):
        lines.append(_("No other errors marked"))
    for key, (start, end) in (expectation.get(CHECK) or {}).items():
        text = texts[int(key) - 1] if 0 < int(key) <= len(texts) else ""
        lines.append(
            _("Translation %(n)s damaged at “%(text)s” (%(start)d–%(end)d): judged worse")
            % {"n": key, "text": _excerpt(text, start, end), "start": start, "end": end}
        )
    return lines
