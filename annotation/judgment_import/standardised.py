"""Imported scores that are standardised already: some releases publish their judgments only as
z-scores (WMT's ``ad-<pair>-good-stnd.csv``: each worker's scores standardised by the worker's
mean and SD). Such scores are imported as given, outside the criterion's scale, and their
protocol config says so (``ProtocolConfig.scores_standardised``), so that the analysis takes
them as its z-scores instead of standardising them again (annotation/analysis/scores.py).

The import's ``scores`` option: ``raw`` (the criterion's scale is checked), ``standardised``
(any finite number is taken) or ``auto``: standardised when the file's scores leave the scale
and look like z-scores (one below 0, one not a whole number, none further than :data:`Z_LIMIT`
from 0), raw otherwise. A raw file with a stray out-of-range score (raters give whole numbers)
is still refused, naming the row.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.utils.translation import gettext_lazy as _

from annotation.campaigns.uploads import UploadError, UploadProblem
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.rows import ParsedJudgments
from annotation.models import JudgmentImport
from annotation.protocols import PROTOCOLS, SCORES_SETTING, SCORES_STANDARDISED
from annotation.protocols.mqm import WEIGHTS

SCORES_AUTO = "auto"
SCORES_RAW = "raw"

SCORE_KINDS = {
    SCORES_AUTO: _("Find out: standardised if the scores leave the scale and look like z-scores"),
    SCORES_RAW: _("Raw scores on the criterion's scale"),
    SCORES_STANDARDISED: _("Standardised (z) scores, analysed as given"),
}
"""The ``scores`` choices of the page, the API and ``import_judgments --scores``."""

Z_LIMIT = 10.0
"""The farthest from 0 that ``auto`` takes a score for a z-score: WMT21 Flores' standardised
scores stay within ±5.5; a file of raw 0–100 scores has most of its scores beyond."""


def score_kind_choices() -> list[tuple[str, Any]]:
    return list(SCORE_KINDS.items())


def looks_standardised(parsed: ParsedJudgments, protocol_key: str) -> bool:
    """Whether the rows' scores leave the protocol's scales and look like z-scores."""
    criteria = PROTOCOLS[protocol_key].import_criteria()
    low = min(c.minimum for c in criteria)
    high = max(c.maximum for c in criteria)
    scores = [row.score for row in parsed.rows]
    outside = any(not low <= x <= high for x in scores)
    fractional = any(x != int(x) for x in scores)
    near_zero = all(abs(x) <= Z_LIMIT for x in scores)
    return outside and fractional and near_zero and any(x < 0 for x in scores)


def scores_resolved(parsed: ParsedJudgments, options: ImportOptions) -> ImportOptions:
    """The options with ``scores`` as the import applies it: ``raw`` or ``standardised``
    (``auto`` decided by :func:`looks_standardised`).

    Raises:
        UploadError: standardised scores for a protocol whose judgments are not scores
            (ranks), or an unknown choice.
    """
    chosen = options.scores
    if chosen not in SCORE_KINDS:
        raise UploadError(
            [UploadProblem(parsed.file, None, f"scores {chosen!r}: use {', '.join(SCORE_KINDS)}")]
        )
    applied = chosen
    if chosen == SCORES_AUTO:
        standardised = looks_standardised(parsed, options.protocol)
        applied = SCORES_STANDARDISED if standardised else SCORES_RAW
    problem = PROTOCOLS[options.protocol].standardised_import_problem()
    if applied == SCORES_STANDARDISED and problem is not None:
        raise UploadError(
            [UploadProblem(parsed.file, None, f"{problem} (import them with scores=raw)")]
        )
    return replace(options, scores=applied)


def imported_settings(options: ImportOptions) -> dict[str, Any]:
    """The imported protocol config's settings: the standardised flag, if the scores are, and
    MQM's weights, if the import scored with weights of its own."""
    settings: dict[str, Any] = {}
    if options.scores == SCORES_STANDARDISED:
        settings[SCORES_SETTING] = SCORES_STANDARDISED
    if options.weights:
        settings[WEIGHTS] = dict(options.weights)
    return settings


def scores_record(record: JudgmentImport, chosen: str, options: ImportOptions) -> None:
    """The import's record says which scores were chosen and which the import applied."""
    record.options["scores"] = chosen
    record.summary["scores"] = options.scores
    record.save(update_fields=["options", "summary"])


def scores_text(summary: dict[str, Any]) -> str:
    """What the page and the command say of an import of standardised scores ("" for raw)."""
    if summary.get("scores") != SCORES_STANDARDISED:
        return ""
    return str(
        _(
            "Scores imported as standardised (z-scores): the analysis takes them as given; "
            "the release holds no raw scores."
        )
    )
