"""Which outputs Appraise's ESA/MQM export and batches write, and in which batch: every output of
the campaign's ESA and MQM tasks per system it is written for (``REF`` for a reference, every
system credited with a merged output), each system's first run only (the layout has no runs).
Shared by the CSV (``appraise.py``) and the batches (``appraise_batches.py``)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from annotation.models import Campaign, ItemKind, ItemOutput, ItemOutputCredit, Run
from annotation.protocols.esa import ESA
from annotation.protocols.mqm import MQM

APPRAISE_TYPE = {
    ItemKind.REAL: "TGT",
    ItemKind.REPEAT: "CHK",
    ItemKind.BAD_REFERENCE: "BAD",
    ItemKind.REFERENCE: "REF",
}


def _credits(configs: list[int]) -> dict[int, list[tuple[str, int]]]:
    """Per merged output of the configs: the (system name, run id) credited with it."""
    credits: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for output, system, run in (
        ItemOutputCredit.objects.filter(output__item__task__config__in=configs)
        .order_by("output_id", "system__name")
        .values_list("output_id", "system__name", "run_id")
    ):
        credits[output].append((system, run))
    return credits


def screen_start(
    shown_at: datetime | None, submitted_at: datetime, seconds: float | None
) -> datetime:
    """When a screen started: as noted, or else (unknown) its seconds before the submit."""
    return shown_at or submitted_at - timedelta(seconds=max(seconds or 0, 0))


def appraise_first_runs(campaign: Campaign) -> set[int]:
    """Each system's first run, the one the import reads a row as."""
    first: dict[int, int] = {}
    for run, system in (
        Run.objects.filter(system__campaign=campaign)
        .order_by("system_id", "position")
        .values_list("id", "system_id")
    ):
        first.setdefault(system, run)
    return set(first.values())


@dataclass(frozen=True)
class Shown:
    """One output as an Appraise batch item shows it to one system's rows (``REF`` for a
    reference): the batches download writes one, the CSV names its batch."""

    output: int  # an ItemOutput's id (a Translation's for a text no task shows)
    system: str
    kind: ItemKind
    line: int  # the segment's line: the item id
    document: str
    segment: str  # the segment's id
    source: str
    text: str
    batch: int
    config: int = 0  # the protocol config whose task shows it (0: none, a text no task shows)


_SHOWN_FIELDS = (
    "id",
    "item__task__config_id",
    "item__task_id",
    "kind",
    "system__name",
    "run_id",
    "item__segment__position",
    "item__segment__external_id",
    "item__segment__document__external_id",
    "item__segment__source",
    "text",
)


def appraise_shown(*, campaign: Campaign, configs: list[int]) -> list[Shown]:
    """Every output of the configs' tasks per system it is written for (as the CSV's rows),
    in task, item and output order, each in a batch: a task's own, or a further one of the
    same task when its batch already holds an item of that line (an item id names one item
    of a batch: the outputs of one segment, its repeats and bad references go apart)."""
    credits, first_runs = _credits(configs), appraise_first_runs(campaign)
    shown: list[Shown] = []
    lines_of: dict[int, list[set[int]]] = {}  # per task: the lines each of its batches holds
    batches = 0
    for values_row in (
        ItemOutput.objects.filter(item__task__config__in=configs)
        .order_by("item__task__config_id", "item__task__position", "item__position", "position")
        .values_list(*_SHOWN_FIELDS)
    ):
        row = dict(zip(_SHOWN_FIELDS, values_row, strict=True))
        kind = ItemKind(row["kind"])
        systems = (
            [("REF", None)]
            if kind == ItemKind.REFERENCE
            else [(row["system__name"], row["run_id"])]
        )
        if kind == ItemKind.REAL:
            systems += credits.get(row["id"], [])
        line = row["item__segment__position"] + 1
        for system, run in systems:
            if run is not None and run not in first_runs:
                continue
            task = lines_of.setdefault(row["item__task_id"], [])
            batch = next((k for k, lines in enumerate(task) if line not in lines), len(task))
            if batch == len(task):
                task.append(set())
                batches += 1
            task[batch].add(line)
            shown.append(
                Shown(
                    output=row["id"],
                    system=system,
                    kind=kind,
                    line=line,
                    document=row["item__segment__document__external_id"],
                    segment=row["item__segment__external_id"],
                    source=row["item__segment__source"],
                    text=row["text"],
                    batch=batches - len(task) + batch + 1,
                    config=row["item__task__config_id"],
                )
            )
    return shown


def appraise_configs(campaign: Campaign) -> list[tuple[int, str]]:
    """The campaign's configs the export writes (ESA's and MQM's), (pk, name) in order."""
    return list(
        campaign.protocols.filter(protocol__in=(ESA, MQM)).order_by("pk").values_list("pk", "name")
    )
