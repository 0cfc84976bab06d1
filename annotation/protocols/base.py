"""What every protocol kind is made of: criteria, modes, and the protocol itself (its screen,
its answers and their validation); each kind is one module of this package.

One generic task / item / judgment model serves every protocol; a protocol is data here (criteria,
scales with their labels, how many outputs a screen shows) plus one validation function. Views,
templates and the JavaScript read these definitions instead of being copied per protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy as _

from evalcore.human.normalisation import Space


@dataclass(frozen=True)
class Criterion:
    """One question asked about every shown output, answered on an integer scale."""

    key: str
    label: Any
    minimum: int
    maximum: int
    # Labels of scale points (Koehn Fig. 8.2 for adequacy and fluency); empty for a slider.
    scale: Mapping[int, Any] = field(default_factory=dict)
    higher_is_better: bool = True
    needs_source: bool = True

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": str(self.label),
            "min": self.minimum,
            "max": self.maximum,
            "scale": [{"value": v, "label": str(text)} for v, text in sorted(self.scale.items())],
            "higherIsBetter": self.higher_is_better,
        }


SET_FOCUSED_SCORE = _("set the focused score")

RANK = Criterion("rank", _("Rank"), 1, 5, {1: _("Best"), 5: _("Worst")}, higher_is_better=False)


@dataclass(frozen=True)
class Mode:
    key: str
    label: Any
    shows_source: bool
    shows_reference: bool


BILINGUAL = Mode("bilingual", _("Bilingual: show the source"), True, False)
MONOLINGUAL = Mode("monolingual", _("Monolingual: show a reference"), False, True)
SOURCE_BASED = Mode("source", _("Source-based"), True, False)
REFERENCE_BASED = Mode("reference", _("Reference-based"), False, True)


@dataclass(frozen=True)
class NumberSetting:
    """A number an organizer sets for a protocol of a kind (MQM's weights): its key in the
    kind's settings, its label and default; never negative."""

    key: str
    label: Any
    default: float


# JSON types of a value as an answer part's schema names them.
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "array": list,
    "object": dict,
    "string": str,
    "boolean": bool,
}


