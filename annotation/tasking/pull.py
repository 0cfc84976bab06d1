"""Pull-mode tasks: a task is built with a first batch of screens and gains the next batch in one
transaction when its annotator reaches the end of what was built, the systems of the new screens
chosen then by the allocation policy (:mod:`evalcore.human.allocation`) from the judgments
stored so far. QC items are mixed in at the protocol's rate, as copies of real items of earlier
batches. The page, autosave, Previous and every rule of a submit are those of a prebuilt task: a
pull-mode task is an ordinary task whose ``size`` grows.

The policy's state (:class:`AllocationState`) is recomputed when ``REFRESH_EVERY`` more
judgments have been stored since it last was, so a busy campaign does not run the tests on
every pull. The stopping rule: no more screens once every adjacent pair of the current ranking
is decided at the config's level by the anytime-valid test (:mod:`evalcore.human.sequential`:
a tied pair is declared apart at most that often however many times it is looked at;
adaptive; top-k: the k best systems and the one below), or once the budget of judgments is
allocated. An annotator's task then ends at its last built item.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from annotation.models import (
    AllocationState,
    Assignment,
    Item,
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    JudgmentValue,
    ProtocolConfig,
    Run,
    Task,
)
from annotation.tasking.build import (
    BuildResult,
    Progress,
    config_lock_for_build,
    tasks_build_locked,
)
from annotation.tasking.merging import distinct_pick
from annotation.tasking.source import (
    CampaignSource,
    TaskError,
    campaign_source,
    qc_copy_outputs,
    qc_original_id,
)
from evalcore.human.allocation import adjacent_pairs, allocate_next, decided

# Judgments stored between two recomputations of the allocation.
REFRESH_EVERY = 20
# Positions (real screens and QC items) a task gains at a time.
BATCH_ITEMS = 10
# The batch the policy's shares are worked out on (only the proportions are used).
_SHARES = 1000
QC_KINDS = (ItemKind.BAD_REFERENCE, ItemKind.REPEAT, ItemKind.REFERENCE)


def pull_mode(config: ProtocolConfig) -> bool:
    return config.allocation != ProtocolConfig.Allocation.PREBUILT


def allocation_samples(config: ProtocolConfig) -> tuple[list[int], list[np.ndarray]]:
    """The campaign's system ids (by name, as a build orders them) and, for each, the values of
    the kind's first criterion in the stored judgments of the config's real outputs, oriented
    so that higher is better (a rank or an MQM score is negated), in the order the judgments
    came in (the anytime-valid test pairs the systems' judgments in that order, so a new
    judgment only ever extends a system's values)."""
    criterion = config.definition.criteria[0]
    system_ids = list(
        config.campaign.systems.order_by("name").values_list("pk", flat=True)  # type: ignore[attr-defined]
    )
    values: dict[int, list[float]] = {pk: [] for pk in system_ids}
    rows = JudgmentValue.objects.filter(
        judgment__item__task__config=config,
        output__kind=ItemKind.REAL,
        criterion=criterion.key,
    ).values_list("judgment_id", "pk", "output__system_id", "value")
    # A merged output's answer is a judgment of every system credited with it too.
    credited = JudgmentValue.objects.filter(
        judgment__item__task__config=config,
        output__kind=ItemKind.REAL,
        output__credits__isnull=False,
        criterion=criterion.key,
    ).values_list("judgment_id", "pk", "output__credits__system_id", "value")
    sign = 1.0 if criterion.higher_is_better else -1.0
    for _judgment, _pk, system_id, value in sorted([*rows, *credited], key=lambda r: r[:2]):
        values[system_id].append(sign * value)
    return system_ids, [np.asarray(values[pk], dtype=np.float64) for pk in system_ids]


def _judged(config: ProtocolConfig) -> int:
    """Judgments of real outputs, a merged output's counted once per system it credits too."""
    values = JudgmentValue.objects.filter(
        judgment__item__task__config=config,
        output__kind=ItemKind.REAL,
        criterion=config.definition.criteria[0].key,
    )
    return values.count() + values.filter(output__credits__isnull=False).count()


def _allocated(config: ProtocolConfig) -> int:
    """Judgments of real outputs the built items ask for."""
    outputs = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL).count()
    return outputs * config.annotations_per_task


