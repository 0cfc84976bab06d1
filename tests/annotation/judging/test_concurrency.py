"""Concurrency on PostgreSQL with real threads: tasks are never oversubscribed, and racing,
repeated and stale submits leave exactly one judgment per annotator and item, none lost."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.db.models import F

from annotation.judging.screens import JudgmentError
from annotation.judging.services import judgment_record
from annotation.models import Assignment, Item, Judgment, ProtocolConfig, Task
from annotation.tasking.services import task_assign_next
from tests.factories import full_answer, make_config, make_rich_campaign, make_user
from tests.support.threads import run_together

pytestmark = pytest.mark.django_db(transaction=True)


def test_twenty_annotators_pulling_at_once_never_oversubscribe_a_task(owner) -> None:  # type: ignore[no-untyped-def]
    assert connection.vendor == "postgresql", "locking is tested on PostgreSQL (set DATABASE_URL)"
    campaign = make_rich_campaign(owner=owner)
    # 60 segments × 4 systems / 4 per screen = 60 screens, 8 real per task → 8 tasks, 2 each.
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=2)
    annotators = [make_user(f"a{i:02d}") for i in range(20)]
    campaign.annotators.add(*annotators)
    n_tasks = Task.objects.filter(config=config).count()
    assert n_tasks == 8

    results = run_together(
        [lambda a=a: task_assign_next(config=config, annotator=a) for a in annotators]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    taken = [r for r in results if r is not None]
    assert len(taken) == min(20, 2 * n_tasks) == 16
    per_task = Counter(
        Assignment.objects.filter(task__config=config).values_list("task_id", flat=True)
    )
    assert max(per_task.values()) == 2
    assert set(per_task.values()) == {2}
    for task in Task.objects.filter(config=config):
        assert task.slots_taken == per_task[task.pk]
    per_annotator = Counter(Assignment.objects.values_list("annotator_id", flat=True))
    assert max(per_annotator.values()) == 1


class ClaimInFlight:
    """Another annotator's pull in the middle of claiming ``task``: its row locked as the pull's
    slot UPDATE locks it, on a connection of its own, until ``end(commit=…)``."""

    def __init__(self, task: Task) -> None:
        self.locked = threading.Event()
        self.done = threading.Event()
        self.commit = False
        self.thread = threading.Thread(target=self._hold, args=(task.pk,))
        self.thread.start()
        assert self.locked.wait(10)

    def _hold(self, task_id: int) -> None:
        try:
            with transaction.atomic():
                Task.objects.filter(pk=task_id).update(slots_taken=F("slots_taken") + 1)
                self.locked.set()
                self.done.wait(30)
                if not self.commit:
                    transaction.set_rollback(True)
        finally:
            connections.close_all()

    def end(self, *, commit: bool) -> None:
        self.commit = commit
        self.done.set()
        self.thread.join(30)


def pull_in_thread(config: ProtocolConfig, annotator: Any) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []

    def pull() -> None:
        try:
            result.append(task_assign_next(config=config, annotator=annotator))
        except Exception as exc:
            result.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=pull)
    thread.start()
    return thread, result


@pytest.fixture
def one_per_task(owner):  # type: ignore[no-untyped-def]
    """A config whose tasks take one annotator each, its tasks in order, and an annotator."""
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=1)
    annotator = make_user("puller")
    campaign.annotators.add(annotator)
    return config, list(Task.objects.filter(config=config).order_by("position")), annotator


def test_a_pull_passes_over_a_task_another_pull_is_claiming(one_per_task) -> None:  # type: ignore[no-untyped-def]
    """Annotators pulling at once do not queue on one task's row: while another pull holds the
    first free task, this one takes the next at once instead of waiting for that pull to end."""
    config, (first, second, *_), annotator = one_per_task
    other = ClaimInFlight(first)
    try:
        thread, result = pull_in_thread(config, annotator)
        thread.join(10)
        # Still held: a pull that waited for the lock would not be finished.
        assert not thread.is_alive(), "the pull waited for the other pull's claim"
    finally:
        other.end(commit=True)
    thread.join(30)
    assert isinstance(result[0], Assignment), result
    assert result[0].task_id == second.pk
    assert Task.objects.get(pk=first.pk).slots_taken == 1
    assert Task.objects.get(pk=second.pk).slots_taken == 1


def test_a_pull_waits_for_the_last_free_task_and_gets_it_if_its_claim_rolls_back(
    one_per_task,
) -> None:  # type: ignore[no-untyped-def]
    """Passing over claimed tasks never hides a free one: when the only free task is being
    claimed by another pull, this one waits for it, and gets the task when that pull rolls back
    (a skipped row is not a taken one)."""
    config, (*taken, last), annotator = one_per_task
    Task.objects.filter(pk__in=[t.pk for t in taken]).update(slots_taken=1)
    other = ClaimInFlight(last)
    try:
        thread, result = pull_in_thread(config, annotator)
        thread.join(1.0)
        assert thread.is_alive(), "the pull did not wait for the claim in flight"
    finally:
        other.end(commit=False)
    thread.join(30)
    assert not thread.is_alive()
    assert isinstance(result[0], Assignment), result
    assert result[0].task_id == last.pk
    assert Task.objects.get(pk=last.pk).slots_taken == 1


def test_one_annotator_double_clicking_take_gets_one_task(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "ranking", items_per_task=10)
    results = run_together([lambda: task_assign_next(config=config, annotator=annotator)] * 6)
    assert len({r.pk for r in results}) == 1
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_racing_repeated_and_stale_submits_leave_one_judgment_per_item_and_lose_none(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(
        campaign,
        "direct_assessment",
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=2,
    )
    annotators = [make_user(f"r{i}") for i in range(4)]
    campaign.annotators.add(*annotators)
    assignments = [task_assign_next(config=config, annotator=a) for a in annotators]
    size = assignments[0].task.size
    accepted: Counter[tuple[int, int]] = Counter()

    for position in range(size):
        jobs = []
        for annotator, assignment in zip(annotators, assignments, strict=True):
            item = Item.objects.get(task=assignment.task, position=position)
            same = uuid.uuid4()
            answer = full_answer(item, 60)
            # Each annotator: the same submit three times (double clicks, retries) and one
            # from a second window with another id, all at once.
            for submission in (same, same, same, uuid.uuid4()):
                jobs.append(
                    lambda a=annotator, s=assignment, i=item, sub=submission, ans=answer: (
                        a.pk,
                        i.pk,
                        judgment_record(
                            assignment_id=s.pk,
                            annotator=a,
                            item_id=i.pk,
                            revision_seen=0,
                            submission_id=sub,
                            answer=ans,
                        ),
                    )
                )
        for result in run_together(jobs):
            if isinstance(result, JudgmentError):
                assert result.code in {"not_current", "stale"}, result.message
                continue
            assert not isinstance(result, Exception), result
            annotator_id, item_id, recorded = result
            if recorded.created:
                accepted[(annotator_id, item_id)] += 1

    # Exactly one judgment per (annotator, item), each item answered, nothing created twice.
    assert set(accepted.values()) == {1}
    rows = Counter(Judgment.objects.values_list("annotator_id", "item_id"))
    assert set(rows.values()) == {1}
    assert len(rows) == len(annotators) * size
    assert set(rows) == set(accepted)
    for assignment in assignments:
        assignment.refresh_from_db()
        assert assignment.items_done == size
        assert assignment.status == Assignment.Status.DONE
