"""Who may open or answer an annotator's task, take tasks, list tasks and withdraw invite links:
the campaign's owner, a co-organizer, another organizer, an annotator of the campaign who is not
assigned the task, and an anonymous visitor — and the assigned annotator, who alone gets in."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Invite, Item, Judgment
from annotation.tasking.invites import invite_create
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_config, make_user

pytestmark = pytest.mark.django_db

ROLES = ["owner", "co_organizer", "annotator", "other_organizer", "anonymous"]


@pytest.fixture
def held(campaign):  # type: ignore[no-untyped-def]
    """A task of the campaign held by its own annotator (not the ``annotator`` role)."""
    config = make_config(campaign, "adequacy_fluency", outputs_per_screen=2, items_per_task=4)
    assignee = make_user("assignee")
    campaign.annotators.add(assignee)
    return task_assign_next(config=config, annotator=assignee)


def assignee_client(assignment: Assignment) -> Client:
    client = Client()
    assert client.login(username=assignment.annotator.username, password=PASSWORD)
    return client


def submit_body(assignment: Assignment) -> str:
    item = Item.objects.get(task=assignment.task, position=0)
    return json.dumps(
        {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item),
        }
    )


@pytest.mark.parametrize("page", ["annotate", "annotate_item"])
@pytest.mark.parametrize("role", ROLES)
def test_only_the_assigned_annotator_opens_the_annotation_page(as_role, held, page, role) -> None:  # type: ignore[no-untyped-def]
    args = [held.pk] if page == "annotate" else [held.pk, 1]
    response = as_role(role).get(reverse(page, args=args))
    if role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    else:
        assert response.status_code == 404  # the task's existence does not leak
    assert assignee_client(held).get(reverse(page, args=args)).status_code == 200


@pytest.mark.parametrize("role", ROLES)
def test_only_the_assigned_annotator_reads_the_current_item_through_the_api(
    as_role, held, role
) -> None:  # type: ignore[no-untyped-def]
    url = reverse("api-assignment-current", args=[held.pk])
    response = as_role(role).get(url)
    assert response.status_code == (401 if role == "anonymous" else 404)
    assert assignee_client(held).get(url).status_code == 200


@pytest.mark.parametrize("role", ROLES)
def test_only_the_assigned_annotator_submits_an_answer(as_role, held, role) -> None:  # type: ignore[no-untyped-def]
    url = reverse("api-assignment-submit", args=[held.pk])
    response = as_role(role).post(url, submit_body(held), content_type="application/json")
    assert response.status_code == (401 if role == "anonymous" else 404)
    assert not Judgment.objects.exists()
    response = assignee_client(held).post(url, submit_body(held), content_type="application/json")
    assert response.status_code == 201
    assert Judgment.objects.get().annotator == held.annotator


# Only annotators of the campaign may take its tasks; organizers are not annotators of it.
TAKE_STATUS = {
    "owner": 404,
    "co_organizer": 404,
    "annotator": 200,
    "other_organizer": 404,
    "anonymous": 401,
}


@pytest.mark.parametrize("role", ROLES)
def test_only_annotators_of_the_campaign_take_its_tasks(as_role, held, role) -> None:  # type: ignore[no-untyped-def]
    config = held.task.config
    response = as_role(role).post(reverse("api-config-take", args=[config.pk]))
    assert response.status_code == TAKE_STATUS[role]
    taken = Assignment.objects.filter(task__config=config).exclude(pk=held.pk)
    if role == "annotator":
        assert response.json()["id"] == str(taken.get().pk)
    else:
        assert not taken.exists()


@pytest.mark.parametrize("role", ROLES)
def test_my_tasks_through_the_api_lists_only_the_callers_own(as_role, held, role) -> None:  # type: ignore[no-untyped-def]
    response = as_role(role).get(reverse("api-my-tasks"))
    if role == "anonymous":
        assert response.status_code == 401
        return
    assert response.status_code == 200
    assert response.json() == []  # nobody but the assignee holds a task here
    mine = assignee_client(held).get(reverse("api-my-tasks")).json()
    assert [row["id"] for row in mine] == [str(held.pk)]


REVOKE_STATUS = {
    "owner": 302,
    "co_organizer": 302,
    "annotator": 403,  # not an organizer
    "other_organizer": 404,  # an organizer, but not of this campaign
    "anonymous": 302,  # to the login page
}


@pytest.mark.parametrize("role", ROLES)
def test_only_the_campaigns_organizers_withdraw_an_invite_link(
    as_role, campaign, owner, role
) -> None:  # type: ignore[no-untyped-def]
    invite = invite_create(campaign=campaign, label="Someone", created_by=owner)
    response = as_role(role).post(reverse("invite_revoke", args=[campaign.pk, invite.pk]))
    assert response.status_code == REVOKE_STATUS[role]
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))
    assert Invite.objects.get(pk=invite.pk).revoked == (role in ("owner", "co_organizer"))
