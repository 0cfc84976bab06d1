"""Building a protocol config's tasks: screens planned, QC items placed, items and shown outputs
written in bulk, all or nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import (
    Assignment,
    Item,
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    ProtocolConfig,
    Run,
    Task,
)
from annotation.protocols import Protocol
from annotation.tasking.merging import merged_screens, output_groups
from annotation.tasking.plan import (
    BAD_REFERENCE,
    REFERENCE,
    PlannedTask,
    QcMix,
    Screen,
    balanced_screens,
    document_screens,
    document_windows,
    expand_windows,
    plan_tasks,
    spread_documents,
    windows_per_task,
)
from annotation.tasking.source import (
    CampaignSource,
    TaskError,
    campaign_source,
    qc_copy_outputs,
    qc_original_id,
)

logger = logging.getLogger(__name__)

BATCH = 2000

# Told how a build gets on: its stage, and rows written of the rows to write (0 and 0 before
# the writing starts).
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class BuildResult:
    tasks: int
    items: int
    outputs: int
    # What merging identical outputs saved, counting every annotator of a task.
    saved_screens: int = 0
    saved_judgments: int = 0


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


def tasks_build(*, config: ProtocolConfig) -> BuildResult:
    """Build (or rebuild, while nobody has started) the tasks of a protocol config.

    Deterministic from ``config.seed``: the same data and settings give the same tasks.
    """
    with transaction.atomic():
        return tasks_build_locked(config_lock_for_build(config.pk), _no_progress)


def config_lock_for_build(config_id: int) -> ProtocolConfig:
    """The config, its row locked until the caller's transaction ends: one build of a config
    at a time, and no assignment slips in while it is rebuilt."""
    return ProtocolConfig.objects.select_for_update().select_related("campaign").get(pk=config_id)


def tasks_build_locked(config: ProtocolConfig, progress: Progress) -> BuildResult:
    """:func:`tasks_build` inside the caller's transaction, with the config from
    :func:`config_lock_for_build`; ``progress`` is told the stage and the rows written."""
    if Assignment.objects.filter(task__config=config).exists():
        raise TaskError(_("Annotators have started on these tasks; they cannot be rebuilt."))
    progress("removing", 0, 0)
    Task.objects.filter(config=config).delete()
    return _build(config, progress)


def _build(config: ProtocolConfig, progress: Progress) -> BuildResult:
    """Read the campaign's data, plan the screens and their QC copies, and write them: real
    items and their outputs first (QC items point to them), then the copies and theirs.

    One random generator, seeded from the config, runs through planning and then the copies'
    outputs, in that order: the same data and settings give the same tasks."""
    progress("reading", 0, 0)
    protocol = config.definition
    source = campaign_source(config.campaign, protocol.mode(config.mode))

    progress("planning", 0, 0)
    rng = np.random.default_rng(config.seed)
    plans = _plan(config, source, rng)

    # Every item and every output shown on it is a row.
    total = sum(1 + len(item.screen.systems) for plan in plans for item in plan.items)
    writer = _Writer(progress, total)
    progress("writing", 0, total)
    tasks = _write_tasks(config, plans)
    # Real items first (QC items point to them), then the copies.
    real_items = _write_real_items(tasks, plans, source, writer)
    real_outputs, n_outputs = _write_real_outputs(tasks, plans, real_items, source, writer)
    _write_credits(tasks, plans, real_items, real_outputs, source)
    copies = _write_copies(tasks, plans, real_items, writer)
    n_copy_outputs = _write_copy_outputs(
        copies, real_outputs, source, protocol=protocol, rng=rng, writer=writer
    )
    logger.info("built %d tasks for %s", len(tasks), config)
    items = len(real_items) + len(copies)
    outputs = n_outputs + n_copy_outputs
    unmerged = _unmerged_size(config, source) if _merges(config) else (items, outputs)
    return BuildResult(
        tasks=len(tasks),
        items=items,
        outputs=outputs,
        saved_screens=max(0, unmerged[0] - items) * config.annotations_per_task,
        saved_judgments=max(0, unmerged[1] - outputs) * config.annotations_per_task,
    )


def _plan(
    config: ProtocolConfig, source: CampaignSource, rng: np.random.Generator
) -> list[PlannedTask[Screen]]:
    """The tasks' items, real and QC, in order; a TaskError when the bad-reference items
    have no other segment to borrow from."""
    mix = QcMix(config.qc_bad_reference, config.qc_repeat, config.qc_reference)
    with_reference_items = source.output_ref_index in source.references
    plans: list[PlannedTask[Screen]]
    if config.shows_documents:
        if not config.definition.document_screens_allowed:
            raise TaskError(
                _("%(protocol)s has no document screens.") % {"protocol": config.definition.name}
            )
        windows = document_windows(
            [(s.document_id, s.position_in_document) for s in source.segments],
            config.document_window,
        )
        screens = document_screens(windows, len(source.systems))
        planned = plan_tasks(
            screens,
            items_per_task=windows_per_task(screens, config.items_per_task),
            mix=mix,
            rng=rng,
            with_reference_items=with_reference_items,
        )
        # No document twice in a row for one annotator.
        documents = [s.document_id for s in source.segments]
        plans = expand_windows(spread_documents(planned, documents))
    else:
        plans = plan_tasks(
            _segment_screens(config, source, rng, merge=_merges(config)),
            items_per_task=config.items_per_task,
            mix=mix,
            rng=rng,
            with_reference_items=with_reference_items,
        )
    with_text = {i for i, text in enumerate(source.donors) if text.strip()}
    if any(
        item.kind == BAD_REFERENCE and not with_text - {item.screen.segment}
        for plan in plans
        for item in plan.items
    ):
        # A bad reference borrows a phrase from another segment's text.
        donor = _("reference") if 0 in source.references else _("translation by the first system")
        raise TaskError(
            _(
                "Bad-reference items borrow a phrase from another segment's %(donor)s, but "
                "fewer than two segments have one. Upload more segments, or set the "
                "bad-reference items to 0."
            )
            % {"donor": donor}
        )
    _check_reference_items(plans, source)
    return plans


def _merges(config: ProtocolConfig) -> bool:
    """Whether the build merges identical outputs: document screens show one system's
    translation of a segment each, so they have nothing to merge on a screen."""
    return config.merge_identical and not config.shows_documents


def _segment_screens(
    config: ProtocolConfig, source: CampaignSource, rng: np.random.Generator, *, merge: bool
) -> list[Screen]:
    """The real segment screens, with identical outputs merged when ``merge``."""
    k = config.definition.outputs_per_screen(config.outputs_per_screen)
    n_systems = len(source.systems)
    if not merge:
        return balanced_screens(len(source.segments), n_systems, k, rng)
    groups = [
        output_groups(
            [
                source.translations[(_run_of(source, system, position).pk, segment.pk)][1]
                for system in range(n_systems)
            ]
        )
        for position, segment in enumerate(source.segments)
    ]
    # A segment with fewer texts than the kind compares on a screen gets no screen.
    return merged_screens(groups, n_systems, k, rng, min_width=config.definition.min_outputs)


def _unmerged_size(config: ProtocolConfig, source: CampaignSource) -> tuple[int, int]:
    """The items and shown outputs the same build would write without merging (planned
    afresh from the seed, not written): what the summary says merging saved."""
    rng = np.random.default_rng(config.seed)
    mix = QcMix(config.qc_bad_reference, config.qc_repeat, config.qc_reference)
    plans = plan_tasks(
        _segment_screens(config, source, rng, merge=False),
        items_per_task=config.items_per_task,
        mix=mix,
        rng=rng,
        with_reference_items=source.output_ref_index in source.references,
    )
    items = [item for plan in plans for item in plan.items]
    return len(items), sum(len(item.screen.systems) for item in items)


def _run_of(source: CampaignSource, system_index: int, turn: int) -> Run:
    """The run of a system shown for a screen: each system's runs take turns."""
    system_runs = source.runs[system_index]
    return system_runs[(turn + system_index) % len(system_runs)]


