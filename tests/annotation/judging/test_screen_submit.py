"""A whole document screen in one request: every segment's answer (and the screen's document
score) stored together or not at all. A wrong answer among many stores nothing and names its
segment; a segment refused (not current, stale) rolls back the ones before it; a resent screen
is stored once; two windows sending the same screen at once store one of them, whole."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.judging.screen_submit import ItemAnswer, screen_record
from annotation.judging.screens import JudgmentError
from annotation.models import Assignment, DocumentJudgment, Item, Judgment, ProtocolConfig
from annotation.tasking.services import task_assign_next
from tests.factories import full_answer, make_config, make_rich_campaign, make_user
from tests.support.threads import run_together

pytestmark = pytest.mark.django_db


def held(owner: Any, annotator: Any, **fields: Any) -> Assignment:
    """A task of document screens (windows of 4, 3 and 3 segments) held by ``annotator``."""
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "direct_assessment",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=4,
        items_per_task=20,
        **fields,
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    return assignment


def screen_at(assignment: Assignment, position: int = 0) -> list[Item]:
    first = Item.objects.get(task=assignment.task, position=position)
    return list(
        Item.objects.filter(task=assignment.task, screen=first.screen)
        .select_related("segment")
        .order_by("position")
    )


def entry(item: Item, value: Any = 50, revision: int = 0) -> dict[str, Any]:
    return {
        "item": item.pk,
        "revision": revision,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item, value),
    }


@pytest.fixture
def api(annotator) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    return client


def send(api: APIClient, assignment: Assignment, body: dict[str, Any]) -> Any:
    return api.post(
        reverse("api-assignment-screen-submit", args=[assignment.pk]), body, format="json"
    )


def scores(assignment: Assignment) -> dict[int, float]:
    return {
        j.item.position: next(iter(j.answer.values()))["score"]
        for j in Judgment.objects.filter(assignment=assignment).select_related("item")
    }


def test_a_whole_screen_is_stored_in_one_request(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_at(assignment)
    assert len(items) == 4
    # Any order in the request: stored in document order.
    body = {
        "screen": items[0].pk,
        "items": [entry(i, 60 + n) for n, i in reversed([*enumerate(items)])],
    }
    response = send(api, assignment, body)
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert [r["item"] for r in answer["items"]] == [i.pk for i in reversed(items)]
    assert {r["revision"] for r in answer["items"]} == {1}
    assert (answer["done"], answer["total"], answer["finished"]) == (4, assignment.task.size, False)
    assert answer["next_url"] == reverse("annotate", args=[assignment.pk])
    assert scores(assignment) == {0: 60, 1: 61, 2: 62, 3: 63}
    assignment.refresh_from_db()
    assert assignment.items_done == 4
    # The next screen's first item is noted as shown, as a single submit notes it.
    assert assignment.shown_item_id == Item.objects.get(task=assignment.task, position=4).pk
    # The screen's time goes to its first answer; the later ones were shown when the one
    # before them was stored.
    seconds = list(
        Judgment.objects.filter(assignment=assignment)
        .order_by("item__position")
        .values_list("seconds", flat=True)
    )
    assert seconds[1:] == [0.0, 0.0, 0.0]


def test_a_wrong_answer_among_many_stores_nothing_and_names_its_segment(
    api, owner, annotator
) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_at(assignment)
    entries = [entry(i) for i in items]
    entries[2]["answer"] = full_answer(items[2], 101)  # out of range
    entries[3]["answer"] = {}  # unanswered
    response = send(api, assignment, {"screen": items[0].pk, "items": entries})
    assert response.status_code == 400
    body = response.json()
    segment = items[2].segment.position_in_document + 1
    assert body["code"] == "invalid"
    assert body["item"] == items[2].pk
    assert body["segment"] == segment
    assert body["detail"].startswith(f"Segment {segment}: ")
    # Every wrong segment is named, each problem once.
    later = items[3].segment.position_in_document + 1
    assert [e.split(":")[0] for e in body["errors"]] == [f"Segment {segment}", f"Segment {later}"]
    assert not Judgment.objects.filter(assignment=assignment).exists()
    assignment.refresh_from_db()
    assert assignment.items_done == 0


def test_a_refused_segment_rolls_back_the_ones_before_it(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_at(assignment)
    # The third segment is left out: the fourth is not the current item when its turn comes.
    # The first two were stored by then, and are rolled back with it.
    entries = [entry(i) for n, i in enumerate(items) if n != 2]
    response = send(api, assignment, {"screen": items[0].pk, "items": entries})
    assert response.status_code == 409
    body = response.json()
    assert body["item"] == items[3].pk
    assert body["code"] == "not_current"
    assert body["detail"].startswith(f"Segment {items[3].segment.position_in_document + 1}: ")
    assert not Judgment.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=assignment.pk).items_done == 0


def test_a_resent_screen_is_stored_once_and_a_change_is_a_revision(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_at(assignment)
    body = {"screen": items[0].pk, "items": [entry(i, 70) for i in items]}
    assert send(api, assignment, body).status_code == 201
    resent = send(api, assignment, body)
    assert resent.status_code == 200
    assert {r["replay"] for r in resent.json()["items"]} == {True}
    assert Judgment.objects.filter(assignment=assignment).count() == 4
    # One segment changed on the page: sent alone, as a revision of its stored answer.
    revised = send(
        api, assignment, {"screen": items[0].pk, "items": [entry(items[1], 20, revision=1)]}
    )
    assert revised.status_code == 200
    assert revised.json()["items"][0]["revision"] == 2
    assert scores(assignment) == {0: 70, 1: 20, 2: 70, 3: 70}
    # A revision based on an old one is stale; nothing of that request is stored.
    stale = send(
        api,
        assignment,
        {"screen": items[0].pk, "items": [entry(items[0], 10, 1), entry(items[1], 10, 1)]},
    )
    assert stale.status_code == 409
    assert stale.json()["code"] == "stale"
    assert stale.json()["item"] == items[1].pk
    assert scores(assignment) == {0: 70, 1: 20, 2: 70, 3: 70}


def test_items_of_two_screens_or_of_another_task_are_refused(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    first, second = screen_at(assignment), screen_at(assignment, 4)
    mixed = send(
        api, assignment, {"screen": first[0].pk, "items": [entry(first[0]), entry(second[0])]}
    )
    assert mixed.status_code == 400
    twice = send(api, assignment, {"screen": first[0].pk, "items": [entry(first[0])] * 2})
    assert twice.status_code == 400
    other = Item.objects.exclude(task=assignment.task).first()
    assert other is not None
    foreign = send(api, assignment, {"screen": first[0].pk, "items": [entry(other)]})
    assert foreign.status_code == 404
    assert not Judgment.objects.exists()


def test_the_document_score_is_stored_with_the_segments_or_not_at_all(
    api, owner, annotator
) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator, document_score=True)
    items = screen_at(assignment)
    score = {"revision": 0, "submission_id": str(uuid.uuid4()), "score": 77}
    entries = [entry(i) for i in items]
    entries[-1]["answer"] = full_answer(items[-1], -5)
    refused = send(
        api, assignment, {"screen": items[0].pk, "items": entries, "document_score": score}
    )
    assert refused.status_code == 400
    assert not DocumentJudgment.objects.exists()
    # Without the score, the screen's last segment is refused: nothing is stored.
    missing = send(api, assignment, {"screen": items[0].pk, "items": [entry(i) for i in items]})
    assert missing.status_code == 409
    assert missing.json()["code"] == "document_score_missing"
    assert missing.json()["item"] == items[-1].pk
    assert not Judgment.objects.exists()
    stored = send(
        api,
        assignment,
        {"screen": items[0].pk, "items": [entry(i) for i in items], "document_score": score},
    )
    assert stored.status_code == 201
    assert stored.json()["document_score"]["revision"] == 1
    assert DocumentJudgment.objects.get().score == 77
    assert Judgment.objects.count() == 4


@pytest.mark.django_db(transaction=True)
def test_two_windows_sending_a_screen_at_once_store_one_of_them_whole(owner) -> None:  # type: ignore[no-untyped-def]
    assert connection.vendor == "postgresql", "locking is tested on PostgreSQL (set DATABASE_URL)"
    annotator = make_user("two-windows")
    assignment = held(owner, annotator)
    items = screen_at(assignment)

    def window(value: int) -> Any:
        return lambda: screen_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            screen_item_id=items[0].pk,
            answers=[ItemAnswer(i.pk, 0, uuid.uuid4(), full_answer(i, value)) for i in items],
        )

    for _round in range(3):
        Judgment.objects.filter(assignment=assignment).delete()
        Assignment.objects.filter(pk=assignment.pk).update(items_done=0)
        results = run_together([window(10), window(90)])
        refused = [r for r in results if isinstance(r, JudgmentError)]
        assert len(refused) == 1, results
        assert refused[0].code in {"stale", "not_current"}
        # One window's answers, every one of them; none of the other's.
        assert len(set(scores(assignment).values())) == 1
        assert len(scores(assignment)) == 4
        assert Assignment.objects.get(pk=assignment.pk).items_done == 4
