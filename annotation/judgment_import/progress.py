"""The steps of an import of historical judgments, for a progress bar: the command line's
(``import_judgments``) now, a page's later. An import calls ``report(stage, step, steps)`` as it
enters each step; the stages are translatable labels."""

from __future__ import annotations

from collections.abc import Callable

from django.utils.translation import gettext_lazy as _

# report(stage label, step starting at 1, number of steps)
ImportProgress = Callable[[str, int, int], None]

STAGES = (
    ("read", _("Reading the file")),
    ("check", _("Checking it against the campaign")),
    ("items", _("Writing tasks and items")),
    ("outputs", _("Writing the shown outputs")),
    ("judgments", _("Writing the judgments")),
)
_STEP = {key: (n, label) for n, (key, label) in enumerate(STAGES, start=1)}


def progress_step(report: ImportProgress | None, stage: str) -> None:
    """Tell ``report`` (if any) that the import enters ``stage`` (a key of :data:`STAGES`)."""
    if report is not None:
        step, label = _STEP[stage]
        report(str(label), step, len(STAGES))
