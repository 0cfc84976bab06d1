"""The annotation page of a document screen: every item of the screen in document order with
its segment, the items the page submits one by one (each with its revision), opened whole from
any of its items; the API keeps serving one item, and a submit says the judgment's revision so
that a page revises each segment from where it stands."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Assignment, Item, ProtocolConfig
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, full_answer, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


def held(owner: Any, annotator: Any, mode: str = "source") -> Assignment:
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "direct_assessment",
        mode=mode,
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=4,
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


@pytest.fixture
def page(annotator) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    assert client.login(username=annotator.get_username(), password=PASSWORD)
    return client


def submit(api: APIClient, assignment: Assignment, item: Item, revision: int = 0, value=50):  # type: ignore[no-untyped-def]
    return api.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        {
            "item": item.pk,
            "revision": revision,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(item, value),
        },
        format="json",
    )


def first_screen(assignment: Assignment) -> list[Item]:
    first = Item.objects.get(task=assignment.task, position=0)
    return list(
        Item.objects.filter(task=assignment.task, screen=first.screen)
        .select_related("segment")
        .order_by("position")
    )


def page_data(response: Any) -> dict[str, Any]:
    html = response.content.decode()
    start = html.index('<script id="annotate-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])  # type: ignore[no-any-return]


def test_the_page_shows_every_segment_of_the_screen_with_its_source(page, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = first_screen(assignment)
    assert len(items) > 1
    response = page.get(reverse("annotate", args=[assignment.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    # In document order, each source once, above its translation.
    positions = [html.index(i.segment.source) for i in items]
    assert positions == sorted(positions)
    assert html.count('class="doc-segment"') == len(items)
    data = page_data(response)
    assert data["documents"] is True
    assert [i["id"] for i in data["items"]] == [i.pk for i in items]
    assert [i["revision"] for i in data["items"]] == [0] * len(items)
    assert [i["outputs"] for i in data["items"]] == [
        [o.pk for o in i.outputs.order_by("position")] for i in items
    ]


def test_reference_based_screens_show_each_segments_first_reference(page, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator, mode="reference")
    html = page.get(reverse("annotate", args=[assignment.pk])).content.decode()
    for item in first_screen(assignment):
        assert item.segment.references.get(index=0).text in html
        assert item.segment.source not in html


def test_a_partly_answered_screen_opens_whole_with_each_items_revision(  # type: ignore[no-untyped-def]
    page, api, owner, annotator
) -> None:
    assignment = held(owner, annotator)
    items = first_screen(assignment)
    assert submit(api, assignment, items[0], value=70).status_code == 201
    # The current item is the screen's second: the page shows the screen from its first.
    response = page.get(reverse("annotate", args=[assignment.pk]))
    data = page_data(response)
    assert [i["id"] for i in data["items"]] == [i.pk for i in items]
    assert [i["revision"] for i in data["items"]] == [1] + [0] * (len(items) - 1)
    first_output = str(items[0].outputs.get().pk)
    assert data["answer"] == {first_output: {"score": 70.0}}
    assert "revising-note" not in response.content.decode()


def test_previous_opens_the_earlier_screen_whole_as_a_revision(page, api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = first_screen(assignment)
    for item in items:
        assert submit(api, assignment, item).status_code == 201
    # Item numbers from 1: the screen's last item opens the screen from its first.
    response = page.get(reverse("annotate_item", args=[assignment.pk, len(items)]))
    html = response.content.decode()
    assert f"You are revising items 1–{len(items)}" in html
    data = page_data(response)
    assert [i["revision"] for i in data["items"]] == [1] * len(items)
    # The next screen is the current one: no "Next item" link past it.
    assert 'id="next-answered"' not in html
    assert 'id="back-to-current"' in html


def test_the_api_serves_a_document_screen_item_by_item(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    items = first_screen(assignment)
    body = api.get(reverse("api-assignment-current", args=[assignment.pk])).json()
    assert body["item"] == items[0].pk
    assert [o["id"] for o in body["outputs"]] == [items[0].outputs.get().pk]
    nxt = submit(api, assignment, items[0]).json()["next"]
    assert nxt["item"] == items[1].pk


def test_a_submit_says_the_judgments_revision(api, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)
    item = first_screen(assignment)[0]
    assert submit(api, assignment, item).json()["revision"] == 1
    url = reverse("api-assignment-submit", args=[assignment.pk])
    body = {
        "item": item.pk,
        "revision": 1,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item, 60),
    }
    assert api.post(url, body, format="json").json()["revision"] == 2
    # A resent revision is answered with the revision it made.
    resent = api.post(url, body, format="json").json()
    assert resent["replay"] is True
    assert resent["revision"] == 2


def test_a_window_shows_the_documents_segments_around_it(page, owner, annotator) -> None:  # type: ignore[no-untyped-def]
    assignment = held(owner, annotator)  # documents of 10 segments in windows of 4, 3 and 3
    starts = Item.objects.filter(task=assignment.task, screen=F("position")).select_related(
        "segment"
    )
    middle = next(i for i in starts if i.segment.position_in_document == 4)
    Assignment.objects.filter(pk=assignment.pk).update(items_done=middle.position)
    html = page.get(reverse("annotate", args=[assignment.pk])).content.decode()
    document = middle.segment.document

    def line(place: int) -> str:
        return f'<p class="ctx" dir="auto">{escape(document.segments.get(position_in_document=place).source)}</p>'  # noqa: E501

    # Context 1: segment 4 before the window (5–7), segment 8 after it, in that order.
    assert html.count('class="doc-context card"') == 2
    assert html.index(line(3)) < html.index('class="doc-segment"')
    assert html.index(line(7)) > html.rindex('class="doc-segment"')
    assert line(2) not in html
    assert line(8) not in html