@dataclass(frozen=True)
class AnswerPart:
    """A part of an output's answer that is not a criterion's number (an error-span kind's
    ``spans``, a post-editing kind's edited text): its key beside the criteria in the output's
    answer, the JSON schema of its value (the API documents it), and the message for a value
    of another JSON type. The submit takes such a value as sent; the kind checks it in
    ``validate``. Kinds that share a key share its part (the registry checks it)."""

    key: str
    schema: Mapping[str, Any] = field(hash=False)
    invalid: Any = ""

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` has the JSON type of the part's schema."""
        expected = _JSON_TYPES.get(self.schema.get("type", ""))
        return expected is not None and type(value) is expected


@dataclass(frozen=True)
class Term:
    """A word the annotation page defines for a kind (a severity, an error category), with
    the terms under it (a group's categories)."""

    label: Any
    definition: Any
    children: tuple[Term, ...] = ()


@dataclass(frozen=True)
class Glossary:
    """Terms the annotation page defines under a heading, beside the kind's instructions;
    ``folded`` ones in a part the annotator opens (a long typology)."""

    key: str
    title: Any
    terms: tuple[Term, ...]
    folded: bool = False
    note: Any = ""


# One error span as a judgment stores it: (output id, start, end, length of the shown text,
# severity, category); offsets are code points of the shown text.
SpanRow = tuple[int, int, int, int, str, str]

# How a kind's judgments become analysis tables: the key of an analysis family
# (annotation/analysis/families/registry.py), one score per shown output and criterion by
# default, or comparisons between the outputs of one screen (from their ranks).
SCORES = "scores"
PAIRWISE = "pairwise"

# A protocol config's settings key that says how its stored scores were given: "standardised"
# for scores imported as z-scores (a release with standardised scores only), which the analysis
# takes as given (annotation/analysis/scores.py); absent for raw scores.
SCORES_SETTING = "scores"
SCORES_STANDARDISED = "standardised"


@dataclass(frozen=True)
class Protocol:
    """A protocol kind: its criteria and modes, its screen (a template part that renders the
    shown outputs with their questions, and the JavaScript module that makes those questions
    answerable), how an answer is validated, what its QC items degrade, how imported judgments
    are checked, and which analysis family turns its judgments into tables. Everything outside
    ``annotation/protocols`` asks the kind through these attributes and methods; none of it
    names a kind."""

    key: str
    name: Any
    criteria: tuple[Criterion, ...]
    modes: tuple[Mode, ...]
    single_output: bool = False  # one output per screen whatever k says
    # The k a new config of this kind starts with (the setup form and the API fill it in).
    default_outputs: int = 5
    # The space the analysis ranks the kind's systems in unless the campaign chose one
    # (AnalysisSettings.space "kind"): z-scores for direct assessment and the scales, as WMT
    # ranks DA; raw points for the error-span kinds, as WMT ranks ESA and Google MQM.
    analysis_space: Space = "z"
    # The most outputs a screen may show: a rank is typed as one digit on the annotation page.
    max_outputs: int | None = None
    instructions: Any = ""
    # The kind's name in a word or two where a badge or heading names it ("ESA"); its ``name``
    # when empty.
    short_name: Any = ""
    # The screen may ask for fluency first, without the source, then show it (a config option).
    fluency_first_allowed: bool = False
    # A config may show document screens: one system's translation of consecutive segments of
    # a document, one answer per segment (a kind that judges one output at a time).
    document_screens_allowed: bool = False
    analysis: str = SCORES
    # The fewest texts a screen shows: a segment with fewer distinct texts gets no screen (at
    # least what the kind's analysis family compares, which a test checks).
    min_outputs: int = 1
    # Whether an imported row must say which screen it was on: answers that compare the
    # outputs of a screen mean nothing without it.
    imports_need_screens: bool = False
    # The screen: the template part that renders the shown outputs and their questions, the
    # part that lists its keyboard shortcuts, the script (a static path) that registers the
    # widgets its questions use, and what the digits do on it. A template part may be a name
    # or a compiled template.
    screen_template: Any = "annotation/screens/scales.html"
    keys_template: Any = "annotation/screens/scales_keys.html"
    screen_script: str = "annotation/screens/scales.js"
    digit_hint: Any = SET_FOCUSED_SCORE

    @property
    def screen_scripts(self) -> tuple[str, ...]:
        """Every script the screen needs, in order: the kind's own, and any whose widgets its
        screen borrows."""
        return (self.screen_script,)

    # The numbers an organizer may set for a protocol of this kind (the setup page's form
    # asks for them when the kind is chosen); a protocol config stores them in its settings.
    number_settings: tuple[NumberSetting, ...] = ()

    def settings_json(self, numbers: Mapping[str, float]) -> dict[str, Any]:
        """A config's settings from the numbers of :attr:`number_settings` (by key)."""
        return {}

    def configured(self, settings: Mapping[str, Any]) -> Protocol:
        """The kind as a config with these ``settings`` runs it (itself when it has none)."""
        return self

    def current_settings(self) -> dict[str, Any]:
        """The settings this kind runs with, as a config stores them (for reports and APIs)."""
        return {}

    def settings_shown(self) -> list[tuple[str, str]]:
        """The numbers this kind runs with, as (label, value as text), for pages."""
        return []

    def glossaries(self) -> tuple[Glossary, ...]:
        """What the annotation page defines beside the kind's instructions (none by default;
        the error-span kinds define their severities and categories)."""
        return ()

    def mode(self, key: str) -> Mode:
        for mode in self.modes:
            if mode.key == key:
                return mode
        raise KeyError(key)

    def outputs_per_screen(self, k: int) -> int:
        return 1 if self.single_output else k

    def criteria_for(self, n_outputs: int) -> tuple[Criterion, ...]:
        """The criteria with their scales fitted to a screen of ``n_outputs`` outputs (a kind
        whose scale depends on the screen, as ranks do, overrides this)."""
        return self.criteria

    def histogram_criteria(self) -> tuple[Criterion, ...]:
        """The criteria whose answers are comparable across screens, so that a histogram of
        them says something (the dashboard's answer distributions)."""
        return self.criteria

    def degraded_positions(self, n_outputs: int, rng: np.random.Generator) -> list[int]:
        """Which of a screen's ``n_outputs`` outputs a bad-reference QC copy degrades (the
        others are repeated as they were). Outputs judged one by one are all degraded."""
        return list(range(n_outputs))

    # Imported judgments (annotation.judgment_import) are checked through these two.
    def import_criteria(self) -> tuple[Criterion, ...]:
        """The criteria an imported row may name, with the widest scale a screen gives."""
        return self.criteria_for(self.max_outputs or 1)

    def import_value_problem(
        self, criterion: Criterion, value: float, *, scale_hint: str = ""
    ) -> str | None:
        """What is wrong with an imported value of ``criterion`` on its own (None if nothing);
        ``scale_hint`` follows a value outside the scale (what the file format suggests). A
        value that depends on its screen is checked with :meth:`screen_value_problem`."""
        if not criterion.minimum <= value <= criterion.maximum:
            return (
                f"score {value:g} is outside the {criterion.key} scale "
                f"{criterion.minimum}–{criterion.maximum}{scale_hint}"
            )
        return None

    def screen_value_problem(self, criterion: str, value: float, n_outputs: int) -> str | None:
        """The value, named as the annotator gave it ("rank 6"), if it cannot be on a screen of
        ``n_outputs`` outputs; None if it can."""
        return None

    def standardised_import_problem(self) -> str | None:
        """Why this kind's judgments cannot be imported as standardised (z) scores, which the
        analysis takes as given (annotation/judgment_import/standardised.py); None: they can."""
        return None

    def simulated_answer(
        self,
        output_ids: Sequence[int],
        qualities: Sequence[float],
        rng: np.random.Generator,
        *,
        careless: bool,
        texts: Sequence[str] = (),
        noticed: Sequence[tuple[int, int] | None] = (),
    ) -> dict[str, dict[str, float]]:
        """What a simulated rater (the demo's) answers for outputs it perceives at
        ``qualities`` (0 worst, 1 best): every criterion on its scale, with a little noise per
        criterion unless the rater is careless. ``texts`` (the outputs' texts) and ``noticed``
        (per output, the part the rater sees is wrong, or None) serve the kinds that mark
        error spans."""
        answer: dict[str, dict[str, float]] = {}
        criteria = self.criteria_for(len(output_ids))
        for output_id, quality in zip(output_ids, qualities, strict=True):
            scores = {}
            for c in criteria:
                value = quality + (0 if careless else float(rng.normal(0, 0.05)))
                scaled = c.minimum + min(max(value, 0.0), 1.0) * (c.maximum - c.minimum)
                scores[c.key] = float(round(scaled))
            answer[str(output_id)] = scores
        return answer

    # What an output's answer holds beside the criteria's numbers (see :class:`AnswerPart`).
    answer_parts: tuple[AnswerPart, ...] = ()

    def answer_cell(self, stored: Mapping[str, Any]) -> Any:
        """An output's answer beyond its numbers and error spans as the judgment report's
        ``answer`` column gives it (``stored``: the output's stored answer); None for a kind
        whose answers hold nothing more (every row of such a kind leaves it empty). A text
        for CSV and TSV, any JSON value for JSON lines."""
        return None

    # Whether :meth:`answer_cell` gives anything (the report reads stored answers only then).
    has_answer_cell: bool = False

    # Error spans: a kind that has the annotators mark them (annotation/protocols/spans.py)
    # says so here and answers ``stored_answer`` and ``span_rows`` with them.
    marks_spans: bool = False

    def stored_answer(
        self,
        values: Mapping[tuple[int, str], float],
        output_ids: Sequence[int],
        answer: Mapping[str, Any],
    ) -> dict[str, dict[str, Any]]:
        """The answer as a judgment stores it, by output id (a string): the values of a valid
        answer (``validate``'s) and, for a kind that marks spans, its spans."""
        return {str(o): {c: v for (oid, c), v in values.items() if oid == o} for o in output_ids}

    def span_weight(self, stored: Mapping[str, Any], severity: str, category: str) -> float | None:
        """The weight of a span of an output whose stored answer is ``stored`` (None for a
        kind whose spans carry no weight)."""
        return None

    def span_rows(self, stored: Mapping[str, Mapping[str, Any]]) -> list[SpanRow]:
        """The error spans of a stored answer as rows (none for a kind without spans)."""
        return []

    def validate(
        self,
        answer: Mapping[str, Any],
        output_ids: Sequence[int],
        *,
        texts: Mapping[int, str] | None = None,
    ) -> tuple[dict[tuple[int, str], float], list[str]]:
        """Check a submitted answer ``{output_id: {criterion: value}}`` for the outputs shown
        (whose shown ``texts``, by output id, a kind that marks spans needs).

        Returns the values keyed by (output id, criterion) and a list of errors (empty when
        valid): every shown output must be answered on every criterion, within its scale, and
        nothing else may be answered.
        """
        criteria = self.criteria_for(len(output_ids))
        values: dict[tuple[int, str], float] = {}
        errors: list[str] = []
        expected = {str(o) for o in output_ids}
        given = {str(k) for k in answer}
        if given - expected:
            errors.append(str(_("The answer names outputs that are not on this screen.")))
        for position, output_id in enumerate(output_ids, start=1):
            scores = answer.get(str(output_id))
            if not isinstance(scores, Mapping):
                errors.append(str(_("Output %(n)d has no answer.") % {"n": position}))
                continue
            extra = set(scores) - {c.key for c in criteria}
            if extra:
                errors.append(str(_("Unknown criterion: %(name)s.") % {"name": sorted(extra)[0]}))
            for criterion in criteria:
                raw = scores.get(criterion.key)
                if isinstance(raw, bool) or not isinstance(raw, int | float):
                    errors.append(
                        str(
                            _("Output %(n)d: choose a %(criterion)s.")
                            % {"n": position, "criterion": str(criterion.label).lower()}
                        )
                    )
                    continue
                if raw != int(raw) or not criterion.minimum <= raw <= criterion.maximum:
                    errors.append(
                        str(
                            _(
                                "Output %(n)d: %(criterion)s must be a whole number from %(lo)d to %(hi)d."  # noqa: E501
                            )
                            % {
                                "n": position,
                                "criterion": str(criterion.label).lower(),
                                "lo": criterion.minimum,
                                "hi": criterion.maximum,
                            }
                        )
                    )
                    continue
                values[(int(output_id), criterion.key)] = float(raw)
        return values, errors
