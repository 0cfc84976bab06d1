"""Pull-mode tasks: the allocation read from stored judgments in the order they came in
(hand-computed shares, the anytime-valid p-values of evalcore's sequential test, ranks
negated), a task that gains its next batch with QC items mixed in at the rate when its
annotator reaches its end, and the stopping rules (every adjacent pair decided, the budget
spent) that end it."""

from __future__ import annotations

import itertools
import uuid
from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from annotation.judging.services import judgment_record
from annotation.models import (
    AllocationState,
    Assignment,
    Item,
    ItemKind,
    ItemOutput,
    ProtocolConfig,
    Task,
)
from annotation.tasking.pull import (
    BATCH_ITEMS,
    _bounds,
    allocation_refresh,
    allocation_samples,
    config_tasks_build,
    progress_most,
)
from annotation.tasking.services import task_assign_next
from evalcore.human.sequential import order_p_value
from tests.factories import full_answer, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db

# The demo's four systems, by name, and the score each gets in these tests.
QUALITY = {0: 90.0, 1: 70.0, 2: 50.0, 3: 30.0}


@pytest.fixture
def rich(owner):  # type: ignore[no-untyped-def]
    return make_rich_campaign(owner=owner)


def pull_config(campaign, **fields):  # type: ignore[no-untyped-def]
    defaults = {
        "outputs_per_screen": 1,
        "items_per_task": 60,
        "allocation": "adaptive",
    }
    defaults.update(fields)
    config = make_config(campaign, "direct_assessment", build=False, **defaults)
    config_tasks_build(config=config)
    return config


def answer_all(assignment: Assignment, annotator, score) -> None:  # type: ignore[no-untyped-def]
    """Answer the task's current item until the task is finished, each output scored by
    ``score(output)``."""
    while True:
        assignment.refresh_from_db()
        task = Task.objects.get(pk=assignment.task_id)
        if assignment.items_done >= task.size:
            return
        item = Item.objects.get(task=task, position=assignment.items_done)
        answer = full_answer(item)
        for output in item.outputs.all():
            answer[str(output.pk)]["score"] = score(output)
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=answer,
        )


def by_quality(names: list[str], spread: float | None = None):  # type: ignore[no-untyped-def]
    """Scores by QUALITY, or, with ``spread``, 96 for the first system and ``spread`` less for
    each next one (up to 4 more by output)."""

    def score(output: ItemOutput) -> float:
        # Bad references score low, as a careful annotator's would; a little spread by output.
        if output.kind == ItemKind.BAD_REFERENCE:
            return 5.0
        if output.system_id is None:
            return 95.0
        rank = names.index(output.system.name)
        base = QUALITY[rank] if spread is None else 96.0 - spread * rank
        return base + output.pk % 5

    return score


def test_a_pull_task_starts_with_one_batch_of_real_screens_of_every_system(rich) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich)
    tasks = list(Task.objects.filter(config=config))
    # 60 segments x 4 systems, 1 output a screen, 48 real items of 60 per task: 5 tasks.
    assert len(tasks) == 5
    assert {t.size for t in tasks} == {BATCH_ITEMS}
    items = Item.objects.filter(task__config=config)
    assert set(items.values_list("kind", flat=True)) == {ItemKind.REAL}
    state = AllocationState.objects.get(config=config)
    # No judgment yet: every system shares the batch.
    assert sorted(state.weights.values()) == [0.25] * 4
    assert state.stopped == ""


