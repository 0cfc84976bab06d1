"""Tutorials for tests: a direct-assessment protocol with two tutorial items, an annotator
holding one of its tasks, and answers to the tutorial through the API."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, ProtocolConfig
from annotation.tasking.services import task_assign_next
from annotation.tutorial.items import tutorial_items_add, tutorial_rule_save
from tests.factories import make_config

# A good translation (should score high) and one that drops a clause (should score low).
GOOD = {
    "source": "Das Haus ist klein.",
    "outputs": ["The house is small."],
    "expectation": {"scores": {"1": {"score": [70, 100]}}},
    "feedback": "A faithful translation: it should score high.",
}
BAD = {
    "source": "Das Haus ist klein, aber es hat einen Garten.",
    "outputs": ["The house is small."],
    "expectation": {"scores": {"1": {"score": [0, 40]}}},
    "feedback": "This translation drops a clause — it should score low.",
}


def tutorial_config(campaign: Any, **rule: Any) -> ProtocolConfig:
    """A DA protocol of ``campaign`` (tasks built) whose tutorial is GOOD then BAD, with
    ``rule`` (the rule's fields) set."""
    config = make_config(
        campaign,
        "direct_assessment",
        name="DA with tutorial",
        outputs_per_screen=1,
        items_per_task=6,
    )
    tutorial_items_add(config=config, items=[GOOD, BAD])
    if rule:
        tutorial_rule_save(config=config, **rule)
    config.refresh_from_db()
    return config


def holding(config: ProtocolConfig, annotator: Any) -> Assignment:
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    return assignment


def tutorial_answer(client: Client, assignment: Assignment, score: float) -> Any:
    """Answer the current tutorial item (of one output) with ``score``; the response."""
    current = client.get(reverse("api-assignment-tutorial", args=[assignment.pk])).json()
    body = {
        "item": current["item"],
        "submission_id": str(uuid.uuid4()),
        "answer": {"1": {"score": score}},
    }
    return client.post(
        reverse("api-assignment-tutorial-submit", args=[assignment.pk]),
        json.dumps(body),
        content_type="application/json",
    )
