"""A campaign's roster: organizers add existing users as annotators by username (in bulk, on the
setup page and through the API), see who may pull tasks with what they hold, and remove them
(their held tasks go back to the pool, their answers stay). Closing a campaign whose tasks are
held asks the organizer first and tells the annotators who held them."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import Assignment, Campaign, Judgment, Task
from annotation.permissions import campaigns_annotated_by
from annotation.tasking.roster import campaign_roster, usernames_parse
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    assert client.login(username=user.get_username(), password=PASSWORD)
    return client


def _messages(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_a_pasted_list_of_usernames_is_read_in_order_once_each() -> None:
    assert usernames_parse(" ann, bob;carl\n\tann  dora\r\n") == ["ann", "bob", "carl", "dora"]
    assert usernames_parse(" ,\n ") == []


def test_organizers_add_annotators_by_username_and_they_may_pull_tasks(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    config = make_config(campaign, items_per_task=5)
    ann, bob = make_user("ann"), make_user("bob")
    campaign.annotators.add(bob)
    organizer = _client(owner)
    setup = reverse("annotation_setup", args=[campaign.pk])

    page = organizer.post(
        reverse("roster_add", args=[campaign.pk]), {"usernames": "ann, bob\nnobody"}, follow=True
    )
    assert page.redirect_chain[-1][0].endswith(f"{setup}#roster")
    said = _messages(page)
    assert "Added as annotators: ann. They see the campaign on My tasks." in said
    assert "Annotators already: bob." in said
    assert any(m.startswith("No user is called nobody.") for m in said)
    assert [e.username for e in campaign_roster(campaign=campaign)] == ["ann", "bob"]
    html = page.content.decode()
    assert 'data-username="ann"' in html
    assert 'data-username="bob"' in html

    # Ann sees the campaign and can pull a task of it.
    assert campaigns_annotated_by(ann).filter(pk=campaign.pk).exists()
    taken = _client(ann).post(reverse("api-config-take", args=[config.pk]))
    assert taken.status_code == 200
    [entry] = [e for e in campaign_roster(campaign=campaign) if e.username == "ann"]
    assert (entry.held, entry.done, entry.judgments) == (1, 0, 0)


def test_removing_an_annotator_returns_their_task_and_keeps_their_answers(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    config = make_config(campaign, items_per_task=5)
    ann = make_user("ann")
    campaign.annotators.add(ann)
    assignment = task_assign_next(config=config, annotator=ann)
    assert assignment is not None
    screen = annotation_screen(assignment_id=assignment.pk, annotator=ann)
    judgment_record(
        assignment_id=assignment.pk,
        annotator=ann,
        item_id=screen.item.pk,
        revision_seen=0,
        answer=full_answer(screen.item),
        submission_id=uuid.uuid4(),
    )
    slots_before = Task.objects.get(pk=assignment.task_id).slots_taken

    # The setup page's Remove asks first: a page that says what removing does, and changes
    # nothing.
    setup = _client(owner).get(reverse("annotation_setup", args=[campaign.pk])).content.decode()
    confirm_url = reverse("roster_remove", args=[campaign.pk, ann.pk])
    assert f'href="{confirm_url}"' in setup
    asked = _client(owner).get(confirm_url)
    assert asked.status_code == 200
    text = asked.content.decode()
    assert "Remove ann from the annotators?" in text
    assert "The task they hold goes back to the pool." in text
    assert "Their judgment so far is kept." in text
    assert 'name="csrfmiddlewaretoken"' in text
    assert campaigns_annotated_by(ann).filter(pk=campaign.pk).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ACTIVE

    page = _client(owner).post(reverse("roster_remove", args=[campaign.pk, ann.pk]), follow=True)
    said = " ".join(_messages(page))
    assert "ann can no longer take tasks in this campaign." in said
    assert "The task they held went back to the pool; their answers are kept." in said
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED
    assert Task.objects.get(pk=assignment.task_id).slots_taken == slots_before - 1
    assert Judgment.objects.filter(annotator=ann).count() == 1
    assert not campaigns_annotated_by(ann).filter(pk=campaign.pk).exists()
    # Someone not on the roster is not found.
    again = _client(owner).post(reverse("roster_remove", args=[campaign.pk, ann.pk]))
    assert again.status_code == 404
    assert _client(owner).get(confirm_url).status_code == 404


def test_the_roster_api_lists_adds_and_removes(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    make_user("ann")
    make_user("bob")
    client = _client(owner)
    url = reverse("api-campaign-annotators", args=[campaign.pk])
    added = client.post(url, {"usernames": ["ann", "bob", "zed"]}, content_type="application/json")
    assert added.status_code == 200
    assert added.json() == {"added": ["ann", "bob"], "already": [], "unknown": ["zed"]}
    listed = client.get(url).json()
    assert [a["username"] for a in listed["annotators"]] == ["ann", "bob"]
    assert listed["annotators"][0] == {
        "username": "ann",
        "tasks_in_progress": 0,
        "tasks_done": 0,
        "judgments": 0,
    }
    removed = client.delete(reverse("api-campaign-annotator", args=[campaign.pk, "bob"]))
    assert removed.json() == {"removed": "bob", "released_tasks": 0}
    assert (
        client.delete(reverse("api-campaign-annotator", args=[campaign.pk, "bob"])).status_code
        == 404
    )
    empty = client.post(url, {"usernames": []}, content_type="application/json")
    assert empty.status_code == 400


def test_closing_a_campaign_with_held_tasks_asks_first_and_tells_the_holders(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    config = make_config(campaign, items_per_task=5)
    ann = make_user("ann")
    campaign.annotators.add(ann)
    assert task_assign_next(config=config, annotator=ann) is not None
    organizer = _client(owner)
    fields = {
        "name": campaign.name,
        "source_language": campaign.source_language,
        "target_language": campaign.target_language,
        "description": "",
        "status": "closed",
        "co_organizers": "",
    }
    url = reverse("campaign_edit", args=[campaign.pk])

    asked = organizer.post(url, fields)
    assert asked.status_code == 400
    html = asked.content.decode()
    assert "unfinished task of this campaign" in html
    assert "ann: adequacy_fluency, task " in html
    assert 'name="confirm_close"' in html
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE

    closed = organizer.post(url, {**fields, "confirm_close": "on"})
    assert closed.status_code == 302
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.CLOSED
    tasks = _client(ann).get(reverse("my_tasks")).content.decode()
    assert 'id="tasks-cut-short"' in tasks
    assert "was closed by its organizers before you finished task" in tasks
    german = Client(HTTP_ACCEPT_LANGUAGE="de")
    assert german.login(username="ann", password=PASSWORD)
    assert (
        "wurde von den Organisatoren geschlossen"
        in german.get(reverse("my_tasks")).content.decode()
    )


def test_the_api_closes_a_campaign_with_held_tasks_only_when_confirmed(owner: Any) -> None:
    campaign = make_rich_campaign(owner=owner, status=Campaign.Status.ACTIVE)
    config = make_config(campaign, items_per_task=5)
    ann = make_user("ann")
    campaign.annotators.add(ann)
    assert task_assign_next(config=config, annotator=ann) is not None
    client = _client(owner)
    url = reverse("api-campaign-detail", args=[campaign.pk])
    refused = client.patch(url, {"status": "closed"}, content_type="application/json")
    assert refused.status_code == 400
    [why, who] = refused.json()["confirm_close"]
    assert why.startswith("1 unfinished task(s) of this campaign are held by annotators")
    assert who.startswith("ann: adequacy_fluency, task ")
    closed = client.patch(
        url, {"status": "closed", "confirm_close": True}, content_type="application/json"
    )
    assert closed.status_code == 200
    assert closed.json()["status"] == "closed"
    assert "confirm_close" not in closed.json()
