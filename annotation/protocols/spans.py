"""What the error-span kinds (ESA, MQM) share: spans marked in the shown translation, each with a
severity (and, where the kind has them, a category), checked and stored the same way.

A span is ``{"start": s, "end": e, "severity": …, "category": …}`` with ``s`` and ``e`` offsets
in Unicode code points of the shown text (Python's string indices), ``0 ≤ s < e ≤ len(text)``.
One more position, ``[len(text), len(text) + 1)``, is the "missing content" marker shown after
the text: a span over it marks an omission. Spans of one output do not overlap; they are stored
in order of their start.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeGuard

import numpy as np
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.protocols.base import (
    AnswerPart,
    Criterion,
    Glossary,
    Protocol,
    SpanRow,
    Term,
)

SPANS = "spans"
_SPAN_FIELDS = frozenset({"start", "end", "severity", "category"})

SPAN_SCHEMA = {
    "type": "object",
    "properties": {
        "start": {"type": "integer", "minimum": 0},
        "end": {"type": "integer", "minimum": 1},
        "severity": {"type": "string"},
        "category": {"type": "string"},
    },
    "required": ["start", "end", "severity"],
}
# An output's error spans: a list, which the kind checks against the shown text.
SPANS_PART = AnswerPart(
    SPANS,
    {"type": "array", "items": SPAN_SCHEMA},
    gettext_lazy("A list of error spans is required."),
)


@dataclass(frozen=True)
class Severity:
    key: str
    label: Any
    # The key that gives a span this severity on the annotation page.
    shortcut: str
    # What the severity means, as the kind's guidelines define it (the annotation page shows
    # it beside the instructions, whatever the organizer adds).
    definition: Any = ""


@dataclass(frozen=True)
class Category:
    """One leaf of a kind's error typology: ``accuracy/omission`` under ``accuracy``."""

    key: str
    label: Any
    # What errors of this category are, as the kind's typology defines them.
    definition: Any = ""

    @property
    def parent(self) -> str:
        return self.key.split("/", 1)[0] if "/" in self.key else ""


MINOR = Severity("minor", gettext_lazy("Minor"), "1")
MAJOR = Severity("major", gettext_lazy("Major"), "2")
NEUTRAL = Severity("neutral", gettext_lazy("Neutral"), "3")


