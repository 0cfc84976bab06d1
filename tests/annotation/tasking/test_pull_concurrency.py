"""Pull-mode growth under concurrency: annotators who reach the end of their tasks' first batch
at the same moment grow their tasks one at a time, so the budget's last judgments are spent
once."""

from __future__ import annotations

import uuid

import pytest

from annotation.judging.services import judgment_record
from annotation.models import AllocationState, Item, ItemKind
from annotation.tasking.pull import BATCH_ITEMS, config_tasks_build
from annotation.tasking.services import task_assign_next
from tests.factories import full_answer, make_config, make_rich_campaign, make_user
from tests.support.threads import run_together

pytestmark = pytest.mark.django_db(transaction=True)


def test_racing_growths_never_allocate_past_the_budget(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    # Three tasks of one first batch each (30 real screens); the 10 judgments left are fewer
    # than the three next batches would take (6 real screens each).
    config = make_config(
        campaign,
        "direct_assessment",
        build=False,
        outputs_per_screen=1,
        items_per_task=20,
        allocation="adaptive",
        allocation_budget=40,
    )
    config_tasks_build(config=config)
    annotators = [make_user(f"g{i}") for i in range(3)]
    campaign.annotators.add(*annotators)
    assignments = [task_assign_next(config=config, annotator=a) for a in annotators]
    last = []
    for annotator, assignment in zip(annotators, assignments, strict=True):
        for position in range(BATCH_ITEMS):
            item = Item.objects.get(task=assignment.task, position=position)
            if position == BATCH_ITEMS - 1:
                last.append((annotator, assignment, item))
                break
            judgment_record(
                assignment_id=assignment.pk,
                annotator=annotator,
                item_id=item.pk,
                revision_seen=0,
                submission_id=uuid.uuid4(),
                answer=full_answer(item, 50),
            )
    # All three answer their last built item at once: each answer asks for a growth.
    results = run_together(
        [
            lambda a=a, s=s, i=i: judgment_record(
                assignment_id=s.pk,
                annotator=a,
                item_id=i.pk,
                revision_seen=0,
                submission_id=uuid.uuid4(),
                answer=full_answer(i, 50),
            )
            for a, s, i in last
        ]
    )
    for result in results:
        assert not isinstance(result, Exception), result
    real = Item.objects.filter(task__config=config, kind=ItemKind.REAL).count()
    assert real == 40
    state = AllocationState.objects.get(config=config)
    assert state.allocated == 40