def _check_reference_items(plans: list[PlannedTask[Screen]], source: CampaignSource) -> None:
    """A TaskError when a reference item falls on a segment without the reference it shows
    (a reference set that covers only some segments)."""
    shown = source.references.get(source.output_ref_index, {})
    if not any(item.kind == REFERENCE for plan in plans for item in plan.items):
        return
    missing = [s for s in source.segments if s.pk not in shown]
    if missing:
        first = missing[0]
        raise TaskError(
            _(
                "Items with the reference as output show a segment's reference, but "
                "%(missing)s of %(total)s segments have none (the first: document "
                "%(document)s, segment %(segment)s). Upload their references, or set "
                "“references as output per 100 items” to 0."
            )
            % {
                "missing": len(missing),
                "total": len(source.segments),
                "document": first.document.external_id,
                "segment": first.external_id,
            }
        )


class _Writer:
    """Writes rows in batches of BATCH, telling ``progress`` the rows written of ``total``."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.total = total
        self.written = 0

    def write(self, model: type[Item] | type[ItemOutput], rows: list[Any]) -> None:
        for start in range(0, len(rows), BATCH):
            batch = rows[start : start + BATCH]
            model.objects.bulk_create(batch)
            self.written += len(batch)
            self.progress("writing", self.written, self.total)


def _write_tasks(config: ProtocolConfig, plans: list[PlannedTask[Screen]]) -> list[Task]:
    return Task.objects.bulk_create(
        [
            Task(
                config=config,
                position=n,
                size=len(plan.items),
                annotations_needed=config.annotations_per_task,
            )
            for n, plan in enumerate(plans)
        ]
    )


def _write_real_items(
    tasks: list[Task], plans: list[PlannedTask[Screen]], source: CampaignSource, writer: _Writer
) -> dict[tuple[int, int], Item]:
    """The real items, by (task id, position)."""
    real_items: dict[tuple[int, int], Item] = {}
    rows = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, item in enumerate(plan.items):
            if item.kind == ItemKind.REAL:
                row = Item(
                    task=task,
                    position=position,
                    kind=item.kind,
                    segment=source.segments[item.screen.segment],
                    screen=item.screen_start,
                )
                real_items[(task.pk, position)] = row
                rows.append(row)
    writer.write(Item, rows)
    return real_items


def _write_real_outputs(
    tasks: list[Task],
    plans: list[PlannedTask[Screen]],
    real_items: dict[tuple[int, int], Item],
    source: CampaignSource,
    writer: _Writer,
) -> tuple[dict[int, list[ItemOutput]], int]:
    """The outputs shown on the real items, by item id; and how many there are. Each
    system's runs take turns over the segments."""
    real_outputs: dict[int, list[ItemOutput]] = {}
    outputs = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, planned in enumerate(plan.items):
            if planned.kind != ItemKind.REAL:
                continue
            item = real_items[(task.pk, position)]
            segment = source.segments[planned.screen.segment]
            shown = []
            for slot, system_index in enumerate(planned.screen.systems):
                run = _run_of(source, system_index, planned.screen.run_turn)
                translation_id, text = source.translations[(run.pk, segment.pk)]
                shown.append(
                    ItemOutput(
                        item=item,
                        position=slot,
                        kind=ItemKind.REAL,
                        translation_id=translation_id,
                        system=source.systems[system_index],
                        run=run,
                        text=text,
                    )
                )
            real_outputs[item.pk] = shown
            outputs.extend(shown)
    writer.write(ItemOutput, outputs)
    return real_outputs, len(outputs)


