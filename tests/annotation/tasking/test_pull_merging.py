"""Pull mode with merged identical outputs (on by default): the screens a pull task grows
show each distinct text of a segment once and credit the other systems that produced it, and
the allocation counts a merged answer as a judgment of every credited system."""

from __future__ import annotations

import uuid
from collections import defaultdict

import pytest

from annotation.judging.services import judgment_record
from annotation.models import Item, ItemKind, ItemOutput, ItemOutputCredit, Task
from annotation.tasking.merging import distinct_pick, normalised_text
from annotation.tasking.pull import allocation_samples, config_tasks_build
from annotation.tasking.services import task_assign_next
from tests.factories import full_answer, make_config
from tests.merge_factories import MERGE_OUTPUTS, MERGE_SYSTEMS, make_merge_campaign

pytestmark = pytest.mark.django_db

NO_QC = {"qc_bad_reference": 0, "qc_repeat": 0, "qc_reference": 0}


def _pull_config(owner, protocol: str, k: int):  # type: ignore[no-untyped-def]
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign,
        protocol,
        build=False,
        outputs_per_screen=k,
        items_per_task=30,
        allocation="adaptive",
        merge_identical=True,
        **NO_QC,
    )
    result = config_tasks_build(config=config)
    credits = ItemOutputCredit.objects.filter(output__item__task__config=config).count()
    # The build summary counts the credited judgments as saved (the screens are the budget's).
    assert result.saved_judgments == credits * config.annotations_per_task
    assert result.saved_screens == 0
    return config


def _credits(config) -> dict[int, list[str]]:  # type: ignore[no-untyped-def]
    credits: dict[int, list[str]] = defaultdict(list)
    for output, name in ItemOutputCredit.objects.filter(
        output__item__task__config=config
    ).values_list("output_id", "system__name"):
        credits[output].append(name)
    return credits


def test_distinct_pick_takes_groups_in_the_order_of_the_most_wanted_system() -> None:
    texts = ["a", "b", "a ", "c", "b"]
    assert distinct_pick([2, 4, 0, 1, 3], texts, 2) == [(2, 0), (4, 1)]
    assert distinct_pick([3, 0, 1, 2, 4], texts, 1) == [(3,)]
    # One distinct text: a ranking compares nothing, so the systems are shown unmerged.
    assert distinct_pick([1, 0], ["x", "x"], 2, min_width=2) == [(1,), (0,)]
    assert distinct_pick([1, 0], ["x", "x"], 2) == [(1, 0)]


@pytest.mark.parametrize(
    ("protocol", "k"), [("direct_assessment", 1), ("adequacy_fluency", 3), ("ranking", 3)]
)
def test_pull_screens_show_each_text_once_and_credit_the_systems_that_produced_it(
    owner, protocol: str, k: int
) -> None:  # type: ignore[no-untyped-def]
    config = _pull_config(owner, protocol, k)
    credits = _credits(config)
    assert credits, "the merge campaign's identical outputs must be credited"
    outputs = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
    by_item: dict[int, list[ItemOutput]] = defaultdict(list)
    for output in outputs.select_related("system", "item__segment"):
        by_item[output.item_id].append(output)
    for shown in by_item.values():
        segment = shown[0].item.segment.position
        texts = MERGE_OUTPUTS[segment]
        distinct = {normalised_text(t) for t in texts}
        if protocol == "ranking" and len(distinct) < 2:
            # A ranking of one text compares nothing: that segment's screen is unmerged.
            assert len(shown) == k
            assert not any(credits[o.pk] for o in shown)
            continue
        assert len({normalised_text(o.text) for o in shown}) == len(shown)
        assert len(shown) == min(k, len(distinct))
        for output in shown:
            same = {
                name
                for name, text in zip(MERGE_SYSTEMS, texts, strict=True)
                if normalised_text(text) == normalised_text(output.text)
            }
            assert {output.system.name, *credits[output.pk]} == same


def test_the_allocation_counts_a_merged_answer_for_every_credited_system(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    config = _pull_config(owner, "direct_assessment", 1)
    config.campaign.annotators.add(annotator)
    assignment = task_assign_next(config=config, annotator=annotator)
    task = Task.objects.get(pk=assignment.task_id)
    for position in range(task.size):
        item = Item.objects.get(task=task, position=position)
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=full_answer(item, value=10 + position),
        )
    expected: dict[int, list[float]] = defaultdict(list)
    # The last answer grew the task: only the answered outputs have values.
    judged = ItemOutput.objects.filter(item__task=task, kind=ItemKind.REAL, values__isnull=False)
    for output in judged.distinct():
        value = float(output.values.get().value)
        expected[output.system_id].append(value)
        for credit in output.credits.all():
            expected[credit.system_id].append(value)
    ids, samples = allocation_samples(config)
    assert any(ItemOutputCredit.objects.filter(output__item__task=task))
    for system_id, values in zip(ids, samples, strict=True):
        assert sorted(values.tolist()) == sorted(expected[system_id])
