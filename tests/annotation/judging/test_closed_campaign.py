"""A closed campaign: annotation is over. No task is handed out (page and API), no item shown,
no answer stored — new or revised — each refused with a message saying so (409 ``closed`` in
the API); a resent submit of an answer stored before the close is still acknowledged, and My tasks
says the campaign is closed instead of offering to continue."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Campaign, Item, Judgment, JudgmentValue
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def config(owner, annotator):  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    campaign.annotators.add(annotator)
    return make_config(campaign, "direct_assessment", items_per_task=3)


@pytest.fixture
def api(annotator) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    return client


def close(config) -> None:  # type: ignore[no-untyped-def]
    Campaign.objects.filter(pk=config.campaign_id).update(status=Campaign.Status.CLOSED)


def body(assignment: Assignment, position: int, revision: int = 0) -> dict:  # type: ignore[type-arg]
    item = Item.objects.get(task=assignment.task, position=position)
    return {
        "item": item.pk,
        "revision": revision,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item),
    }


def submit(api: APIClient, assignment: Assignment, data: dict):  # type: ignore[no-untyped-def,type-arg]
    return api.post(reverse("api-assignment-submit", args=[assignment.pk]), data, format="json")


def test_a_closed_campaign_takes_no_answer_new_or_revised(api, config, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    first = body(assignment, 0)
    stored = submit(api, assignment, first)
    assert stored.status_code == 201
    revision = Judgment.objects.get(annotator=annotator).revision
    close(config)

    refused = submit(api, assignment, body(assignment, 1))
    assert refused.status_code == 409
    assert refused.json()["code"] == "closed"
    assert "closed" in refused.json()["detail"]
    revised = submit(api, assignment, body(assignment, 0, revision))
    assert revised.status_code == 409
    assert revised.json()["code"] == "closed"
    # Nothing stored after the close: one judgment, not revised, one value.
    assert Judgment.objects.filter(annotator=annotator).count() == 1
    assert Judgment.objects.get(annotator=annotator).revision == revision
    assert JudgmentValue.objects.filter(judgment__annotator=annotator).count() == 1
    assignment.refresh_from_db()
    assert assignment.items_done == 1

    # The same submit sent again (its answer was stored before the close) is acknowledged.
    again = submit(api, assignment, first)
    assert again.status_code == 200
    assert again.json()["replay"] is True
    assert again.json()["next"] is None

    current = api.get(reverse("api-assignment-current", args=[assignment.pk]))
    assert current.status_code == 409
    assert current.json()["code"] == "closed"


def test_a_closed_campaign_hands_out_no_task(api, config, annotator) -> None:  # type: ignore[no-untyped-def]
    close(config)
    taken = api.post(reverse("api-config-take", args=[config.pk]))
    assert taken.status_code == 409
    assert taken.json() == {
        "code": "closed",
        "detail": "This campaign is closed: it hands out no more tasks.",
    }
    page = Client()
    page.login(username=annotator.username, password=PASSWORD)
    response = page.post(reverse("task_take", args=[config.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("my_tasks")
    assert "This campaign is closed: it hands out no more tasks." in response.content.decode()
    assert not Assignment.objects.filter(annotator=annotator).exists()


def test_my_tasks_says_the_campaign_closed_instead_of_continue(config, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    page = Client(HTTP_ACCEPT_LANGUAGE="de")
    page.login(username=annotator.username, password=PASSWORD)
    before = page.get(reverse("my_tasks")).content.decode()
    assert reverse("annotate", args=[assignment.pk]) in before
    close(config)
    after = page.get(reverse("my_tasks")).content.decode()
    assert "Kampagne abgeschlossen" in after
    assert reverse("annotate", args=[assignment.pk]) not in after
    # The task's page (a bookmark, a tab left open) goes to My tasks with the reason.
    opened = page.get(reverse("annotate", args=[assignment.pk]), follow=True)
    assert opened.redirect_chain[-1][0] == reverse("my_tasks")
    assert "Diese Kampagne ist abgeschlossen" in opened.content.decode()
    # Opening the page sent no answer: the message does not speak of one not saved.
    assert "nicht gespeichert" not in opened.content.decode()


def test_my_tasks_lists_a_closed_campaign_as_closed_not_as_waiting(config, annotator) -> None:  # type: ignore[no-untyped-def]
    page = Client()
    page.login(username=annotator.username, password=PASSWORD)
    assert (
        "No task is open for you right now." not in page.get(reverse("my_tasks")).content.decode()
    )
    close(config)
    after = page.get(reverse("my_tasks")).content.decode()
    assert config.campaign.name in after
    assert "This campaign is closed: it hands out no more tasks." in after
    assert "No task is open for you right now." not in after