def _write_credits(
    tasks: list[Task],
    plans: list[PlannedTask[Screen]],
    real_items: dict[tuple[int, int], Item],
    real_outputs: dict[int, list[ItemOutput]],
    source: CampaignSource,
) -> None:
    """The other system runs credited with each merged real output (none without merging)."""
    credits = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, planned in enumerate(plan.items):
            if planned.kind != ItemKind.REAL or not planned.screen.credits:
                continue
            item = real_items[(task.pk, position)]
            for slot, output in enumerate(real_outputs[item.pk]):
                for system_index in planned.screen.credited(slot):
                    run = _run_of(source, system_index, planned.screen.run_turn)
                    translation_id, _text = source.translations[(run.pk, item.segment_id)]
                    credits.append(
                        ItemOutputCredit(
                            output=output,
                            system=source.systems[system_index],
                            run=run,
                            translation_id=translation_id,
                        )
                    )
    ItemOutputCredit.objects.bulk_create(credits, batch_size=BATCH)


def _write_copies(
    tasks: list[Task],
    plans: list[PlannedTask[Screen]],
    real_items: dict[tuple[int, int], Item],
    writer: _Writer,
) -> list[Item]:
    """The QC items, each a copy of a real item of its task."""
    copies = []
    for task, plan in zip(tasks, plans, strict=True):
        for position, planned in enumerate(plan.items):
            if planned.kind != ItemKind.REAL:
                assert planned.original is not None
                original = real_items[(task.pk, planned.original)]
                copies.append(
                    Item(
                        task=task,
                        position=position,
                        kind=planned.kind,
                        segment=original.segment,
                        original=original,
                        screen=planned.screen_start,
                    )
                )
    writer.write(Item, copies)
    return copies


def _write_copy_outputs(
    copies: list[Item],
    real_outputs: dict[int, list[ItemOutput]],
    source: CampaignSource,
    *,
    protocol: Protocol,
    rng: np.random.Generator,
    writer: _Writer,
) -> int:
    """The outputs shown on the QC items, in the order of ``copies`` (the random draws
    follow it); how many there are."""
    copy_outputs = []
    for copy in copies:
        copy_outputs.extend(
            qc_copy_outputs(
                copy, real_outputs[qc_original_id(copy)], source, protocol=protocol, rng=rng
            )
        )
    writer.write(ItemOutput, copy_outputs)
    return len(copy_outputs)