def test_the_allocation_is_read_from_stored_judgments(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich)
    ids, samples = allocation_samples(config)
    assert [len(x) for x in samples] == [0, 0, 0, 0]
    names = list(rich.systems.order_by("name").values_list("name", flat=True))
    assignment = task_assign_next(config=config, annotator=annotator)
    answer_all(assignment, annotator, by_quality(names))
    ids, samples = allocation_samples(config)
    real = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
    judged = real.filter(values__isnull=False).select_related("system")
    for system_id, values in zip(ids, samples, strict=True):
        # In the order the judgments came in: the anytime-valid test pairs them in that order.
        mine = [o for o in judged if o.system_id == system_id]
        expected = sorted(mine, key=lambda o: o.values.get().judgment_id)
        assert values.tolist() == [o.values.get().value for o in expected]
    state = allocation_refresh(config, force=True)
    # The adjacent pairs follow the means; their p-values are the anytime-valid test's on the
    # 0-100 scale.
    means = {pk: x.mean() for pk, x in zip(ids, samples, strict=True)}
    order = sorted(ids, key=lambda pk: -means[pk])
    assert [(p["high"], p["low"]) for p in state.pairs] == list(itertools.pairwise(order))
    for pair in state.pairs:
        high = samples[ids.index(pair["high"])]
        low = samples[ids.index(pair["low"])]
        p = order_p_value(high, low, (0.0, 100.0))
        assert pair["p"] == pytest.approx(p, rel=1e-12)
        assert pair["decided"] == (p <= 0.05)


