"""Document scores in Appraise's ESA/MQM export: one whole-document row per document judgment
(field 9 ``True``), as Appraise writes the score an annotator gave a whole document, and its
item in the batches (``isCompleteDocument``), so that document scores read back as they are
(:mod:`annotation.judgment_import.documents`).

Appraise gives a document item an item id of its own; here it is the number of the campaign's
segments plus the document's position (from 1), which no segment's line takes. The item sits in
the batch of the screen's outputs shown for its system, its texts theirs joined by line breaks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from annotation.models import Campaign, DocumentJudgment, ItemKind, ItemOutput, Segment
from annotation.reports.appraise_shown import Shown, appraise_first_runs, screen_start

_FIELDS = (
    "screen_id",
    "screen__task__config_id",
    "annotator_id",
    "document__external_id",
    "system__name",
    "run_id",
    "kind",
    "score",
    "shown_at",
    "submitted_at",
    "seconds",
)


@dataclass(frozen=True)
class DocumentShown:
    """One document screen as a whole-document item of a batch, for one system."""

    system: str
    kind: ItemKind
    item_id: int
    document: str
    source: str
    text: str
    batch: int


@dataclass(frozen=True)
class DocumentRow:
    """One document judgment as the export writes it: ``screen`` is the screen's first item
    (the row's item in the campaign)."""

    shown: DocumentShown
    screen: int
    config: int
    annotator: int
    score: int
    start: datetime
    end: datetime


def _item_ids(campaign: Campaign) -> dict[str, int]:
    """Each document's item id: the campaign's segment count plus its position (from 1)."""
    segments = Segment.objects.filter(document__campaign=campaign).count()
    return {
        external_id: segments + position + 1
        for external_id, position in campaign.documents.values_list("external_id", "position")
    }


def _on_screens(configs: list[int], shown: list[Shown]) -> dict[tuple[int, str], list[Shown]]:
    """Per (screen's first item, system): the outputs shown on that screen, in line order."""
    screen_of: dict[int, tuple[int, int]] = {}  # output → (task, screen position)
    first: dict[tuple[int, int], int] = {}  # (task, screen position) → the screen's first item
    outputs = ItemOutput.objects.filter(item__task__config__in=configs, item__screen__isnull=False)
    for output, item, task, screen, position in outputs.values_list(
        "id", "item_id", "item__task_id", "item__screen", "item__position"
    ):
        assert screen is not None  # the filter's
        screen_of[output] = (task, screen)
        if position == screen:
            first[(task, screen)] = item
    on_screen: dict[tuple[int, str], list[Shown]] = defaultdict(list)
    for s in shown:
        key = screen_of.get(s.output)
        if key is not None and key in first:
            on_screen[(first[key], s.system)].append(s)
    for texts in on_screen.values():
        texts.sort(key=lambda s: s.line)
    return on_screen


def appraise_document_rows(
    *, campaign: Campaign, configs: list[int], shown: list[Shown]
) -> list[DocumentRow]:
    """Every document judgment of the configs (each system's first run, as the segment rows),
    in config, task, screen and annotator order."""
    judgments = list(
        DocumentJudgment.objects.filter(screen__task__config__in=configs)
        .order_by(
            "screen__task__config_id", "screen__task__position", "screen__position", "annotator_id"
        )
        .values_list(*_FIELDS)
    )
    if not judgments:
        return []
    first_runs = appraise_first_runs(campaign)
    on_screens, ids = _on_screens(configs, shown), _item_ids(campaign)
    rows: list[DocumentRow] = []
    for values in judgments:
        row = dict(zip(_FIELDS, values, strict=True))
        if row["run_id"] is not None and row["run_id"] not in first_runs:
            continue
        system = row["system__name"] or "REF"
        texts = on_screens.get((row["screen_id"], system), [])
        end = row["submitted_at"]
        start = screen_start(row["shown_at"], end, row["seconds"])
        document = row["document__external_id"]
        shown_as = DocumentShown(
            system=system,
            kind=ItemKind(row["kind"]),
            item_id=ids[document],
            document=document,
            source="\n".join(s.source for s in texts),
            text="\n".join(s.text for s in texts),
            batch=texts[0].batch if texts else 0,
        )
        rows.append(
            DocumentRow(
                shown=shown_as,
                screen=row["screen_id"],
                config=row["screen__task__config_id"],
                annotator=row["annotator_id"],
                score=row["score"],
                start=start,
                end=end,
            )
        )
    return rows
