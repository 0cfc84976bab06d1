"""Error Span Annotation (ESA; Kocmi et al., 2024, WMT's human evaluation since 2024): the
annotator marks the translation's error spans, each minor or major (a span over the
missing-content marker for an omission), then scores it 0–100 on a slider that starts unset."""

from __future__ import annotations

from dataclasses import replace

from django.utils.translation import gettext_lazy as _

from annotation.protocols.base import REFERENCE_BASED, SOURCE_BASED, Criterion
from annotation.protocols.spans import MAJOR, MINOR, SpanProtocol

ESA = "esa"

# ESA's anchors on the 0–100 scale (Kocmi et al., 2024, as WMT's Appraise shows them).
ESA_SCORE = Criterion(
    "score",
    _("Score"),
    0,
    100,
    {
        0: _("No meaning preserved"),
        33: _("Some meaning preserved"),
        66: _("Most meaning preserved, few grammar mistakes"),
        100: _("Perfect meaning and grammar"),
    },
)

# ESA's severities as its guidelines define them (Kocmi et al., 2024, as WMT's Appraise
# shows them beside the screen).
SEVERITIES = (
    replace(MINOR, definition=_("Style, grammar or word choice could be better or more natural.")),
    replace(
        MAJOR,
        definition=_(
            "The meaning changes significantly, or the part is really hard to understand."
        ),
    ),
)

PROTOCOL = SpanProtocol(
    ESA,
    _("Error span annotation (ESA)"),
    (ESA_SCORE,),
    (SOURCE_BASED, REFERENCE_BASED),
    severities=SEVERITIES,
    asked=(ESA_SCORE,),
    document_screens_allowed=True,
    default_outputs=1,
    analysis_space="raw",
    instructions=_(
        "First mark every error in the translation: select the words (click or tap the first "
        "and the last, or drag), then say whether the error is minor (style, grammar, a word "
        "that fits less well) or major (it changes or hides the meaning). Mark the "
        "“missing” marker after the text when content is left out. Then score the whole "
        "translation from 0 to 100."
    ),
    short_name="ESA",
)
