"""Adequacy and fluency (Koehn, Fig. 8.2): every shown translation rated twice on 1–5 scales."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import BILINGUAL, MONOLINGUAL, Criterion, Protocol

ADEQUACY_FLUENCY = "adequacy_fluency"

ADEQUACY = Criterion(
    "adequacy",
    _("Adequacy"),
    1,
    5,
    {
        5: _("All meaning"),
        4: _("Most meaning"),
        3: _("Much meaning"),
        2: _("Little meaning"),
        1: _("None"),
    },
)
FLUENCY = Criterion(
    "fluency",
    _("Fluency"),
    1,
    5,
    {
        5: _("Flawless"),
        4: _("Good"),
        3: _("Non-native"),
        2: _("Disfluent"),
        1: _("Incomprehensible"),
    },
    needs_source=False,
)

PROTOCOL = Protocol(
    ADEQUACY_FLUENCY,
    _("Adequacy and fluency"),
    (ADEQUACY, FLUENCY),
    (BILINGUAL, MONOLINGUAL),
    fluency_first_allowed=True,
    instructions=_(
        "Rate every translation twice. Adequacy: how much of the meaning of the source (or "
        "reference) is expressed in the translation. Fluency: how good the translation is as "
        "a text in the target language, whatever it means."
    ),
)