def test_shares_go_to_the_undecided_pair_with_a_fifth_uniform(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    # Judgments stored in a prebuilt task, then read by the policy. By hand: A always 100, D
    # always 60, B 10 and 20 in turn, C 11 and 19 in turn. A-D and D-(B or C) are decided
    # (40 and 40-50 points apart every time: the anytime-valid test's bets reach the largest
    # stake at the third pair, the wealth grows by 1.2 or more a pair and passes 2/0.05 by the
    # 22nd), B-C is not (a point apart either way). Of 1,000 judgments 200 are
    # uniform (50 each) and the one undecided pair's 800 go half to each of its two. 160 items,
    # so that each system has enough judgments (Mann-Whitney decided A-D with four each; a
    # test valid under repeated looks asks for more).
    config = make_config(rich, "direct_assessment", outputs_per_screen=1, items_per_task=160)
    names = list(rich.systems.order_by("name").values_list("name", flat=True))
    cycle = {names[0]: [100], names[1]: [10, 20], names[2]: [11, 19], names[3]: [60]}
    seen: Counter[str] = Counter()

    def score(output: ItemOutput) -> float:
        if output.kind != ItemKind.REAL:
            return 50.0
        name = output.system.name
        seen[name] += 1
        return float(cycle[name][seen[name] % len(cycle[name])])

    assignment = task_assign_next(config=config, annotator=annotator)
    answer_all(assignment, annotator, score)
    assert min(seen.values()) >= 25
    config.allocation = "adaptive"
    config.save()
    state = allocation_refresh(config, force=True)
    ids, _samples = allocation_samples(config)
    system = {name: ids[n] for n, name in enumerate(names)}
    decided = {frozenset((p["high"], p["low"])): p["decided"] for p in state.pairs}
    assert decided[frozenset((system[names[0]], system[names[3]]))]
    assert not decided[frozenset((system[names[1]], system[names[2]]))]
    assert sum(decided.values()) == 2
    expected = {names[0]: 0.05, names[1]: 0.45, names[2]: 0.45, names[3]: 0.05}
    got = {names[ids.index(int(pk))]: share for pk, share in state.weights.items()}
    assert got == pytest.approx(expected)
    assert state.stopped == ""


def test_ranks_are_negated_so_that_higher_is_better(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    config = make_config(
        rich, "ranking", build=False, outputs_per_screen=2, items_per_task=40, allocation="adaptive"
    )
    config_tasks_build(config=config)
    assignment = task_assign_next(config=config, annotator=annotator)
    item = Item.objects.get(task=assignment.task, position=0)
    outputs = list(item.outputs.order_by("position"))
    answer = full_answer(item)
    answer[str(outputs[0].pk)]["rank"] = 1
    answer[str(outputs[1].pk)]["rank"] = 2
    judgment_record(
        assignment_id=assignment.pk,
        annotator=annotator,
        item_id=item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=answer,
    )
    ids, samples = allocation_samples(config)
    assert samples[ids.index(outputs[0].system_id)].tolist() == [-1.0]
    assert samples[ids.index(outputs[1].system_id)].tolist() == [-2.0]


def test_a_pull_task_grows_with_qc_items_and_stops_once_every_pair_is_decided(rich) -> None:  # type: ignore[no-untyped-def]
    # Systems about 32 points apart: the anytime-valid test decides every adjacent pair after
    # some 30 judgments of each (20 points apart, where the Mann-Whitney rule stopped within 60
    # items, it would take some 45 each).
    config = pull_config(rich, items_per_task=200)
    names = list(rich.systems.order_by("name").values_list("name", flat=True))
    first = make_user("first")
    rich.annotators.add(first)
    assignment = task_assign_next(config=config, annotator=first)
    answer_all(assignment, first, by_quality(names, spread=32.0))
    assignment.refresh_from_db()
    task = Task.objects.get(pk=assignment.task_id)
    assert assignment.status == Assignment.Status.DONE
    state = AllocationState.objects.get(config=config)
    assert state.stopped == AllocationState.Stop.DECIDED
    assert all(pair["decided"] for pair in state.pairs)
    # It grew past its first batch and stopped before its 200 items.
    assert BATCH_ITEMS < task.size < config.items_per_task
    kinds = Counter(Item.objects.filter(task=task).values_list("kind", flat=True))
    # QC at the protocol's rate (12, 4 and 4 per 100) of the task's size, copies of real items.
    assert kinds[ItemKind.BAD_REFERENCE] == task.size * 12 // 100
    assert kinds[ItemKind.REPEAT] == task.size * 4 // 100
    assert kinds[ItemKind.REFERENCE] == task.size * 4 // 100
    positions = list(Item.objects.filter(task=task).values_list("position", flat=True))
    assert sorted(positions) == list(range(task.size))
    for copy in Item.objects.filter(task=task).exclude(kind=ItemKind.REAL):
        assert copy.original.task_id == task.pk
        assert copy.original.position < copy.position
    # Another annotator's task ends at its first batch: nothing more is allocated.
    second = make_user("second")
    rich.annotators.add(second)
    other = task_assign_next(config=config, annotator=second)
    answer_all(other, second, by_quality(names))
    assert Task.objects.get(pk=other.task_id).size == BATCH_ITEMS


def test_a_pull_task_stops_when_the_budget_is_spent(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich, allocation_budget=15)
    # One task: 15 screens fit in its 48 real items.
    assert Task.objects.filter(config=config).count() == 1
    assignment = task_assign_next(config=config, annotator=annotator)
    # Every output scored alike: no pair is ever decided, the budget ends it.
    answer_all(assignment, annotator, lambda output: 50.0)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE
    real = Item.objects.filter(task__config=config, kind=ItemKind.REAL).count()
    assert real == 15
    state = AllocationState.objects.get(config=config)
    assert state.stopped == AllocationState.Stop.BUDGET
    assert state.allocated == 15
    assert Item.objects.filter(task__config=config).exclude(kind=ItemKind.REAL).exists()


def test_the_organizer_sees_the_allocation_on_the_setup_page_and_by_api(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich, allocation_budget=15)
    assignment = task_assign_next(config=config, annotator=annotator)
    answer_all(assignment, annotator, lambda output: 50.0)
    client = Client()
    client.force_login(rich.owner)
    page = client.get(reverse("annotation_setup", args=[rich.pk])).content.decode()
    assert f'id="allocation-{config.pk}"' in page
    assert 'data-allocation-stopped="budget"' in page
    assert "Stopped: The budget is spent" in page
    answer = client.get(reverse("api-config-allocation", args=[rich.pk, config.pk])).json()
    state = AllocationState.objects.get(config=config)
    assert answer["allocation"] == "adaptive"
    assert answer["budget"] == 15
    assert answer["allocated"] == 15
    assert answer["stopped"] == "budget"
    assert answer["judgments"] == state.judgments
    assert len(answer["pairs"]) == 3
    assert answer["pairs_decided"] == sum(p["decided"] for p in state.pairs)
    names = set(rich.systems.values_list("name", flat=True))
    assert {p["high"] for p in answer["pairs"]} <= names


def test_annotators_are_told_that_a_stopped_config_needs_no_more(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich, allocation_budget=15)
    assignment = task_assign_next(config=config, annotator=annotator)
    answer_all(assignment, annotator, lambda output: 50.0)
    client = Client()
    client.force_login(annotator)
    page = client.get(reverse("my_tasks") + f"?finished={assignment.pk}").content.decode()
    assert 'id="allocation-stopped"' in page
    assert "needs no more judgments" in page
    # Another annotator of the campaign takes nothing and is told why.
    other = make_user("other")
    rich.annotators.add(other)
    client.force_login(other)
    assert "data-allocation-stopped" in client.get(reverse("my_tasks")).content.decode()
    answer = client.post(reverse("task_take", args=[config.pk]), follow=True)
    assert "needs no more judgments" in answer.content.decode()
    assert not Assignment.objects.filter(annotator=other).exists()


def test_progress_says_more_may_follow_until_the_tasks_end_is_known(rich, annotator) -> None:  # type: ignore[no-untyped-def]
    rich.annotators.add(annotator)
    # The QC mix of 10, 5 and 5 per 100 items: the budget's rest then grows the task to 18.
    config = pull_config(
        rich,
        items_per_task=40,
        allocation_budget=14,
        qc_bad_reference=10,
        qc_repeat=5,
        qc_reference=5,
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    client = Client()
    client.force_login(annotator)
    page = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    # The first batch of 10 is built; the task may grow to 40.
    assert "0 answered · more may follow, up to 40" in page
    assert 'max="40"' in page
    # My tasks says the same of the task, not "0 / 10".
    listed = client.get(reverse("my_tasks")).content.decode()
    assert "0 answered · more may follow, up to 40" in listed
    assert "0 / 10" not in listed
    assert progress_most(config, BATCH_ITEMS) == 40
    url = reverse("api-assignment-submit", args=[assignment.pk])
    for position in range(BATCH_ITEMS):
        item = Item.objects.get(task=assignment.task, position=position)
        body = {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item),
        }
        answer = client.post(url, body, content_type="application/json").json()
        if position < BATCH_ITEMS - 1:
            assert (answer["total"], answer["most"]) == (BATCH_ITEMS, 40)
    # The tenth answer grew the task by the budget's rest: its size is final now.
    assert answer["total"] == 18
    assert answer["most"] is None
    page = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    assert "10 of 18 done" in page
    assert "answered · more may follow, up to 40" not in page
    listed = client.get(reverse("my_tasks")).content.decode()
    assert "10 / 18" in listed
    assert "more may follow" not in listed


def test_progress_knows_the_end_when_the_allocation_stops_or_the_task_is_full(rich) -> None:  # type: ignore[no-untyped-def]
    config = pull_config(rich, items_per_task=40)
    assert progress_most(config, 10) == 40
    assert progress_most(config, 40) is None
    AllocationState.objects.filter(config=config).update(stopped=AllocationState.Stop.DECIDED)
    assert progress_most(config, 10) is None
    prebuilt = make_config(rich, "direct_assessment", name="Prebuilt", outputs_per_screen=1)
    assert progress_most(prebuilt, 10) is None


def test_the_test_reads_scores_on_the_criterions_scale_oriented_higher_better() -> None:
    # DA and ESA sliders 0-100; ranks 1..k negated; MQM's score (minus weighted errors, at most
    # five non-translations of 25) as it is.
    assert _bounds(ProtocolConfig(protocol="direct_assessment", outputs_per_screen=1)) == (0, 100)
    assert _bounds(ProtocolConfig(protocol="esa", outputs_per_screen=1)) == (0, 100)
    assert _bounds(ProtocolConfig(protocol="ranking", outputs_per_screen=3)) == (-3, -1)
    assert _bounds(ProtocolConfig(protocol="mqm", outputs_per_screen=1)) == (-125, 0)