def allocation_refresh(config: ProtocolConfig, *, force: bool = False) -> AllocationState:
    """The config's allocation state, recomputed from the stored judgments when
    ``REFRESH_EVERY`` more have come in since it last was (or ``force``); the budget is
    checked every time."""
    judged = _judged(config)
    allocated = _allocated(config)
    state = AllocationState.objects.filter(config=config).first()
    over = bool(config.allocation_budget) and allocated >= config.allocation_budget
    # Recomputed when stale, and when the budget runs out too: the state the campaign stopped in
    # is shown.
    if (
        state is None
        or force
        or judged >= state.judgments + REFRESH_EVERY
        or (over and state.stopped != AllocationState.Stop.BUDGET)
    ):
        state = _recompute(config, judged)
    state.allocated = allocated
    if over:
        state.stopped = AllocationState.Stop.BUDGET
    state.save()
    return state


def _recompute(config: ProtocolConfig, judged: int) -> AllocationState:
    system_ids, samples = allocation_samples(config)
    top_k = (
        config.allocation_top_k if config.allocation == ProtocolConfig.Allocation.TOP_K else None
    )
    bounds = _bounds(config)
    level = config.allocation_level
    counts = allocate_next(samples, _SHARES, alpha=level, top_k=top_k, bounds=bounds)
    # Pairs are tested once every system has two judgments (a test of one against one is not
    # a decision).
    tested = all(len(x) >= 2 for x in samples)
    pairs = [
        {
            "high": system_ids[high],
            "low": system_ids[low],
            "p": p,
            "decided": tested and decided(p, level),
        }
        for high, low, p in (adjacent_pairs(samples, bounds=bounds) if tested else [])
    ]
    watched = pairs[:top_k] if top_k is not None else pairs
    done = tested and bool(watched) and all(pair["decided"] for pair in watched)
    total = int(counts.sum())
    weights = (
        {str(pk): int(c) / total for pk, c in zip(system_ids, counts, strict=True)} if total else {}
    )
    state, _created = AllocationState.objects.update_or_create(
        config=config,
        defaults={
            "judgments": judged,
            "weights": weights,
            "pairs": pairs,
            "stopped": AllocationState.Stop.DECIDED if done else AllocationState.Stop.RUNNING,
        },
    )
    return state


def _bounds(config: ProtocolConfig) -> tuple[float, float]:
    """The scale of the kind's first criterion on the config's screens (ranks: 1 to k),
    oriented as :func:`allocation_samples`."""
    criterion = config.definition.criteria[0]
    k = config.definition.outputs_per_screen(config.outputs_per_screen)
    # A kind whose scale depends on the screen (ranks) fits it to k; MQM's score, worked out
    # from spans, is asked of no screen and keeps its own.
    fitted = [c for c in (config.definition.criteria_for(k) if k else ()) if c.key == criterion.key]
    criterion = fitted[0] if fitted else criterion
    lo, hi = float(criterion.minimum), float(criterion.maximum)
    # A scale of one point (a ranking of one output) says nothing; any width will do.
    hi = max(hi, lo + 1.0)
    return (lo, hi) if criterion.higher_is_better else (-hi, -lo)


