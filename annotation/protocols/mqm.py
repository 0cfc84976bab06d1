"""Multidimensional Quality Metrics (MQM; Freitag et al., 2021, and Google's annotator
guidelines): error spans with a severity and a category from MQM's typology. An output's MQM is
the sum of its errors' weights; the criterion the analysis reads is its negation, as the WMT
metrics task releases MQM scores (0 for no errors, −5 for one major error), so that a higher
score is better here as for every other kind: system means, significance, QC and correlations
need no special case."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from annotation.protocols.base import REFERENCE_BASED, SOURCE_BASED, Criterion, NumberSetting
from annotation.protocols.spans import MAJOR, MINOR, NEUTRAL, Category, SpanProtocol

MQM = "mqm"

NON_TRANSLATION = "non-translation"
PUNCTUATION = "fluency/punctuation"

# The typology of Freitag et al. (2021), as Google's guidelines give it, with its definitions
# (the guidelines in the paper's appendix; terminology's two subcategories, inappropriate for
# the context and used inconsistently, are one category here, as are locale convention's six
# formats).
CATEGORIES = (
    Category(
        "accuracy/mistranslation",
        _("Accuracy › Mistranslation"),
        _("The translation does not accurately represent the source."),
    ),
    Category(
        "accuracy/omission",
        _("Accuracy › Omission"),
        _("The translation is missing content of the source."),
    ),
    Category(
        "accuracy/addition",
        _("Accuracy › Addition"),
        _("The translation includes information that is not in the source."),
    ),
    Category(
        "accuracy/untranslated",
        _("Accuracy › Untranslated"),
        _("Source text has been left untranslated."),
    ),
    Category(
        "fluency/grammar",
        _("Fluency › Grammar"),
        _("Problems with grammar, other than spelling."),
    ),
    Category(
        "fluency/spelling",
        _("Fluency › Spelling"),
        _("Incorrect spelling or capitalization."),
    ),
    Category(
        PUNCTUATION,
        _("Fluency › Punctuation"),
        _("Incorrect punctuation (for the locale or the style)."),
    ),
    Category(
        "fluency/register",
        _("Fluency › Register"),
        _("Wrong grammatical register, e.g. inappropriately informal pronouns."),
    ),
    Category(
        "fluency/inconsistency",
        _("Fluency › Inconsistency"),
        _("The text is inconsistent within itself (other than in its terminology)."),
    ),
    Category(
        "fluency/character-encoding",
        _("Fluency › Character encoding"),
        _("Characters are garbled by a wrong encoding."),
    ),
    Category(
        "terminology",
        _("Terminology"),
        _("A term is non-standard or does not fit the context, or terms are used inconsistently."),
    ),
    Category(
        "style",
        _("Style"),
        _("Awkward: the translation has stylistic problems."),
    ),
    Category(
        "locale-convention",
        _("Locale convention"),
        _(
            "Wrong format for the locale: of an address, a currency, a date, a name, a "
            "telephone number or a time."
        ),
    ),
    Category(
        NON_TRANSLATION,
        _("Non-translation"),
        _(
            "Distinct errors cannot reliably be told apart: the translation is too badly "
            "garbled or unrelated to the source. Mark it once, over the whole translation, "
            "and no other error."
        ),
    ),
    Category(
        "source-error",
        _("Source error"),
        _("An error in the source text."),
    ),
    Category("other", _("Other"), _("Any other issue.")),
)

# The typology's upper levels, which the annotation page defines above their categories.
CATEGORY_GROUPS = (
    Category(
        "accuracy",
        pgettext_lazy("MQM category", "Accuracy"),
        _("The translation does not say what the source says."),
    ),
    Category(
        "fluency",
        pgettext_lazy("MQM category", "Fluency"),
        _("The text has a problem of its own, whatever the source says."),
    ),
)

# Google's rules for choosing a category and reading in context (the same guidelines).
TYPOLOGY_NOTE = _(
    "Mark each error separately, as precisely as you can: two mistranslated words are two "
    "errors. Where one stretch of text has several errors, mark the most severe one; if they "
    "are equally severe, the first matching category in this list. Read the translation in "
    "its context: what is fine in the document is no error, what would be fine elsewhere but "
    "is wrong here is one."
)

# Severities as the same guidelines define them.
SEVERITIES = (
    replace(
        MINOR,
        definition=_(
            "The error does not lose meaning and would not confuse or mislead the reader, "
            "but it would be noticed: it makes the text less stylish, fluent or clear, or "
            "less appealing."
        ),
    ),
    replace(
        MAJOR,
        definition=_(
            "The error may confuse or mislead the reader: it changes the meaning "
            "significantly, or it is in a visible or important part of the content."
        ),
    ),
    replace(
        NEUTRAL,
        definition=_(
            "For additional information, problems or changes to make that do not count as "
            "errors, e.g. because they reflect the reviewer's choice or preferred style."
        ),
    ),
)


@dataclass(frozen=True)
class Weights:
    """MQM's error weights; the defaults are Freitag et al.'s (2021) and Google's: major 5,
    minor 1, neutral 0, a minor punctuation error 0.1, a non-translation 25 whatever its
    severity."""

    major: float = 5.0
    minor: float = 1.0
    neutral: float = 0.0
    minor_punctuation: float = 0.1
    non_translation: float = 25.0

    def of(self, severity: str, category: str) -> float:
        if category == NON_TRANSLATION:
            return self.non_translation
        if severity == MINOR.key and category == PUNCTUATION:
            return self.minor_punctuation
        return {"major": self.major, "minor": self.minor, "neutral": self.neutral}[severity]

    def as_json(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Weights:
        """Weights as :meth:`as_json` writes them; a weight not given has its default (a
        config or judgment stored before weights were configurable has Google's)."""
        data = data or {}
        return cls(**{f.name: float(data[f.name]) for f in fields(cls) if f.name in data})


WEIGHTS = "weights"

# The weights as the setup page's form asks for them, in Weights' order.
WEIGHT_SETTINGS = (
    NumberSetting("major", _("Weight of a major error"), Weights.major),
    NumberSetting("minor", _("Weight of a minor error"), Weights.minor),
    NumberSetting("neutral", _("Weight of a neutral error"), Weights.neutral),
    NumberSetting(
        "minor_punctuation", _("Weight of a minor punctuation error"), Weights.minor_punctuation
    ),
    NumberSetting(
        "non_translation",
        _("Weight of a non-translation (any severity)"),
        Weights.non_translation,
    ),
)


def mqm_score(spans: Sequence[Mapping[str, Any]], weights: Weights) -> float:
    """The sum of the spans' weights (an output without errors scores 0)."""
    return float(sum(weights.of(s["severity"], s.get("category", "")) for s in spans))


# Google's guidelines ask for at most five errors per segment (the five most severe).
MAX_ERRORS = 5

MQM_SCORE = Criterion(
    "mqm",
    _("MQM score (− weighted errors)"),
    -int(MAX_ERRORS * Weights().non_translation),
    0,
    {0: _("No errors")},
)


@dataclass(frozen=True)
class MQMProtocol(SpanProtocol):
    """Spans with severity and category; the score criterion is worked out from them."""

    weights: Weights = field(default_factory=Weights)
    number_settings: tuple[NumberSetting, ...] = WEIGHT_SETTINGS

    def settings_json(self, numbers: Mapping[str, float]) -> dict[str, Any]:
        """``{"weights": {…}}``: the weights given, the others Google's."""
        return {WEIGHTS: Weights.from_json(numbers).as_json()}

    def configured(self, settings: Mapping[str, Any]) -> MQMProtocol:
        """The kind with the config's weights (Google's where the settings have none)."""
        return replace(self, weights=Weights.from_json(settings.get(WEIGHTS)))

    def current_settings(self) -> dict[str, Any]:
        return {WEIGHTS: self.weights.as_json()}

    def settings_shown(self) -> list[tuple[str, str]]:
        return [(str(s.label), f"{getattr(self.weights, s.key):g}") for s in self.number_settings]

    def span_weight(self, stored: Mapping[str, Any], severity: str, category: str) -> float:
        """The weight by the weights the judgment stored (the config's for one stored without
        them, as an import stores Google's)."""
        weights = Weights.from_json(stored[WEIGHTS]) if WEIGHTS in stored else self.weights
        return weights.of(severity, category)

    def stored_answer(
        self,
        values: Mapping[tuple[int, str], float],
        output_ids: Sequence[int],
        answer: Mapping[str, Any],
    ) -> dict[str, dict[str, Any]]:
        """The values and spans by output, each with the weights its score was computed
        with: a judgment keeps them, whatever the config says later."""
        stored = super().stored_answer(values, output_ids, answer)
        for given in stored.values():
            given[WEIGHTS] = self.weights.as_json()
        return stored

    def histogram_criteria(self) -> tuple[Criterion, ...]:
        """None: scores pile up at a few values (0, −1, −5, …) over a wide scale; the analysis
        page's errors per system by severity and category say more."""
        return ()

    def derived_values(self, spans: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        """The negated weighted sum (0.0, never −0.0, without errors)."""
        return {MQM_SCORE.key: -mqm_score(spans, self.weights) or 0.0}


PROTOCOL = MQMProtocol(
    MQM,
    _("MQM error annotation"),
    (MQM_SCORE,),
    (SOURCE_BASED, REFERENCE_BASED),
    severities=SEVERITIES,
    categories=CATEGORIES,
    category_groups=CATEGORY_GROUPS,
    typology_title=_("Error categories (MQM typology, Freitag et al., 2021)"),
    typology_note=TYPOLOGY_NOTE,
    max_spans=MAX_ERRORS,
    document_screens_allowed=True,
    default_outputs=1,
    analysis_space="raw",
    simulated_categories=(
        "accuracy/mistranslation",
        "fluency/grammar",
        "fluency/spelling",
        PUNCTUATION,
        "terminology",
        "style",
    ),
    instructions=_(
        "Mark every error in the translation (at most five: the most severe ones): select the "
        "words, give the error a severity — major when it changes or hides the meaning, minor "
        "when it does not, neutral for a preference — and a category. Mark the “missing” "
        "marker after the text when content is left out. A translation without errors needs "
        "no marks."
    ),
    short_name="MQM",
)
