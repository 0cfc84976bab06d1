"""Judgments: one per annotator and item, resends stored once, stale and out-of-order submits
refused explicitly, revisions kept in the history, time measured on the server, holds that
expire, and a fixed number of queries whatever the task size."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.judging.api import SubmitSerializer
from annotation.judging.screens import JudgmentError, annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import Assignment, Item, Judgment, JudgmentRevision, JudgmentValue, Task
from annotation.tasking.services import (
    assignment_release,
    assignments_expire,
    task_assign,
    task_assign_next,
)
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(owner, annotator):  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=2)
    assignment = task_assign_next(config=config, annotator=annotator)
    return config, assignment


def item_at(assignment: Assignment, position: int) -> Item:
    return Item.objects.get(task=assignment.task, position=position)


def record(
    assignment, annotator, position=None, *, revision=0, submission=None, answer=None, now=None
):  # type: ignore[no-untyped-def]
    item = item_at(assignment, assignment.items_done if position is None else position)
    return judgment_record(
        assignment_id=assignment.pk,
        annotator=annotator,
        item_id=item.pk,
        revision_seen=revision,
        submission_id=submission or uuid.uuid4(),
        answer=answer or full_answer(item),
        now=now,
    )


def test_the_same_submit_twice_stores_one_judgment(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    submission = uuid.uuid4()
    first = record(assignment, annotator, 0, submission=submission)
    second = record(assignment, annotator, 0, submission=submission)
    assert first.created
    assert second.replay
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assignment.refresh_from_db()
    assert assignment.items_done == 1


def test_a_submit_for_an_item_that_is_no_longer_current_is_refused(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    record(assignment, annotator, 0)
    with pytest.raises(JudgmentError) as stale:
        record(assignment, annotator, 0, revision=0)  # another window, based on no answer
    assert stale.value.code == "stale"
    assert stale.value.status == 409
    with pytest.raises(JudgmentError) as ahead:
        record(assignment, annotator, 5)
    assert ahead.value.code == "not_current"
    assert Judgment.objects.count() == 1


def test_a_revision_updates_the_judgment_and_keeps_the_earlier_answer(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    item = item_at(assignment, 0)
    record(assignment, annotator, 0, answer=full_answer(item, 2))
    record(assignment, annotator, 0, revision=1, answer=full_answer(item, 5))
    judgment = Judgment.objects.get()
    assert judgment.revision == 2
    assert set(JudgmentValue.objects.filter(judgment=judgment).values_list("value", flat=True)) == {
        5
    }
    history = JudgmentRevision.objects.get(judgment=judgment)
    assert history.revision == 1
    assert {v for out in history.values.values() for v in out.values()} == {2}
    assignment.refresh_from_db()
    assert assignment.items_done == 1  # a revision is not progress


def test_an_incomplete_or_out_of_range_answer_is_refused_with_the_reason(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    item = item_at(assignment, 0)
    answer = full_answer(item)
    first = next(iter(answer))
    bad = {**answer, first: {"adequacy": 6, "fluency": 3}}
    with pytest.raises(JudgmentError) as out_of_range:
        record(assignment, annotator, 0, answer=bad)
    assert "from 1 to 5" in out_of_range.value.message
    missing = dict(list(answer.items())[1:])
    with pytest.raises(JudgmentError) as incomplete:
        record(assignment, annotator, 0, answer=missing)
    assert "has no answer" in incomplete.value.message
    assert not Judgment.objects.exists()


def test_the_submit_serializer_checks_ranges_and_that_every_shown_output_is_answered(
    setup, annotator
) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    item = item_at(assignment, 0)
    answer = full_answer(item)
    first = next(iter(answer))
    context = {"assignment_id": assignment.pk, "annotator": annotator}

    def check(answer):  # type: ignore[no-untyped-def]
        body = {"item": item.pk, "revision": 0, "submission_id": str(uuid.uuid4())}
        return SubmitSerializer(data={**body, "answer": answer}, context=context)

    assert check(answer).is_valid()
    out_of_range = check({**answer, first: {"adequacy": 6, "fluency": 3}})
    assert not out_of_range.is_valid()
    assert any("from 1 to 5" in e for e in out_of_range.errors["answer"])
    incomplete = check(dict(list(answer.items())[1:]))
    assert not incomplete.is_valid()
    assert any("has no answer" in e for e in incomplete.errors["answer"])
    # Through the API: 400 with the first reason on screen and every reason listed.
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    response = client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(
            {
                "item": item.pk,
                "revision": 0,
                "submission_id": str(uuid.uuid4()),
                "answer": {first: {"adequacy": 0, "fluency": 9}},
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["detail"] == body["errors"][0]
    assert len(body["errors"]) == len(answer) - 1 + 2  # 3 outputs missing, 2 values out of range
    assert not Judgment.objects.exists()


def test_time_per_item_is_measured_on_the_server_from_shown_to_submitted(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    shown = timezone.now()
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, now=shown)
    record(assignment, annotator, 0, now=shown + timedelta(seconds=42))
    assert Judgment.objects.get().seconds == pytest.approx(42)
    # Not shown by the server (e.g. an API client that skipped "current"): unknown, not guessed.
    assignment.refresh_from_db()
    record(assignment, annotator, now=shown + timedelta(seconds=99))
    assert Judgment.objects.get(item__position=1).seconds is None


def test_a_reload_does_not_restart_the_clock_of_the_current_item(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    shown = timezone.now()
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, now=shown)
    annotation_screen(
        assignment_id=assignment.pk, annotator=annotator, now=shown + timedelta(seconds=30)
    )
    record(assignment, annotator, 0, now=shown + timedelta(seconds=42))
    judgment = Judgment.objects.get()
    assert judgment.seconds == pytest.approx(42)
    assert judgment.shown_at == shown


def test_looking_at_an_earlier_item_keeps_the_clock_of_the_current_one(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    record(assignment, annotator, 0)
    assignment.refresh_from_db()
    shown = timezone.now()
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, now=shown)
    # The annotator goes back to item 1 and returns without changing it.
    annotation_screen(
        assignment_id=assignment.pk,
        annotator=annotator,
        position=0,
        now=shown + timedelta(seconds=10),
    )
    annotation_screen(
        assignment_id=assignment.pk, annotator=annotator, now=shown + timedelta(seconds=20)
    )
    record(assignment, annotator, 1, now=shown + timedelta(seconds=50))
    assert Judgment.objects.get(item__position=1).seconds == pytest.approx(50)


def test_a_submit_straight_after_looking_at_an_earlier_item_still_gets_its_seconds(
    setup, annotator
) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    record(assignment, annotator, 0)
    assignment.refresh_from_db()
    shown = timezone.now()
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, now=shown)
    annotation_screen(
        assignment_id=assignment.pk,
        annotator=annotator,
        position=0,
        now=shown + timedelta(seconds=10),
    )
    # The answer to item 2 was still on screen in another tab.
    record(assignment, annotator, 1, now=shown + timedelta(seconds=35))
    assert Judgment.objects.get(item__position=1).seconds == pytest.approx(35)


def test_a_revision_keeps_the_time_of_the_first_answer(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    shown = timezone.now()
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, now=shown)
    record(assignment, annotator, 0, now=shown + timedelta(seconds=20))
    later = shown + timedelta(minutes=5)
    annotation_screen(assignment_id=assignment.pk, annotator=annotator, position=0, now=later)
    record(assignment, annotator, 0, revision=1, now=later + timedelta(seconds=3))
    judgment = Judgment.objects.get()
    assert judgment.revision == 2
    assert judgment.shown_at == shown
    assert judgment.seconds == pytest.approx(20)
    assert JudgmentRevision.objects.get(judgment=judgment).seconds == pytest.approx(20)


def test_finishing_every_item_completes_the_assignment(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    for _ in range(assignment.task.size):
        assignment.refresh_from_db()
        result = record(assignment, annotator)
    assert result.finished
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE
    assert assignment.items_done == assignment.task.size
    with pytest.raises(JudgmentError) as finished:
        annotation_screen(assignment_id=assignment.pk, annotator=annotator)
    assert finished.value.code == "finished"


def test_an_idle_hold_expires_and_the_task_returns_to_the_pool(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    config, assignment = setup
    record(assignment, annotator, 0)
    later = timezone.now() + timedelta(minutes=config.hold_minutes + 1)
    assert assignments_expire(now=later) == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.EXPIRED
    assert Task.objects.get(pk=assignment.task_id).slots_taken == 0
    with pytest.raises(JudgmentError) as ended:
        record(assignment, annotator, 1)
    assert ended.value.code == "not_active"
    # Taking a task again resumes the same one, with the judgment made so far.
    again = task_assign_next(config=config, annotator=annotator, now=later)
    assert again.pk == assignment.pk
    assert again.status == Assignment.Status.ACTIVE
    assert again.items_done == 1


def test_pull_gives_the_task_in_progress_then_fills_tasks_in_order(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    config, assignment = setup
    assert task_assign_next(config=config, annotator=annotator).pk == assignment.pk
    other = make_user("second")
    third = make_user("third")
    assert task_assign_next(config=config, annotator=other).task_id == assignment.task_id
    # Two annotators per task: the third gets the next task.
    assert task_assign_next(config=config, annotator=third).task.position == 1


def test_a_released_task_frees_its_slot(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    assignment_release(assignment=assignment)
    assert Task.objects.get(pk=assignment.task_id).slots_taken == 0


def test_push_assigns_a_task_without_expiry_and_never_beyond_its_slots(setup) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    task = assignment.task
    pushed = task_assign(task=task, annotator=make_user("pushed"))
    assert pushed.origin == Assignment.Origin.PUSH
    assert pushed.expires_at is None
    from annotation.tasking.source import TaskError

    with pytest.raises(TaskError, match="all the annotators"):
        task_assign(task=task, annotator=make_user("too-many"))


# transaction=True: outside the test's wrapping transaction, as in production, so the count has
# no savepoints that only the test harness adds.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("items_per_task", [4, 40])
def test_the_annotation_page_takes_at_most_eight_queries_and_a_submit_with_the_next_item_four(
    owner,
    annotator,
    django_assert_max_num_queries,
    items_per_task,  # type: ignore[no-untyped-def]
) -> None:
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "adequacy_fluency",
        mode="monolingual",
        items_per_task=items_per_task,
        context_segments=2,
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    url = reverse("api-assignment-submit", args=[assignment.pk])
    for position in range(3):
        with django_assert_max_num_queries(8):
            page = client.get(reverse("annotate", args=[assignment.pk]))
        assert page.status_code == 200
        item = item_at(assignment, position)
        body = {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item, 3),
        }
        # Session and user (2), the item answered (1), then on PostgreSQL one statement that
        # stores the answer and reads the next item (with its neighbours) that the answer
        # carries; on SQLite BEGIN, three statements, COMMIT, and two reads.
        with django_assert_max_num_queries(4 if connection.vendor == "postgresql" else 10):
            response = client.post(url, json.dumps(body), content_type="application/json")
        assert response.status_code == 201, response.content
        assert response.json()["next"]["item"] == item_at(assignment, position + 1).pk
    # Revising an earlier item: the page shows the answer, the submit keeps the history.
    with django_assert_max_num_queries(8):
        page = client.get(reverse("annotate_item", args=[assignment.pk, 1]))
    assert page.status_code == 200
    item = item_at(assignment, 0)
    body = {
        "item": item.pk,
        "revision": 1,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item, 4),
    }
    # A revision reads the task's current item afresh for its answer (3 queries).
    with django_assert_max_num_queries(11):
        response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 200
    assert response.json()["created"] is False


def test_the_submit_api_answers_409_with_a_message_for_a_stale_item(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    record(assignment, annotator, 0)
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    item = item_at(assignment, 0)
    response = client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(
            {
                "item": item.pk,
                "revision": 0,
                "submission_id": str(uuid.uuid4()),
                "answer": full_answer(item),
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 409
    assert response.json()["code"] == "stale"
    assert "reload" in response.json()["detail"]


def test_nobody_else_can_open_or_answer_an_annotators_task(setup, other_organizer) -> None:  # type: ignore[no-untyped-def]
    _, assignment = setup
    intruder = make_user("intruder")
    client = Client()
    client.login(username=intruder.username, password=PASSWORD)
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 404
    item = item_at(assignment, 0)
    response = client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(
            {
                "item": item.pk,
                "revision": 0,
                "submission_id": str(uuid.uuid4()),
                "answer": full_answer(item),
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 404
    assert not Judgment.objects.exists()
    anonymous = Client()
    assert anonymous.get(reverse("annotate", args=[assignment.pk])).status_code == 302
    assert anonymous.post(reverse("api-assignment-submit", args=[assignment.pk])).status_code == 401


def test_the_api_serves_my_tasks_the_current_item_and_taking_a_task(setup, annotator) -> None:  # type: ignore[no-untyped-def]
    config, assignment = setup
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    mine = client.get(reverse("api-my-tasks")).json()
    assert [a["id"] for a in mine] == [str(assignment.pk)]
    current = client.get(reverse("api-assignment-current", args=[assignment.pk])).json()
    assert current["position"] == 1
    assert len(current["outputs"]) == 4
    assert [c["key"] for c in current["criteria"]] == ["adequacy", "fluency"]
    taken = client.post(reverse("api-config-take", args=[config.pk]))
    assert taken.json()["id"] == str(assignment.pk)


def test_the_api_current_item_carries_the_document_context_and_fluency_first(
    owner, annotator
) -> None:  # type: ignore[no-untyped-def]
    from annotation.models import Segment

    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign, "adequacy_fluency", items_per_task=10, context_segments=2, fluency_first=True
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    # Open the task at an item whose segment has two neighbours on each side in its document.
    items = Item.objects.filter(task=assignment.task).select_related("segment").order_by("position")
    item = next(
        i
        for i in items
        if Segment.objects.filter(
            document_id=i.segment.document_id,
            position_in_document__in=[i.segment.position_in_document + d for d in (-2, -1, 1, 2)],
        ).count()
        == 4
    )
    Assignment.objects.filter(pk=assignment.pk).update(items_done=item.position)
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    current = client.get(reverse("api-assignment-current", args=[assignment.pk])).json()
    assert current["item"] == item.pk
    assert current["fluency_first"] is True

    def source(offset: int) -> str:
        return Segment.objects.get(
            document_id=item.segment.document_id,
            position_in_document=item.segment.position_in_document + offset,
        ).source

    assert current["context_before"] == [source(-2), source(-1)]
    assert current["context_after"] == [source(1), source(2)]
    # The page shows the same neighbours.
    page = client.get(reverse("annotate", args=[assignment.pk]))
    assert page.context["screen"].context_before == current["context_before"]
    assert page.context["screen"].context_after == current["context_after"]


@pytest.mark.parametrize("mode", ["bilingual", "monolingual"])
def test_the_context_is_the_neighbours_sources_or_first_references_in_document_order(
    owner,  # type: ignore[no-untyped-def]
    annotator,
    mode: str,
) -> None:
    """On PostgreSQL the neighbours come in the outputs' query, elsewhere in a second one; both
    give the document's segments around the item, by position, their sources in a bilingual
    task and their first references in a monolingual one."""
    from annotation.models import Reference, Segment

    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign, "adequacy_fluency", mode=mode, items_per_task=10, context_segments=1
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    seen = 0
    for item in Item.objects.filter(task=assignment.task).select_related("segment"):
        Assignment.objects.filter(pk=assignment.pk).update(items_done=item.position)
        current = client.get(reverse("api-assignment-current", args=[assignment.pk])).json()
        assert current["item"] == item.pk
        at = item.segment.position_in_document
        expected = {}
        for offset in (-1, 1):
            neighbour = Segment.objects.filter(
                document_id=item.segment.document_id, position_in_document=at + offset
            ).first()
            if neighbour is None:
                continue
            if mode == "monolingual":
                first = Reference.objects.filter(segment=neighbour, index=0).first()
                if first is not None:
                    expected[offset] = first.text
            else:
                expected[offset] = neighbour.source
        assert current["context_before"] == [expected[o] for o in (-1,) if o in expected]
        assert current["context_after"] == [expected[o] for o in (1,) if o in expected]
        seen += len(expected)
    assert seen > 0


def test_expiring_gives_each_task_back_every_slot_of_its_expired_holds_and_nothing_else(
    owner,
) -> None:  # type: ignore[no-untyped-def]
    """``assignments_expire`` (one statement on PostgreSQL, an ORM transaction on SQLite: this
    module runs on both): two expired holds of one task give it two slots back, a hold still
    within its time and a finished task are left alone, and the count says how many expired."""
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "adequacy_fluency", items_per_task=10, annotations_per_task=2)
    first, second = Task.objects.filter(config=config).order_by("position")[:2]
    users = [make_user(f"u{i}") for i in range(4)]
    campaign.annotators.add(*users)
    now = timezone.now()
    holds = [task_assign(task=first, annotator=u) for u in users[:2]]
    holds += [task_assign(task=second, annotator=u) for u in users[2:]]
    Assignment.objects.filter(pk__in=[h.pk for h in holds[:3]]).update(
        expires_at=now - timedelta(seconds=1)
    )
    Assignment.objects.filter(pk=holds[3].pk).update(expires_at=now + timedelta(minutes=5))
    Assignment.objects.filter(pk=holds[2].pk).update(status=Assignment.Status.DONE)

    assert assignments_expire(now=now) == 2
    assert Task.objects.get(pk=first.pk).slots_taken == 0
    assert Task.objects.get(pk=second.pk).slots_taken == 2
    statuses = dict(Assignment.objects.values_list("pk", "status"))
    assert [statuses[h.pk] for h in holds] == [
        Assignment.Status.EXPIRED,
        Assignment.Status.EXPIRED,
        Assignment.Status.DONE,
        Assignment.Status.ACTIVE,
    ]
    assert assignments_expire(now=now) == 0
    assert Task.objects.get(pk=first.pk).slots_taken == 0
