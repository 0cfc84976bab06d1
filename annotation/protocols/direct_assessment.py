"""Direct assessment: one translation per screen scored 0–100 on a slider."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import REFERENCE_BASED, SOURCE_BASED, Criterion, Protocol

DIRECT_ASSESSMENT = "direct_assessment"

DA_SCORE = Criterion(
    "score",
    _("Score"),
    0,
    100,
    {0: _("Not at all"), 100: _("Perfectly")},
)

PROTOCOL = Protocol(
    DIRECT_ASSESSMENT,
    _("Direct assessment"),
    (DA_SCORE,),
    (SOURCE_BASED, REFERENCE_BASED),
    single_output=True,
    document_screens_allowed=True,
    instructions=_(
        "Move the slider to say how well the translation expresses the meaning of the "
        "source (or reference): 0 means not at all, 100 perfectly."
    ),
    short_name="DA",
)
