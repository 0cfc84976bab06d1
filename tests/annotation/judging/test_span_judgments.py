"""Error-span judgments through the submit API: spans stored as rows of their own beside the
answer, MQM's score worked out on the server, a re-submit replacing the spans with the earlier
ones kept in the history, a bad span a 400 that names it (nothing written), and the database
refusing a span outside its text."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from annotation.models import Item, ItemOutput, Judgment, JudgmentSpan, JudgmentValue
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


def started(owner, annotator, protocol: str):  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, protocol, outputs_per_screen=1, items_per_task=5)
    assignment = task_assign_next(config=config, annotator=annotator)
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    return assignment, client


def submit(client: Client, assignment: Any, item: Item, answer: dict[str, Any], revision=0):  # type: ignore[no-untyped-def]
    return client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(
            {
                "item": item.pk,
                "revision": revision,
                "submission_id": str(uuid.uuid4()),
                "answer": answer,
            }
        ),
        content_type="application/json",
    )


def first_item(assignment: Any) -> tuple[Item, ItemOutput]:
    item = Item.objects.get(task=assignment.task, position=0)
    return item, item.outputs.get()


def test_an_esa_judgment_keeps_its_spans_as_rows(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment, client = started(owner, annotator, "esa")
    item, output = first_item(assignment)
    n = len(output.text)
    spans = [
        {"start": n, "end": n + 1, "severity": "major"},  # missing content
        {"start": 0, "end": 3, "severity": "minor"},
    ]
    response = submit(client, assignment, item, {str(output.pk): {"score": 41, "spans": spans}})
    assert response.status_code == 201, response.json()
    judgment = Judgment.objects.get(pk=response.json()["judgment"])
    rows = list(
        JudgmentSpan.objects.filter(judgment=judgment).values_list(
            "output_id", "start", "end", "text_length", "severity", "category"
        )
    )
    assert rows == [(output.pk, 0, 3, n, "minor", ""), (output.pk, n, n + 1, n, "major", "")]
    assert judgment.answer == {
        str(output.pk): {"score": 41.0, "spans": sorted(spans, key=lambda s: s["start"])}
    }
    assert list(judgment.values.values_list("criterion", "value")) == [("score", 41.0)]


def test_an_mqm_judgment_is_scored_on_the_server(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment, client = started(owner, annotator, "mqm")
    item, output = first_item(assignment)
    spans = [
        {"start": 0, "end": 2, "severity": "major", "category": "accuracy/mistranslation"},
        {"start": 3, "end": 4, "severity": "minor", "category": "fluency/punctuation"},
    ]
    response = submit(client, assignment, item, {str(output.pk): {"spans": spans}})
    assert response.status_code == 201, response.json()
    value = JudgmentValue.objects.get(judgment_id=response.json()["judgment"])
    assert (value.criterion, value.value) == ("mqm", pytest.approx(-5.1))
    # A client cannot choose the score: it is not a question of the kind.
    item2 = Item.objects.get(task=assignment.task, position=1)
    out2 = item2.outputs.get()
    response = submit(client, assignment, item2, {str(out2.pk): {"mqm": 0, "spans": []}})
    assert response.status_code == 400
    assert response.json()["detail"] == "Unknown criterion: mqm."


def test_a_bad_span_is_a_400_naming_it_and_nothing_is_written(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment, client = started(owner, annotator, "esa")
    item, output = first_item(assignment)
    n = len(output.text)
    answer = {
        str(output.pk): {
            "score": 50,
            "spans": [
                {"start": 0, "end": 2, "severity": "minor"},
                {"start": 1, "end": n + 5, "severity": "major"},
            ],
        }
    }
    response = submit(client, assignment, item, answer)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["detail"].startswith(f"Output 1, span 2: characters 1–{n + 5} are not within")
    assert not Judgment.objects.exists()
    assert not JudgmentSpan.objects.exists()
    malformed = submit(client, assignment, item, {str(output.pk): {"score": 50, "spans": "0-2"}})
    assert malformed.status_code == 400
    # Not a list: refused as malformed, the field named.
    assert malformed.json()["errors"] == {
        "answer": {str(output.pk): {"spans": ["A list of error spans is required."]}}
    }


def test_a_resubmit_replaces_the_spans_and_keeps_the_old_ones(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment, client = started(owner, annotator, "esa")
    item, output = first_item(assignment)
    old = [{"start": 0, "end": 3, "severity": "major"}]
    first = submit(client, assignment, item, {str(output.pk): {"score": 30, "spans": old}})
    assert first.status_code == 201
    new = [{"start": 4, "end": 6, "severity": "minor"}]
    again = submit(
        client, assignment, item, {str(output.pk): {"score": 55, "spans": new}}, revision=1
    )
    assert again.status_code == 200, again.json()
    judgment = Judgment.objects.get()
    assert list(judgment.spans.values_list("start", "end", "severity")) == [(4, 6, "minor")]
    [history] = judgment.revisions.all()
    assert history.values == {str(output.pk): {"score": 30.0, "spans": old}}
    assert judgment.values.get().value == 55.0


def test_the_database_refuses_a_span_outside_its_text(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment, client = started(owner, annotator, "esa")
    item, output = first_item(assignment)
    assert (
        submit(client, assignment, item, {str(output.pk): {"score": 9, "spans": []}}).status_code
        == 201
    )
    judgment = Judgment.objects.get()
    for start, end in [(3, 3), (5, 2), (0, 11), (10, 12), (9, 11)]:
        with pytest.raises(IntegrityError), transaction.atomic():
            JudgmentSpan.objects.create(
                judgment=judgment,
                output=output,
                start=start,
                end=end,
                text_length=10,
                severity="minor",
            )
    # The marker after the text is the one position past it.
    JudgmentSpan.objects.create(
        judgment=judgment, output=output, start=10, end=11, text_length=10, severity="minor"
    )