def config_build_locked(config: ProtocolConfig, progress: Progress) -> BuildResult:
    """Build a config's tasks in the caller's transaction (the config locked): prebuilt as
    :func:`tasks_build_locked` does, or, in a pull mode, tasks that each hold a first batch of
    screens. As many tasks as the budget needs (or as a prebuilt build would make)."""
    if not pull_mode(config):
        return tasks_build_locked(config, progress)
    if Assignment.objects.filter(task__config=config).exists():
        raise TaskError(_("Annotators have started on these tasks; they cannot be rebuilt."))
    if config.shows_documents:
        raise TaskError(_("Pull modes choose one screen at a time: use segment screens."))
    progress("removing", 0, 0)
    Task.objects.filter(config=config).delete()
    AllocationState.objects.filter(config=config).delete()
    progress("reading", 0, 0)
    source = campaign_source(config.campaign, config.definition.mode(config.mode))
    k = _outputs_per_screen(config, source)
    qc = config.qc_bad_reference + config.qc_repeat + config.qc_reference
    real_per_task = max(1, math.floor(config.items_per_task * (100 - qc) / 100))
    if config.allocation_budget:
        screens = math.ceil(config.allocation_budget / (k * config.annotations_per_task))
    else:
        screens = math.ceil(len(source.segments) * len(source.systems) / k)
    tasks = Task.objects.bulk_create(
        [
            Task(config=config, position=n, size=0, annotations_needed=config.annotations_per_task)
            for n in range(max(1, math.ceil(screens / real_per_task)))
        ]
    )
    progress("writing", 0, len(tasks))
    grown = [0, 0]
    for n, task in enumerate(tasks):
        added = _append(task, config, source, allocation_refresh(config))
        grown[0] += added.items
        grown[1] += added.outputs
        progress("writing", n + 1, len(tasks))
    # A budget smaller than the tasks' first batches leaves the last tasks empty.
    empty = [t.pk for t in tasks if not t.size]
    Task.objects.filter(pk__in=empty).delete()
    # Merging saves no screens of a pull build (the budget sets them), but every credit is a
    # judgment the first batches get without asking for it.
    credits = ItemOutputCredit.objects.filter(output__item__task__config=config).count()
    return BuildResult(
        tasks=len(tasks) - len(empty),
        items=grown[0],
        outputs=grown[1],
        saved_judgments=credits * config.annotations_per_task,
    )


def task_grow(*, task_id: int, position: int) -> int:
    """Give a pull-mode task its next batch when the item at ``position`` is its last one
    built; the task's size after it (unchanged when the allocation has stopped, the task is
    full, or another annotator's answer grew it meanwhile). One transaction, the task locked."""
    with transaction.atomic():
        task = Task.objects.select_for_update().select_related("config__campaign").get(pk=task_id)
        config = task.config
        if position + 1 < task.size or task.size >= config.items_per_task:
            return task.size
        # One growth of a config at a time: two annotators reaching the end of their tasks at
        # once must not both spend the budget's last judgments.
        AllocationState.objects.select_for_update().filter(config=config).first()
        state = allocation_refresh(config)
        if state.stopped:
            return task.size
        source = campaign_source(config.campaign, config.definition.mode(config.mode))
        _append(task, config, source, state)
        return task.size


def progress_most(config: ProtocolConfig, size: int) -> int | None:
    """The most items a task of ``size`` items built so far may grow to, while more may follow
    (a pull mode whose stopping rule does not hold, its budget not spent and the task not full):
    the annotation page then says "n answered · more may follow" instead of "n of size", whose
    end moves. None when the task's size is final (prebuilt tasks: no query)."""
    if not pull_mode(config) or size >= config.items_per_task:
        return None
    state = (
        AllocationState.objects.filter(config=config).values_list("stopped", "allocated").first()
    )
    if state is not None:
        stopped, allocated = state
        if stopped or (config.allocation_budget and allocated >= config.allocation_budget):
            return None
    return config.items_per_task


def assignments_progress_most(assignments: Iterable[Assignment]) -> None:
    """Set ``progress_most`` (:func:`progress_most`) on each unfinished assignment: the list of
    an annotator's tasks says "n answered · more may follow" where the task may still grow.
    One query per pull-mode config at most; prebuilt tasks need none."""
    known: dict[int, int | None] = {}
    for assignment in assignments:
        assignment.progress_most = None  # type: ignore[attr-defined]
        task = assignment.task
        if assignment.status == Assignment.Status.DONE or not pull_mode(task.config):
            continue
        if task.config_id not in known:  # the config's state, whatever the task's size
            known[task.config_id] = progress_most(task.config, 0)
        most = known[task.config_id]
        if most is not None and task.size < most:
            assignment.progress_most = most  # type: ignore[attr-defined]


def allocation_stopped(config: ProtocolConfig) -> bool:
    """Whether a pull-mode config's stopping rule holds (as last computed)."""
    if not pull_mode(config):
        return False
    return AllocationState.objects.filter(config=config).exclude(stopped="").exists()


