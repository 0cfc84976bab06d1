"""The document-level rows of the normalised judgment report: one row per document score
(``DocumentJudgment``), after every segment-level row, with ``criterion`` = ``document`` and
no output, segment or line (docs/reports.md). Their shifted and z scores are the document
scores' own (per annotator and protocol, :mod:`annotation.analysis.documents`), never mixed
with the segment scores."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from annotation.analysis.documents import ITEM_TYPES, document_row_statistics
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import ITEM_TYPE_NAMES
from annotation.models import Campaign, DocumentJudgment, ItemKind

DOCUMENT_CRITERION = "document"


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.astimezone(UTC).isoformat(timespec="microseconds"))


def document_report_columns(
    *, campaign: Campaign, settings: AnalysisSettings, labels: dict[int, str]
) -> dict[str, list[Any]] | None:
    """The document-level rows column by column, as ``report_chunks`` yields a chunk (None
    when the campaign has no document score). Ordered by protocol config (as created), task,
    screen, annotator."""
    rows = list(
        DocumentJudgment.objects.filter(screen__task__config__campaign=campaign)
        .order_by(
            "screen__task__config__created",
            "screen__task__config_id",
            "screen__task__position",
            "screen__position",
            "annotator_id",
            "pk",
        )
        .values_list(
            "pk",
            "screen__task__config__name",
            "screen__task__config__protocol",
            "screen__task__position",
            "screen__position",
            "document__external_id",
            "system__name",
            "run__name",
            "annotator_id",
            "kind",
            "score",
            "shown_at",
            "submitted_at",
            "seconds",
        )
    )
    if not rows:
        return None
    stats = document_row_statistics(campaign=campaign, settings=settings)
    nan = float("nan")
    c = list(zip(*rows, strict=True))
    n = len(rows)
    return {
        "campaign": [campaign.name] * n,
        "protocol": list(c[1]),
        "protocol_type": list(c[2]),
        "task": [v + 1 for v in c[3]],
        "item": [v + 1 for v in c[4]],
        "output": [None] * n,
        "document": list(c[5]),
        "segment": [None] * n,
        "line": [None] * n,
        "system": list(c[6]),
        "run": list(c[7]),
        "annotator": [labels.get(v) or str(v) for v in c[8]],
        "item_type": [ITEM_TYPE_NAMES[int(ITEM_TYPES[ItemKind(v)])] for v in c[9]],
        "criterion": [DOCUMENT_CRITERION] * n,
        "raw": [float(v) for v in c[10]],
        "shifted": [stats.shifted.get(pk, nan) for pk in c[0]],
        "z": [stats.z.get(pk, nan) for pk in c[0]],
        "qc_status": [stats.status.get(pk) for pk in c[0]],
        "included": [stats.included.get(pk, False) for pk in c[0]],
        "started": [_iso(v) for v in c[11]],
        "submitted": [_iso(v) for v in c[12]],
        "seconds": list(c[13]),
        "spans": [None] * n,
        "answer": [None] * n,
        # A document score is given to the one system its screen showed: never merged.
        "merged": [None] * n,
    }
