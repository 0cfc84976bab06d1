"""Expired holds return to the pool wherever it matters — the "My tasks" page and API, a push, an
annotator opening a task whose hold ran out — and that annotator gets the task back while it has
a free slot (a clear message when it has none). On PostgreSQL, as the claims rely on its locking."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Judgment, Task
from annotation.tasking.services import task_assign, task_assign_next
from annotation.tasking.source import TaskError
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign, make_user
from tests.support.threads import run_together

pytestmark = pytest.mark.django_db


@pytest.fixture
def config(owner, annotator):  # type: ignore[no-untyped-def]
    """One annotator per task, so an expired hold is the only way a task's slot comes back."""
    assert connection.vendor == "postgresql", "holds are tested on PostgreSQL (set DATABASE_URL)"
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    return make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=1)


def run_out(assignment: Assignment) -> None:
    """Let the hold's time pass without anything noticing (no pull happens meanwhile)."""
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def free_tasks(client: Client) -> int:
    (open_config,) = client.get(reverse("my_tasks")).context["open_configs"]
    return int(open_config.free_tasks)


def test_my_tasks_counts_the_task_of_an_expired_hold_as_free_again(config, annotator) -> None:  # type: ignore[no-untyped-def]
    n_tasks = Task.objects.filter(config=config).count()
    other = make_user("other")
    config.campaign.annotators.add(other)
    held = task_assign_next(config=config, annotator=other)
    client = logged_in(annotator)
    assert free_tasks(client) == n_tasks - 1
    run_out(held)
    assert free_tasks(client) == n_tasks
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert Task.objects.get(pk=held.task_id).slots_taken == 0


def test_my_tasks_offers_to_resume_an_expired_hold_and_counts_it(config, annotator) -> None:  # type: ignore[no-untyped-def]
    n_tasks = Task.objects.filter(config=config).count()
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    client = logged_in(annotator)
    page = client.get(reverse("my_tasks"))
    assert free_tasks(client) == n_tasks  # their own expired task can be taken again
    assert reverse("annotate", args=[held.pk]) in page.content.decode()
    assert "Resume" in page.content.decode()


def test_the_api_lists_an_expired_hold_as_expired(config, annotator) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    (row,) = logged_in(annotator).get(reverse("api-my-tasks")).json()
    assert row["status"] == "expired"


def test_opening_a_task_after_the_hold_ran_out_resumes_it_when_a_slot_is_free(
    config, annotator
) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    page = logged_in(annotator).get(reverse("annotate", args=[held.pk]))
    assert page.status_code == 200
    held.refresh_from_db()
    assert held.status == Assignment.Status.ACTIVE
    assert held.expires_at > timezone.now() + timedelta(minutes=config.hold_minutes - 1)
    assert Task.objects.get(pk=held.task_id).slots_taken == 1


def test_opening_a_task_whose_place_was_taken_says_so_and_keeps_the_answers(
    config, annotator
) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    client = logged_in(annotator)
    client.get(reverse("annotate", args=[held.pk]))
    item = held.task.items.get(position=0)
    submitted = client.post(
        reverse("api-assignment-submit", args=[held.pk]),
        {
            "item": item.pk,
            "revision": 0,
            "submission_id": "7b1d6c1e-8f0a-4a4e-9b51-0d1f2c3a4b5c",
            "answer": full_answer(item),
        },
        content_type="application/json",
    )
    assert submitted.status_code == 201
    run_out(held)
    # Someone pulls meanwhile: the expired hold goes back to the pool and they get that task.
    other = make_user("other")
    config.campaign.annotators.add(other)
    taken = task_assign_next(config=config, annotator=other)
    assert taken.task_id == held.task_id
    response = client.get(reverse("annotate", args=[held.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("my_tasks")
    (message,) = [str(m) for m in get_messages(response.wsgi_request)]
    assert "other annotators have taken all its places" in message
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert Task.objects.get(pk=held.task_id).slots_taken == 1  # never oversubscribed
    assert Judgment.objects.filter(assignment=held).count() == 1


def test_the_api_answers_409_with_the_reason_when_the_place_is_gone(config, annotator) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    other = make_user("other")
    config.campaign.annotators.add(other)
    task_assign_next(config=config, annotator=other)
    response = logged_in(annotator).get(reverse("api-assignment-current", args=[held.pk]))
    assert response.status_code == 409
    assert "other annotators have taken all its places" in response.json()["detail"]


def test_a_push_can_give_the_slot_of_an_expired_hold(config, annotator) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    pushed = task_assign(task=held.task, annotator=make_user("pushed"))
    assert pushed.origin == Assignment.Origin.PUSH
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert Task.objects.get(pk=held.task_id).slots_taken == 1


def test_a_push_gives_an_annotator_their_expired_assignment_back(config, annotator) -> None:  # type: ignore[no-untyped-def]
    held = task_assign_next(config=config, annotator=annotator)
    run_out(held)
    pushed = task_assign(task=held.task, annotator=annotator)
    assert pushed.pk == held.pk
    assert pushed.status == Assignment.Status.ACTIVE
    assert pushed.expires_at is None
    with pytest.raises(TaskError, match="already has this task"):
        task_assign(task=held.task, annotator=annotator)


@pytest.mark.django_db(transaction=True)
def test_a_returning_annotator_and_a_new_one_racing_for_the_freed_place_get_it_once(
    owner, annotator
) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    others = [make_user(f"racer{i}") for i in range(5)]
    campaign.annotators.add(annotator, *others)
    config = make_config(campaign, "ranking", items_per_task=10, annotations_per_task=1)
    n_tasks = Task.objects.filter(config=config).count()
    # Every task is held; only the annotator's hold runs out.
    held = task_assign_next(config=config, annotator=annotator)
    for n in range(n_tasks - 1):
        task_assign_next(config=config, annotator=make_user(f"holder{n}"))
    run_out(held)

    def reopen() -> int:
        return logged_in(annotator).get(reverse("annotate", args=[held.pk])).status_code

    results = run_together(
        [reopen] + [lambda o=o: task_assign_next(config=config, annotator=o) for o in others]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    resumed = results[0] == 200
    pulled = [r for r in results[1:] if r is not None]
    assert int(resumed) + len(pulled) == 1
    assert Task.objects.get(pk=held.task_id).slots_taken == 1
    assert (
        Assignment.objects.filter(task_id=held.task_id, status=Assignment.Status.ACTIVE).count()
        == 1
    )