def allocation_stopped_for(config: ProtocolConfig, *, annotator: User) -> bool:
    """Whether the stopping rule keeps the annotator from taking a task of a pull-mode config:
    it holds and they have no task of the config in progress to go back to."""
    return (
        allocation_stopped(config)
        and not config.tasks.filter(
            assignments__annotator=annotator, assignments__status=Assignment.Status.ACTIVE
        ).exists()
    )


def stopped_message(config: ProtocolConfig) -> str:
    return _(
        "%(name)s needs no more judgments: the allocation's stopping rule holds. Thank you!"
    ) % {"name": config.name}


def stopped_configs(*, annotator: User) -> set[int]:
    """The pull-mode configs of the annotator's campaigns whose stopping rule holds."""
    return set(
        AllocationState.objects.filter(config__campaign__annotators=annotator)
        .exclude(stopped="")
        .values_list("config_id", flat=True)
    )


@dataclass(frozen=True)
class _Added:
    items: int
    outputs: int


def _outputs_per_screen(config: ProtocolConfig, source: CampaignSource) -> int:
    return min(config.definition.outputs_per_screen(config.outputs_per_screen), len(source.systems))


def _append(
    task: Task, config: ProtocolConfig, source: CampaignSource, state: AllocationState
) -> _Added:
    """Append the next batch to ``task`` (its ``size`` updated, in memory too): real screens for
    the systems the state's weights pick, then QC copies of real items of earlier batches, so
    many that the task holds the protocol's rate of each kind; in a shuffled order."""
    rng = np.random.default_rng([config.seed, task.position, task.size])
    positions = min(BATCH_ITEMS, config.items_per_task - task.size)
    existing = list(Item.objects.filter(task=task).values_list("pk", "kind", "original_id"))
    copies = _qc_originals(config, task, existing, positions, source, rng)
    k = _outputs_per_screen(config, source)
    n_real = positions - len(copies)
    if config.allocation_budget:
        left = config.allocation_budget - state.allocated
        n_real = min(n_real, max(0, math.ceil(left / (k * config.annotations_per_task))))
    if n_real <= 0:
        return _Added(0, 0)
    slots = rng.permutation(n_real + len(copies)) + task.size
    reals = _write_real(task, source, k, slots[:n_real], state, rng)
    qc_items = [
        Item(task=task, position=int(pos), kind=kind, segment=original.segment, original=original)
        for pos, (kind, original) in zip(slots[n_real:], copies, strict=True)
    ]
    Item.objects.bulk_create(qc_items)
    shown = {o.pk: list(o.outputs.order_by("position")) for _kind, o in copies}
    qc_outputs = [
        output
        for item in qc_items
        for output in qc_copy_outputs(
            item, shown[qc_original_id(item)], source, protocol=config.definition, rng=rng
        )
    ]
    ItemOutput.objects.bulk_create(qc_outputs)
    task.size += len(slots)
    Task.objects.filter(pk=task.pk).update(size=task.size)
    state.allocated += reals * config.annotations_per_task
    AllocationState.objects.filter(pk=state.pk).update(allocated=state.allocated)
    return _Added(items=len(slots), outputs=reals + len(qc_outputs))


def _qc_originals(
    config: ProtocolConfig,
    task: Task,
    existing: Sequence[tuple[int, str, int | None]],
    positions: int,
    source: CampaignSource,
    rng: np.random.Generator,
) -> list[tuple[str, Item]]:
    """The QC items of the next batch, as (kind, original real item): for each kind, as many as
    bring the task to the protocol's rate at its new size, copying real items of earlier
    batches that the kind has not copied yet (oldest first: far from their copies)."""
    rates = {
        ItemKind.BAD_REFERENCE: config.qc_bad_reference,
        ItemKind.REPEAT: config.qc_repeat,
        ItemKind.REFERENCE: config.qc_reference
        if source.output_ref_index in source.references
        else 0,
    }
    real = [pk for pk, kind, _original in existing if kind == ItemKind.REAL]
    planned: list[tuple[str, int]] = []
    for kind in QC_KINDS:
        copied = {original for _pk, k, original in existing if k == kind}
        have = len(copied)
        want = math.floor((task.size + positions) * rates[kind] / 100) - have
        free = [pk for pk in real if pk not in copied]
        planned += [(kind, pk) for pk in free[: max(0, want)]]
    planned = planned[: max(0, positions - 1)]  # every batch keeps one real screen
    items = Item.objects.select_related("segment").in_bulk([pk for _kind, pk in planned])
    return [(kind, items[pk]) for kind, pk in planned]


