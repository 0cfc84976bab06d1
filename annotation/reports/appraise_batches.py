"""Appraise's batches written from a campaign: the JSON Appraise builds a campaign of
document-level ESA/MQM tasks from, in the layout :mod:`annotation.judgment_import.appraise_batches`
reads, so that the Appraise CSV (``appraise.py``) with these batches builds a campaign again —
the texts each annotator saw included, a bad reference's degraded copy with its spans among
them, which the CSV alone cannot carry (``docs/reports.md`` §4a).

One batch per batch number the CSV writes (a task, split where two of its items are of one
line); its items are the outputs shown, one per system written, with the CSV's item id (the
segment's line), item type, ``document#system``, system, the segment's source and the shown
text, and ``_item`` (``system | segment | document``) naming the segment; after them a
whole-document item per document score the CSV writes (``appraise_documents.py``). Then a batch
per system of its texts that no task shows, which no row names.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Any

from annotation.analysis.settings import AnalysisSettings
from annotation.judgment_import.appraise_batches import MQM_WEIGHTS
from annotation.models import Campaign, ItemKind, Translation
from annotation.protocols.mqm import MQM, WEIGHTS, Weights
from annotation.reports.appraise_documents import appraise_document_rows
from annotation.reports.appraise_shown import (
    APPRAISE_TYPE,
    Shown,
    appraise_configs,
    appraise_first_runs,
    appraise_shown,
)


def _unshown(*, campaign: Campaign, shown: list[Shown]) -> list[Shown]:
    """The campaign's translations no task shows (of each system's first run), in a batch per
    system after the tasks' batches: a new campaign needs every system's text of every
    segment, and no row names these batches."""
    seen = {(s.system, s.line) for s in shown if s.kind in (ItemKind.REAL, ItemKind.REPEAT)}
    batch = max((s.batch for s in shown), default=0)
    unshown: list[Shown] = []
    numbers: dict[str, int] = {}
    for pk, system, position, segment, document, source, text in (
        Translation.objects.filter(run__in=appraise_first_runs(campaign))
        .order_by("run__system_id", "segment__position")
        .values_list(
            "pk",
            "run__system__name",
            "segment__position",
            "segment__external_id",
            "segment__document__external_id",
            "segment__source",
            "text",
        )
    ):
        if (system, position + 1) in seen:
            continue
        number = numbers.setdefault(system, batch + len(numbers) + 1)
        unshown.append(
            Shown(pk, system, ItemKind.REAL, position + 1, document, segment, source, text, number)
        )
    return unshown


def _document_items(
    *, campaign: Campaign, configs: list[int], shown: list[Shown]
) -> dict[int, list[dict[str, Any]]]:
    """Per batch: its whole-document items, one per document and system with a score."""
    items: dict[int, dict[tuple[int, str], dict[str, Any]]] = {}
    for row in appraise_document_rows(campaign=campaign, configs=configs, shown=shown):
        whole = row.shown
        items.setdefault(whole.batch, {})[(whole.item_id, whole.system)] = {
            "itemID": whole.item_id,
            "itemType": APPRAISE_TYPE[whole.kind],
            "documentID": f"{whole.document}#{whole.system}",
            "sourceID": whole.document,
            "targetID": whole.system,
            "sourceText": whole.source,
            "targetText": whole.text,
            "isCompleteDocument": True,
        }
    return {batch: list(found.values()) for batch, found in items.items()}


def _mqm_weights(campaign: Campaign) -> dict[int, dict[str, float]]:
    """Per MQM config: its weights, which the batches carry so that the scores read back."""
    return {
        pk: Weights.from_json((settings or {}).get(WEIGHTS)).as_json()
        for pk, settings in campaign.protocols.filter(protocol=MQM).values_list("pk", "settings")
    }


def appraise_batches(*, campaign: Campaign) -> list[dict[str, Any]]:
    """The batches (see the module), in batch-number order."""
    configs = [pk for pk, _name in appraise_configs(campaign)]
    weights = _mqm_weights(campaign)
    shown = sorted(appraise_shown(campaign=campaign, configs=configs), key=lambda s: s.batch)
    documents = _document_items(campaign=campaign, configs=configs, shown=shown)
    shown += _unshown(campaign=campaign, shown=shown)
    meta = {
        "sourceLanguage": campaign.source_language,
        "targetLanguage": campaign.target_language,
    }
    batches = []
    for number, group in groupby(shown, key=lambda s: s.batch):
        items = list(group)
        task: dict[str, Any] = {"batchNo": number, **meta}
        if items[0].config in weights:
            task[MQM_WEIGHTS] = weights[items[0].config]
        batches.append(
            {
                "task": task,
                "items": [
                    {
                        "itemID": item.line,
                        "itemType": APPRAISE_TYPE[item.kind],
                        "documentID": f"{item.document}#{item.system}",
                        "sourceID": item.document,
                        "targetID": item.system,
                        "sourceText": item.source,
                        "targetText": item.text,
                        "isCompleteDocument": False,
                        "_item": f"{item.system} | {item.segment} | {item.document}",
                    }
                    for item in items
                ]
                + documents.get(number, []),
            }
        )
    return batches


def appraise_batches_json(
    *, campaign: Campaign, labels: dict[int, str], settings: AnalysisSettings | None = None
) -> str:
    """The batches as one JSON text (``labels`` is the downloads' common argument; batches
    name no annotator)."""
    del labels, settings
    return json.dumps(appraise_batches(campaign=campaign), ensure_ascii=False, indent=1)
