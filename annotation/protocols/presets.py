"""Protocol presets: a published campaign design in one choice. A preset is the values of a
protocol config's fields (the setup form's and the API's names) as the design's authors ran
it; choosing one fills them in, and the organizer may still change any of them. Where
EvalSite cannot copy a design exactly, the value is the nearest and docs/annotation.md says
how it differs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.protocols.esa import ESA
from annotation.protocols.mqm import MQM, WEIGHT_SETTINGS


@dataclass(frozen=True)
class ProtocolPreset:
    """A named set of a protocol config's field values (the kind's number settings named as
    the form names them, ``mqm_major``), and the publication it follows."""

    key: str
    label: Any
    values: Mapping[str, Any] = field(hash=False)
    source: str = ""


# ESA as WMT24 and WMT25 ran it in Appraise (Kocmi et al., 2024, "Error Span Annotation: A
# Balanced Approach for Human Evaluation of Machine Translation"; WMT24 findings): the source
# above one system's translation, the whole document on one screen in document order, a score
# of the whole document after its segments, batches of 100 segments. WMT's document QC
# (Appraise's create_wmt22_tasks.py): a fifth of a batch repeats its documents, about 60 % of
# the repeated segments degraded into bad references; here 12 bad-reference and 8 repeated
# documents per 100. The human references are rated as systems (upload them as one), not as
# QC items.
WMT_ESA = ProtocolPreset(
    "wmt_esa",
    _("WMT ESA (Kocmi et al., 2024; WMT24–25)"),
    {
        "protocol": ESA,
        "mode": "source",
        "outputs_per_screen": 1,
        "screen": "document",
        "document_window": 0,
        "document_score": True,
        "items_per_task": 100,
        "qc_bad_reference": 12,
        "qc_repeat": 8,
        "qc_reference": 0,
    },
    "Kocmi et al. (2024), WMT24–25 findings; Appraise create_wmt22_tasks.py",
)

# MQM as Google ran it (Freitag et al., 2021, "Experts, Errors, and Context"): professional
# raters in Anthea, which shows the whole document (source and one system's translation) and
# has the segments rated in document order, errors weighted by Google's scheme; no QC items
# (the raters are professionals).
GOOGLE_MQM = ProtocolPreset(
    "google_mqm",
    _("Google MQM (Freitag et al., 2021)"),
    {
        "protocol": MQM,
        "mode": "source",
        "outputs_per_screen": 1,
        "screen": "document",
        "document_window": 0,
        "document_score": False,
        "qc_bad_reference": 0,
        "qc_repeat": 0,
        "qc_reference": 0,
        **{f"{MQM}_{s.key}": s.default for s in WEIGHT_SETTINGS},
    },
    "Freitag et al. (2021), TACL 9; Google's MQM guidelines",
)

PROTOCOL_PRESETS: dict[str, ProtocolPreset] = {p.key: p for p in (WMT_ESA, GOOGLE_MQM)}


def preset_applied(preset: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a config's fields as a client sent them) with preset ``preset``'s values for
    the fields it does not give: what a client names wins over the preset."""
    return {**PROTOCOL_PRESETS[preset].values, **data}