def _write_real(
    task: Task,
    source: CampaignSource,
    k: int,
    slots: np.ndarray,
    state: AllocationState,
    rng: np.random.Generator,
) -> int:
    """Write real screens at ``slots``, each of ``k`` systems chosen by the state's weights, on
    the segments the config has shown least (not yet in this task where possible); the
    number of outputs written."""
    n = len(source.systems)
    weights = np.array([state.weights.get(str(s.pk), 0.0) for s in source.systems]) + 1e-9
    in_task = set(Item.objects.filter(task=task).values_list("segment_id", flat=True))
    shown = dict(
        Item.objects.filter(task__config=task.config, kind=ItemKind.REAL)
        .values("segment_id")
        .annotate(n=Count("pk"))
        .values_list("segment_id", "n")
    )
    order = sorted(
        range(len(source.segments)),
        key=lambda i: (
            source.segments[i].pk in in_task,
            shown.get(source.segments[i].pk, 0),
            rng.random(),
        ),
    )
    items = [
        Item(
            task=task,
            position=int(pos),
            kind=ItemKind.REAL,
            segment=source.segments[order[j % len(order)]],
        )
        for j, pos in enumerate(slots)
    ]
    Item.objects.bulk_create(items)
    # The screens follow the weights as closely as whole screens can: each takes the k systems
    # furthest below their share of this batch so far (by name on a tie).
    # With merging, a system whose text another slot shows is credited with that slot (and
    # counts as given), and the slot goes to the next system with a text not shown yet.
    target = weights / weights.sum() * len(items) * k
    given = np.zeros(n)
    outputs: list[ItemOutput] = []
    credited: list[tuple[int, list[tuple[int, Run]]]] = []
    min_width = task.config.definition.min_outputs
    for item in items:
        order = [int(i) for i in np.argsort(given - target, kind="stable")]
        runs = {i: _pick_run(source, i, rng) for i in order[:k]}
        if task.config.merge_identical:
            runs.update({i: _pick_run(source, i, rng) for i in order[k:]})
            texts = [source.translations[(runs[i].pk, item.segment_id)][1] for i in range(n)]
            groups = distinct_pick(order, texts, k, min_width=min_width)
        else:
            groups = [(i,) for i in order[:k]]
        for slot, (index, *others) in enumerate(groups):
            given[[index, *others]] += 1
            run = runs[index]
            translation_id, text = source.translations[(run.pk, item.segment_id)]
            credited.append((len(outputs), [(o, runs[o]) for o in others]))
            outputs.append(
                ItemOutput(
                    item=item,
                    position=slot,
                    kind=ItemKind.REAL,
                    translation_id=translation_id,
                    system=source.systems[index],
                    run=run,
                    text=text,
                )
            )
    ItemOutput.objects.bulk_create(outputs)
    _write_credits(source, outputs, credited)
    return len(outputs)


def _write_credits(
    source: CampaignSource,
    outputs: list[ItemOutput],
    credited: list[tuple[int, list[tuple[int, Run]]]],
) -> None:
    """The credits of merged outputs: per written output (by index), the systems (and runs)
    credited with it."""
    ItemOutputCredit.objects.bulk_create(
        ItemOutputCredit(
            output=outputs[j],
            system=source.systems[o],
            run=run,
            translation_id=source.translations[(run.pk, outputs[j].item.segment_id)][0],
        )
        for j, others in credited
        for o, run in others
    )


def _pick_run(source: CampaignSource, index: int, rng: np.random.Generator) -> Run:
    runs = source.runs[index]
    return runs[int(rng.integers(len(runs)))]


def config_tasks_build(*, config: ProtocolConfig) -> BuildResult:
    """:func:`config_build_locked` in a transaction of its own (what ``tasks_build`` is to a
    prebuilt build)."""
    with transaction.atomic():
        return config_build_locked(config_lock_for_build(config.pk), _no_progress)


def _no_progress(stage: str, done: int, total: int) -> None:
    pass
