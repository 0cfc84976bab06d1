"""The submit's answer carries the next item, as GET …/current/ shows it, so an API client needs
one request per item: shown from the moment of the answer (its time per item starts then), the
same after a resent submit or a revision, and null when the task is finished."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse, set_script_prefix
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.judging.services import judgment_record
from annotation.models import Assignment, Item, Judgment
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def held(owner, annotator):  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency", items_per_task=3, context_segments=1)
    return task_assign_next(config=config, annotator=annotator)


@pytest.fixture
def api(annotator) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    return client


def submit(api: APIClient, assignment: Assignment, position: int, path: str = "", **fields):  # type: ignore[no-untyped-def]
    """Submit a full answer to the item at ``position``; ``path`` is the submit address, when
    the caller has reversed it itself (under another script prefix, say)."""
    item = Item.objects.get(task=assignment.task, position=position)
    body = {
        "item": item.pk,
        "revision": 0,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item),
    } | fields
    path = path or reverse("api-assignment-submit", args=[assignment.pk])
    return api.post(path, body, format="json"), body


def current(api: APIClient, assignment: Assignment):  # type: ignore[no-untyped-def]
    return api.get(reverse("api-assignment-current", args=[assignment.pk]))


def test_a_submit_answers_with_the_next_item_as_the_current_item_endpoint_shows_it(
    api, held
) -> None:  # type: ignore[no-untyped-def]
    response, _ = submit(api, held, 0)
    assert response.status_code == 201, response.content
    answer = response.json()
    # The fields of before are kept.
    assert answer["created"] is True
    assert answer["done"] == 1
    assert answer["finished"] is False
    assert answer["next_url"] == reverse("annotate", args=[held.pk])
    assert answer["next"]["item"] == Item.objects.get(task=held.task, position=1).pk
    assert answer["next"] == current(api, held).json()
    assert answer["next"]["position"] == 2
    assert answer["next"]["done"] == 1
    assert answer["next"]["context_before"] or answer["next"]["context_after"]


def test_the_next_item_counts_as_shown_from_the_submit_that_carried_it(annotator, held) -> None:  # type: ignore[no-untyped-def]
    shown = timezone.now()
    items = list(Item.objects.filter(task=held.task).order_by("position"))
    first = judgment_record(
        assignment_id=held.pk,
        annotator=annotator,
        item_id=items[0].pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(items[0]),
        now=shown,
        with_next=True,
    )
    assert first.next is not None
    assert first.next.item.pk == items[1].pk
    held.refresh_from_db()
    assert (held.shown_item_id, held.shown_at) == (items[1].pk, shown)
    judgment_record(
        assignment_id=held.pk,
        annotator=annotator,
        item_id=items[1].pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(items[1]),
        now=shown + timedelta(seconds=17),
    )
    assert Judgment.objects.get(item=items[1]).seconds == pytest.approx(17)


def test_a_resent_submit_and_a_revision_answer_with_the_current_item(api, held) -> None:  # type: ignore[no-untyped-def]
    first, body = submit(api, held, 0)
    again = api.post(reverse("api-assignment-submit", args=[held.pk]), body, format="json")
    assert again.status_code == 200
    assert again.json()["replay"] is True
    assert again.json()["next"] == first.json()["next"]
    revised, _ = submit(api, held, 0, revision=1)
    assert revised.status_code == 200
    assert revised.json()["created"] is False
    assert revised.json()["next"]["item"] == first.json()["next"]["item"]


def test_the_last_submit_of_a_task_answers_next_null(api, held) -> None:  # type: ignore[no-untyped-def]
    for position in range(2):
        assert submit(api, held, position)[0].status_code == 201
    last, body = submit(api, held, 2)
    assert last.status_code == 201
    assert last.json()["finished"] is True
    assert last.json()["next"] is None
    assert last.json()["next_url"] == f"{reverse('my_tasks')}?finished={held.pk}"
    again = api.post(reverse("api-assignment-submit", args=[held.pk]), body, format="json")
    assert again.json()["replay"] is True
    assert again.json()["next"] is None


def test_my_tasks_confirms_only_a_finished_task_of_the_caller(api, held, annotator, owner) -> None:  # type: ignore[no-untyped-def]
    page = Client()
    page.login(username=annotator.username, password=PASSWORD)
    url = reverse("my_tasks")
    # Not finished yet, a task id that is not one, garbage: no confirmation, no error.
    for value in (held.pk, uuid.uuid4(), "x' or 1=1", ""):
        response = page.get(url, {"finished": value})
        assert response.status_code == 200
        assert b'id="task-finished"' not in response.content
    for position in range(3):
        submit(api, held, position)
    finished = page.get(url, {"finished": held.pk}).content.decode()
    assert 'id="task-finished"' in finished
    assert f"all 3 items in {held.task.config.name}" in finished
    # Another annotator naming that task is told nothing about it.
    other = make_user("someone-else")
    held.task.config.campaign.annotators.add(other)
    stranger = Client()
    stranger.login(username=other.username, password=PASSWORD)
    assert b'id="task-finished"' not in stranger.get(url, {"finished": held.pk}).content


def test_reviewing_a_finished_task_links_each_answered_item_to_the_next(
    api, held, annotator
) -> None:  # type: ignore[no-untyped-def]
    page = Client()
    page.login(username=annotator.username, password=PASSWORD)
    for position in range(2):
        submit(api, held, position)
    # In progress, two answered: item 1 leads on to item 2; item 2 has no answered next.
    first = page.get(reverse("annotate_item", args=[held.pk, 1])).content.decode()
    assert f'id="next-answered" href="{reverse("annotate_item", args=[held.pk, 2])}"' in first
    assert (
        'id="next-answered"'
        not in page.get(reverse("annotate_item", args=[held.pk, 2])).content.decode()
    )
    submit(api, held, 2)
    # Finished: items 1 and 2 lead on, the last does not.
    second = page.get(reverse("annotate_item", args=[held.pk, 2])).content.decode()
    assert f'id="next-answered" href="{reverse("annotate_item", args=[held.pk, 3])}"' in second
    assert (
        'id="next-answered"'
        not in page.get(reverse("annotate_item", args=[held.pk, 3])).content.decode()
    )


def test_refused_submits_keep_their_errors_and_carry_no_next_item(api, held) -> None:  # type: ignore[no-untyped-def]
    stale_body = submit(api, held, 0)[1]
    stale = api.post(
        reverse("api-assignment-submit", args=[held.pk]),
        stale_body | {"submission_id": str(uuid.uuid4())},
        format="json",
    )
    assert stale.status_code == 409
    assert stale.json()["code"] == "stale"
    assert "next" not in stale.json()
    ahead, _ = submit(api, held, 2)
    assert ahead.status_code == 409
    assert ahead.json()["code"] == "not_current"


def test_refused_submits_are_no_warnings_in_the_request_log_but_faults_are(
    api, held, caplog
) -> None:  # type: ignore[no-untyped-def]
    submit_url = reverse("api-assignment-submit", args=[held.pk])
    body = submit(api, held, 0)[1]
    with caplog.at_level(logging.INFO, logger="django.request"):
        stale = api.post(submit_url, body | {"submission_id": str(uuid.uuid4())}, format="json")
        ahead, _ = submit(api, held, 2)
        assert (stale.status_code, ahead.status_code) == (409, 409)
        assert [r for r in caplog.records if r.name == "django.request"] == []
        # A malformed answer or an unknown task is still worth a warning.
        assert submit(api, held, 1, answer={"x": 1})[0].status_code == 400
        missing = reverse("api-assignment-submit", args=[uuid.uuid4()])
        assert api.post(missing, body, format="json").status_code == 404
    logged = [(r.levelname, r.status_code) for r in caplog.records if r.name == "django.request"]
    assert logged == [("WARNING", 400), ("WARNING", 404)]


def test_a_submit_after_the_hold_ended_answers_next_null_without_reclaiming(api, held) -> None:  # type: ignore[no-untyped-def]
    _, body = submit(api, held, 0)
    Assignment.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    again = api.post(reverse("api-assignment-submit", args=[held.pk]), body, format="json")
    assert again.status_code == 200
    assert again.json()["replay"] is True
    assert again.json()["next"] is None
    held.refresh_from_db()
    assert held.status == Assignment.Status.ACTIVE
    assert held.expires_at < timezone.now()


def test_the_next_url_is_the_task_page_under_the_site_prefix(api, held) -> None:  # type: ignore[no-untyped-def]
    # Served under a prefix (as the WSGI handler sets it from SCRIPT_NAME), then at the root
    # again: each answer names the task's page where the site is.
    path = reverse("api-assignment-submit", args=[held.pk])
    try:
        for position, prefix in enumerate(("/evalsite/", "/")):
            set_script_prefix(prefix)
            response, _ = submit(api, held, position, path=path)
            assert response.status_code == 201, response.content
            assert response.json()["next_url"] == reverse("annotate", args=[held.pk])
            # The pattern in annotation/urls.py.
            assert response.json()["next_url"] == f"{prefix}annotate/{held.pk}/"
    finally:
        set_script_prefix("/")
