"""Tutorials with the other features of a protocol: a pull-mode task (the tutorial before its
first batch, the batch growing after it) and document screens (the tutorial shown one segment
at a time, then the document screen)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Task
from annotation.tasking.pull import BATCH_ITEMS, config_tasks_build
from annotation.tutorial.items import tutorial_items_add, tutorial_rule_save
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign
from tests.tutorial_factories import BAD, GOOD, holding, tutorial_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(annotator) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    return client


def _with_tutorial(config):  # type: ignore[no-untyped-def]
    tutorial_items_add(config=config, items=[GOOD, BAD])
    tutorial_rule_save(config=config, pass_at_least=1)
    config.refresh_from_db()
    return config


def _submit(client: Client, assignment, item: Item):  # type: ignore[no-untyped-def]
    body = {
        "item": item.pk,
        "revision": 0,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item, 50),
    }
    return client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(body),
        content_type="application/json",
    )


def test_a_pull_task_waits_for_the_tutorial_then_grows_past_its_first_batch(
    owner, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(
        campaign,
        "direct_assessment",
        build=False,
        outputs_per_screen=1,
        items_per_task=30,
        allocation="adaptive",
    )
    config_tasks_build(config=config)
    config = _with_tutorial(config)
    campaign.annotators.add(annotator)
    assignment = holding(config, annotator)
    first = Item.objects.get(task=assignment.task, position=0)
    assert _submit(client, assignment, first).status_code == 409
    assert client.get(reverse("annotate", args=[assignment.pk]))["Location"] == reverse(
        "tutorial", args=[assignment.pk]
    )
    assert client.get(reverse("tutorial", args=[assignment.pk])).status_code == 200
    assert tutorial_answer(client, assignment, 90).json()["status"] == "active"
    assert tutorial_answer(client, assignment, 10).json()["status"] == "passed"
    # The tutorial's items are not the task's: its first batch is whole, and answering it
    # grows the task.
    assert Task.objects.get(pk=assignment.task_id).size == BATCH_ITEMS
    for position in range(BATCH_ITEMS):
        item = Item.objects.get(task=assignment.task, position=position)
        assert _submit(client, assignment, item).status_code == 201
    assert Task.objects.get(pk=assignment.task_id).size > BATCH_ITEMS


def test_a_document_screen_protocol_shows_its_tutorial_segment_by_segment(
    owner, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(
        campaign,
        "direct_assessment",
        screen="document",
        document_window=4,
        document_score=True,
        items_per_task=30,
    )
    config = _with_tutorial(config)
    campaign.annotators.add(annotator)
    assignment = holding(config, annotator)
    page = client.get(reverse("tutorial", args=[assignment.pk]))
    assert page.status_code == 200
    assert "Das Haus ist klein." in page.content.decode()
    assert tutorial_answer(client, assignment, 90).json()["met"] is True
    assert tutorial_answer(client, assignment, 10).json()["status"] == "passed"
    # Then the document screen, as without a tutorial.
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 200
    current = client.get(reverse("api-assignment-current", args=[assignment.pk]))
    assert current.status_code == 200