@dataclass(frozen=True)
class SpanProtocol(Protocol):
    """A kind whose annotators mark error spans in each shown output (and may answer criteria
    too: ESA's score). ``criteria`` are what the analysis reads; ``asked`` the criteria the
    screen asks (the others are worked out from the spans by ``derived_values``)."""

    severities: tuple[Severity, ...] = (MINOR, MAJOR)
    # The typology a span's category comes from; empty when spans carry no category.
    categories: tuple[Category, ...] = ()
    # The most spans one output may have (0: no limit).
    max_spans: int = 0
    asked: tuple[Criterion, ...] = ()
    # The categories a simulated (demo) rater gives minor errors.
    simulated_categories: tuple[str, ...] = ()
    # The typology's upper levels (``accuracy`` above ``accuracy/omission``), defined on the
    # annotation page above their categories; the heading of the typology there ("Error
    # categories" when empty) and a note under it (the typology's rules).
    category_groups: tuple[Category, ...] = ()
    typology_title: Any = ""
    typology_note: Any = ""
    marks_spans: bool = True
    answer_parts: tuple[AnswerPart, ...] = (SPANS_PART,)
    screen_template: Any = "annotation/screens/spans.html"
    keys_template: Any = "annotation/screens/spans_keys.html"
    screen_script: str = "annotation/screens/spans.js"

    @property
    def screen_scripts(self) -> tuple[str, ...]:
        """The scales' widgets too: the asked criteria (ESA's score) are shown as they are."""
        return ("annotation/screens/scales.js", self.screen_script)

    def criteria_for(self, n_outputs: int) -> tuple[Criterion, ...]:
        return self.asked

    def import_criteria(self) -> tuple[Criterion, ...]:
        return self.criteria

    def derived_values(self, spans: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        """The criteria worked out from an output's spans (MQM's score); none by default."""
        return {}

    def as_json(self) -> dict[str, Any]:
        """What the span editor needs: severities with their keys, categories, the limit."""
        return {
            "severities": [
                {"key": s.key, "label": str(s.label), "shortcut": s.shortcut}
                for s in self.severities
            ],
            "categories": [{"key": c.key, "label": str(c.label)} for c in self.categories],
            "maxSpans": self.max_spans,
        }

    def glossaries(self) -> tuple[Glossary, ...]:
        """The severities the kind defines, and its typology (folded: MQM's is long), each
        category under its group."""
        found = []
        defined = tuple(Term(s.label, s.definition) for s in self.severities if s.definition)
        if defined:
            found.append(Glossary("severities", _("Severities"), defined))
        if self.categories:
            found.append(
                Glossary(
                    "categories",
                    self.typology_title or _("Error categories"),
                    self._category_terms(),
                    folded=True,
                    note=self.typology_note,
                )
            )
        return tuple(found)

    def _category_terms(self) -> tuple[Term, ...]:
        groups = {g.key: g for g in self.category_groups}
        children: dict[str, list[Term]] = {}
        terms: list[Term | str] = []
        for category in self.categories:
            term = Term(category.label, category.definition)
            parent = category.parent
            if parent and parent in groups:
                if parent not in children:
                    children[parent] = []
                    terms.append(parent)
                children[parent].append(term)
            else:
                terms.append(term)
        return tuple(
            Term(groups[t].label, groups[t].definition, tuple(children[t]))
            if isinstance(t, str)
            else t
            for t in terms
        )

    def validate(
        self,
        answer: Mapping[str, Any],
        output_ids: Sequence[int],
        *,
        texts: Mapping[int, str] | None = None,
    ) -> tuple[dict[tuple[int, str], float], list[str]]:
        """The asked criteria as ``Protocol.validate`` checks them (the spans put aside), then
        every output's spans against its shown text; the values include the derived ones."""
        scores = {
            key: {c: v for c, v in given.items() if c != SPANS}
            if isinstance(given, Mapping)
            else given
            for key, given in answer.items()
        }
        values, errors = super().validate(scores, output_ids)
        for position, output_id in enumerate(output_ids, start=1):
            given = answer.get(str(output_id))
            if not isinstance(given, Mapping):
                continue
            text = (texts or {}).get(int(output_id))
            spans, problems = self.checked_spans(given.get(SPANS), text, position)
            errors += problems
            if not problems:
                for key, value in self.derived_values(spans).items():
                    values[(int(output_id), key)] = value
        return values, errors

    def checked_spans(
        self, raw: Any, text: str | None, position: int
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The spans of output ``position`` (from 1) in order of their start, and what is wrong
        with them, each problem naming its span."""
        if not isinstance(raw, list):
            return [], [_("Output %(n)d: the answer has no list of error spans.") % {"n": position}]
        if text is None:
            return [], [_("Output %(n)d: its text is unknown.") % {"n": position}]
        length = len(text)
        spans: list[dict[str, Any]] = []
        problems: list[str] = []
        for number, span in enumerate(raw, start=1):
            checked, problem = self._checked_span(span, length)
            if problem:
                name = _("Output %(n)d, span %(k)d") % {"n": position, "k": number}
                problems.append(f"{name}: {problem}")
            else:
                spans.append(checked)
        spans.sort(key=lambda s: (s["start"], s["end"]))
        for before, after in overlapping(spans):
            problems.append(
                _(
                    "Output %(n)d: the spans at characters %(a)s and %(b)s overlap; "
                    "spans may not overlap."
                )
                % {"n": position, "a": _where(before), "b": _where(after)}
            )
        if self.max_spans and len(raw) > self.max_spans:
            problems.append(
                _("Output %(n)d: at most %(max)d error spans, not %(count)d.")
                % {"n": position, "max": self.max_spans, "count": len(raw)}
            )
        return spans, problems

    def span_problem(self, span: Mapping[str, Any], length: int) -> str | None:
        """What is wrong with one span on a text of ``length`` characters (None: nothing), as
        :meth:`checked_spans` sees it: the judgment import checks its spans with it."""
        return self._checked_span(span, length)[1]

    @cached_property
    def _severity_keys(self) -> frozenset[str]:
        return frozenset(s.key for s in self.severities)

    @cached_property
    def _category_keys(self) -> frozenset[str]:
        return frozenset(c.key for c in self.categories)

    def _checked_span(self, span: Any, length: float) -> tuple[dict[str, Any], str | None]:
        if not isinstance(span, Mapping):
            return {}, _("a span is {start, end, severity}.")
        unknown = span.keys() - _SPAN_FIELDS
        if unknown:
            return {}, _("unknown field %(name)s.") % {"name": sorted(unknown)[0]}
        start, end = span.get("start"), span.get("end")
        if not (_whole(start) and _whole(end)):
            return {}, _("start and end must be whole numbers.")
        start, end = int(start), int(end)
        inside = 0 <= start < end <= length
        marker = start == length and end == length + 1
        if not (inside or marker):
            return {}, _(
                "characters %(start)d–%(end)d are not within the text of %(length)d "
                "characters (or its missing-content marker at %(length)d–%(after)d)."
            ) % {"start": start, "end": end, "length": length, "after": length + 1}
        severity = span.get("severity")
        # A list or an object is no key (and cannot be looked up in a set).
        if not isinstance(severity, str) or severity not in self._severity_keys:
            return {}, _("severity %(value)s is not one of %(choices)s.") % {
                "value": _quoted(severity),
                "choices": ", ".join(s.key for s in self.severities),
            }
        category = span.get("category") or ""
        if not isinstance(category, str):
            return {}, _("the category must be a string.")
        if self.categories and category not in self._category_keys:
            return {}, _("category %(value)s is not one of this protocol's categories.") % {
                "value": _quoted(category) if category else _("(none)")
            }
        if not self.categories and category:
            return {}, _("this protocol's spans have no category.")
        checked = {"start": start, "end": end, "severity": severity}
        if self.categories:
            checked["category"] = category
        return checked, None

    def stored_answer(
        self,
        values: Mapping[tuple[int, str], float],
        output_ids: Sequence[int],
        answer: Mapping[str, Any],
    ) -> dict[str, dict[str, Any]]:
        """The values by output, each with its spans in order (as validated)."""
        stored = super().stored_answer(values, output_ids, answer)
        for output_id in output_ids:
            raw = answer[str(output_id)][SPANS]
            spans = [self._checked_span(s, math.inf)[0] for s in raw]
            stored[str(output_id)][SPANS] = sorted(spans, key=lambda s: s["start"])
        return stored

    def span_rows(self, stored: Mapping[str, Mapping[str, Any]]) -> list[SpanRow]:
        """Rows without the shown text's length (0 here): the writer sets it from the text."""
        return [
            (int(output), s["start"], s["end"], 0, s["severity"], s.get("category", ""))
            for output, given in stored.items()
            for s in given.get(SPANS, ())
        ]

    def simulated_answer(
        self,
        output_ids: Sequence[int],
        qualities: Sequence[float],
        rng: np.random.Generator,
        *,
        careless: bool,
        texts: Sequence[str] = (),
        noticed: Sequence[tuple[int, int] | None] = (),
    ) -> dict[str, dict[str, Any]]:
        """The asked criteria as every kind simulates them, and error spans over words of
        ``texts``: more, and more of them major, the worse the output looks; a careful rater
        marks the ``noticed`` part (a bad reference's degraded words) first. Without texts,
        no spans."""
        answer: dict[str, dict[str, Any]] = dict(
            super().simulated_answer(output_ids, qualities, rng, careless=careless)
        )
        for i, (output_id, quality) in enumerate(zip(output_ids, qualities, strict=True)):
            text = texts[i] if i < len(texts) else ""
            seen = None if careless or i >= len(noticed) else noticed[i]
            answer.setdefault(str(output_id), {})[SPANS] = self._simulated_spans(
                text, quality, seen, rng, careless=careless
            )
        return answer

    def _simulated_spans(
        self,
        text: str,
        quality: float,
        noticed: tuple[int, int] | None,
        rng: np.random.Generator,
        *,
        careless: bool,
    ) -> list[dict[str, Any]]:
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        limit = self.max_spans or len(words) + 1
        # A careless rater marks a few words anywhere, whatever the output is like.
        badness = 0.5 if careless else min(max(1.0 - quality, 0.0), 1.0)
        wanted = min(int(rng.binomial(min(limit, 5), badness)), len(words))
        chosen = [noticed] if noticed and noticed[0] < noticed[1] else []
        target = max(wanted, len(chosen))
        for index in rng.permutation(len(words)):
            if len(chosen) >= target:
                break
            start, end = words[int(index)]
            if all(end <= a or b <= start for a, b in chosen):
                chosen.append((start, end))
        spans = []
        for start, end in sorted(chosen)[:limit]:
            major = (start, end) == noticed or rng.random() < badness * 0.7
            span: dict[str, Any] = {
                "start": start,
                "end": end,
                "severity": self.severities[1 if major else 0].key,
            }
            if self.categories:
                # A major error is the kind's first category (MQM: a mistranslation); a minor
                # one any of the categories the demo draws from.
                common = self.simulated_categories or (self.categories[0].key,)
                span["category"] = (
                    self.categories[0].key if major else common[int(rng.integers(len(common)))]
                )
            spans.append(span)
        return spans


def overlapping(spans: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """The neighbours that overlap among ``spans`` (in order of their start, then end): the
    spans of one output may not."""
    return [
        (before, after)
        for before, after in itertools.pairwise(spans)
        if after["start"] < before["end"]
    ]


def _whole(value: Any) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value == int(value)


def _quoted(value: Any) -> str:
    return f"“{value}”" if isinstance(value, str) else str(value)


def _where(span: Mapping[str, Any]) -> str:
    return f"{span['start']}–{span['end']}"
