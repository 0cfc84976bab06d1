"""Document-level scores on document screens: the protocol option, the rows they are stored
as (one per annotator and screen, revisions kept), the API's rules (a clear 400 on a bad score,
replays, stale revisions, screens not reached, closed campaigns) and the rule that a screen's
last segment waits for its document score; the page's data."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import (
    Assignment,
    Campaign,
    DocumentJudgment,
    DocumentJudgmentRevision,
    Item,
    ProtocolConfig,
)
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_campaign, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


def held(owner: Any, annotator: Any, *, document_score: bool = True) -> Assignment:
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "esa",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=4,
        document_score=document_score,
        items_per_task=20,
    )
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    return assignment


@pytest.fixture
def api(annotator) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    return client


def screen_items(assignment: Assignment, first: int = 0) -> list[Item]:
    start = Item.objects.get(task=assignment.task, position=first)
    return list(Item.objects.filter(task=assignment.task, screen=start.screen).order_by("position"))


def answer(api: APIClient, assignment: Assignment, item: Item) -> Any:
    return api.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item, 60),
        },
        format="json",
    )


def score(  # type: ignore[no-untyped-def]
    api: APIClient, assignment: Assignment, item: Item, value: Any, revision: int = 0, sid=None
) -> Any:
    return api.post(
        reverse("api-assignment-document-score", args=[assignment.pk]),
        {
            "item": item.pk,
            "revision": revision,
            "submission_id": str(sid or uuid.uuid4()),
            "score": value,
        },
        format="json",
    )


def test_the_setup_form_offers_a_document_score_on_document_screens_only(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_campaign(owner=owner)
    base = {
        "name": "p",
        "protocol": "direct_assessment",
        "mode": "source",
        "outputs_per_screen": 1,
        "items_per_task": 10,
        "annotations_per_task": 1,
        "qc_bad_reference": 10,
        "qc_repeat": 5,
        "qc_reference": 5,
        "context_segments": 1,
        "hold_minutes": 60,
        "seed": 1,
        "document_score": "on",
    }
    form = ProtocolConfigForm(base, instance=ProtocolConfig(campaign=campaign))
    assert not form.is_valid()
    assert "document screens only" in form.errors["document_score"][0]
    form = ProtocolConfigForm(
        {**base, "screen": "document"}, instance=ProtocolConfig(campaign=campaign)
    )
    assert form.is_valid(), form.errors
    assert form.save().asks_document_score


def test_the_database_refuses_a_document_score_without_document_screens(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_campaign(owner=owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_config(campaign, "direct_assessment", document_score=True, build=False)


def test_the_item_says_where_its_screens_document_score_goes(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_items(assignment)
    body = api.get(reverse("api-assignment-current", args=[assignment.pk])).json()
    assert body["document_score"] == {
        "item": items[0].pk,
        "first": 1,
        "last": len(items),
        "score": None,
        "revision": 0,
        "url": reverse("api-assignment-document-score", args=[assignment.pk]),
    }


def test_no_document_score_is_asked_without_the_option(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator, document_score=False)
    item = screen_items(assignment)[0]
    assert (
        api.get(reverse("api-assignment-current", args=[assignment.pk])).json()["document_score"]
        is None
    )
    refused = score(api, assignment, item, 50)
    assert refused.status_code == 400
    assert refused.json()["code"] == "no_document_score"


def test_the_screens_last_segment_waits_for_the_document_score(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = screen_items(assignment)
    for item in items[:-1]:
        assert answer(api, assignment, item).status_code == 201
    refused = answer(api, assignment, items[-1])
    assert refused.status_code == 409
    assert refused.json()["code"] == "document_score_missing"
    # Any item of the screen names it; the row records the screen's first item.
    stored = score(api, assignment, items[1], 72)
    assert stored.status_code == 201, stored.json()
    assert stored.json()["revision"] == 1
    assert answer(api, assignment, items[-1]).status_code == 201
    judgment = DocumentJudgment.objects.get()
    first = items[0].outputs.get()
    assert (judgment.screen_id, judgment.annotator_id, judgment.score) == (
        items[0].pk,
        annotator.pk,
        72,
    )
    assert (judgment.system_id, judgment.run_id, judgment.kind) == (
        first.system_id,
        first.run_id,
        items[0].kind,
    )
    assert judgment.document_id == items[0].segment.document_id
    assert judgment.assignment_id == assignment.pk
    assert judgment.submitted_at is not None


@pytest.mark.parametrize("bad", [101, -1, 50.5, "fifty", True, None])
def test_a_bad_score_is_a_clear_400_and_stores_nothing(api, owner, annotator, bad) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    response = score(api, assignment, screen_items(assignment)[0], bad)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["detail"] in (
        "The document score must be a whole number from 0 to 100.",
        "This field may not be null.",
    )
    assert not DocumentJudgment.objects.exists()


def test_a_malformed_body_is_a_400(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    url = reverse("api-assignment-document-score", args=[assignment.pk])
    response = api.post(url, {"score": 50}, format="json")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"item", "revision", "submission_id"}


def test_a_resent_score_is_stored_once_and_a_resubmit_keeps_the_history(  # type: ignore[no-untyped-def]
    api, owner, annotator
) -> None:
    assignment = held(owner, annotator)
    item = screen_items(assignment)[0]
    sid = uuid.uuid4()
    assert score(api, assignment, item, 40, sid=sid).status_code == 201
    again = score(api, assignment, item, 40, sid=sid)
    assert again.status_code == 200
    assert again.json()["replay"] is True
    revised = score(api, assignment, item, 55, revision=1)
    assert revised.status_code == 200
    assert revised.json()["revision"] == 2
    judgment = DocumentJudgment.objects.get()
    assert (judgment.score, judgment.revision) == (55, 2)
    old = DocumentJudgmentRevision.objects.get()
    assert (old.revision, old.score, old.submission_id) == (1, 40, sid)
    # The first submit resent after the revision is still a replay, not a change.
    assert score(api, assignment, item, 40, sid=sid).json()["replay"] is True
    # A revision based on an old one, or a second "new" score, is stale.
    assert score(api, assignment, item, 60, revision=1).json()["code"] == "stale"
    assert score(api, assignment, item, 60, revision=0).json()["code"] == "stale"
    assert DocumentJudgment.objects.get().score == 55


def test_a_screen_not_reached_another_task_and_a_closed_campaign_are_refused(  # type: ignore[no-untyped-def]
    api, owner, annotator
) -> None:
    assignment = held(owner, annotator)
    first = screen_items(assignment)
    later = screen_items(assignment, len(first))
    response = score(api, assignment, later[0], 50)
    assert (response.status_code, response.json()["code"]) == (409, "not_current")
    other = Item.objects.exclude(task=assignment.task).first()
    assert score(api, assignment, other, 50).status_code == 404
    Campaign.objects.filter(pk=assignment.task.config.campaign_id).update(
        status=Campaign.Status.CLOSED
    )
    response = score(api, assignment, first[0], 50)
    assert (response.status_code, response.json()["code"]) == (409, "closed")
    assert not DocumentJudgment.objects.exists()


def page_data(response: Any) -> dict[str, Any]:
    html = response.content.decode()
    start = html.index('<script id="annotate-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])  # type: ignore[no-any-return]


def test_the_page_asks_the_score_after_the_segments_and_fills_in_a_stored_one(  # type: ignore[no-untyped-def]
    api, owner, annotator
) -> None:
    assignment = held(owner, annotator)
    items = screen_items(assignment)
    page = Client()
    assert page.login(username=annotator.get_username(), password=PASSWORD)
    response = page.get(reverse("annotate", args=[assignment.pk]))
    html = response.content.decode()
    assert html.index('data-criterion="document"') > html.rindex('class="doc-segment"')
    data = page_data(response)
    assert data["documentScore"] == {
        "url": reverse("api-assignment-document-score", args=[assignment.pk]),
        "item": items[0].pk,
        "revision": 0,
    }
    assert score(api, assignment, items[0], 64).status_code == 201
    data = page_data(page.get(reverse("annotate", args=[assignment.pk])))
    assert data["documentScore"]["revision"] == 1
    assert data["answer"]["document"] == {"document": 64}
