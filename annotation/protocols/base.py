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
class Protocol:
    key: str
    name: Any
    criteria: tuple[Criterion, ...]
    modes: tuple[Mode, ...]
    ranks: bool = False  # answers are ranks 1..k of the shown outputs (ties allowed)
    single_output: bool = False  # one output per screen whatever k says
    # The most outputs a screen may show: a rank is typed as one digit on the annotation page.
    max_outputs: int | None = None
    instructions: Any = ""
    # The screen may ask for fluency first, without the source, then show it (a config option).
    fluency_first_allowed: bool = False

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

    def simulated_answer(
        self,
        output_ids: Sequence[int],
        qualities: Sequence[float],
        rng: np.random.Generator,
        *,
        careless: bool,
    ) -> dict[str, dict[str, float]]:
        """What a simulated rater (the demo's) answers for outputs it perceives at
        ``qualities`` (0 worst, 1 best): every criterion on its scale, with a little noise per
        criterion unless the rater is careless."""
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

    def validate(
        self, answer: Mapping[str, Any], output_ids: Sequence[int]
    ) -> tuple[dict[tuple[int, str], float], list[str]]:
        """Check a submitted answer ``{output_id: {criterion: value}}`` for the outputs shown.

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
