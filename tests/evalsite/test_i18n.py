"""The annotator pages can be offered in the annotators' language (German is shipped)."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


def test_the_annotation_page_speaks_german_to_a_german_browser(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency")
    assignment = task_assign_next(config=config, annotator=annotator)
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.login(username=annotator.username, password=PASSWORD)
    html = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    for german in ("Absenden", "Adäquatheit", "Flüssigkeit", "Vollständige Bedeutung", "Fehlerlos"):
        assert german in html
    assert "Submit" not in html
    english = Client(HTTP_ACCEPT_LANGUAGE="en")
    english.login(username=annotator.username, password=PASSWORD)
    assert "All meaning" in english.get(reverse("annotate", args=[assignment.pk])).content.decode()


def test_every_message_the_annotation_script_shows_is_german_for_a_german_browser(
    owner,
    annotator,  # type: ignore[no-untyped-def]
) -> None:
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    assignment = task_assign_next(config=config, annotator=annotator)
    shown = {}
    for language in ("en", "de"):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.login(username=annotator.username, password=PASSWORD)
        html = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
        data = re.search(r'<script id="annotate-data" type="application/json">(.*?)</script>', html)
        assert data is not None
        shown[language] = json.loads(data.group(1))["messages"]
    assert shown["de"].keys() == shown["en"].keys()
    untranslated = [key for key in shown["en"] if shown["de"][key] == shown["en"][key]]
    assert not untranslated


def test_the_language_can_be_chosen_on_the_page(annotator) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    client.post(reverse("set_language"), {"language": "de", "next": reverse("my_tasks")})
    assert "Meine Aufgaben" in client.get(reverse("my_tasks")).content.decode()


def test_the_api_explains_a_malformed_answer_in_german(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "adequacy_fluency")
    assignment = task_assign_next(config=config, annotator=annotator)
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.login(username=annotator.username, password=PASSWORD)
    response = client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        {"item": "not a number"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "Die Antwort ist fehlerhaft aufgebaut."


def test_task_errors_reach_a_german_organizer_in_german(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "adequacy_fluency", annotations_per_task=1)
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.login(username=owner.username, password=PASSWORD)
    url = reverse("config_assign", args=[campaign.pk, config.pk])
    client.post(url, {"task": 1, "username": annotator.username})
    page = client.post(url, {"task": 1, "username": annotator.username}, follow=True)
    assert f"{annotator.username} hat diese Aufgabe bereits." in page.content.decode()
    other = make_user("second")
    page = client.post(url, {"task": 1, "username": other.username}, follow=True)
    assert "Diese Aufgabe hat bereits alle Annotatoren, die sie braucht." in page.content.decode()
    # Rebuilding after annotators started is refused, in German.
    page = client.post(
        reverse("config_build", args=[campaign.pk, config.pk]), follow=True
    ).content.decode()
    assert "Annotatoren haben mit diesen Aufgaben begonnen" in page


def test_the_protocol_modes_are_offered_in_german(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()
    for german in (
        "Zweisprachig: Ausgangstext zeigen",
        "Einsprachig: eine Referenz zeigen",
        "Ausgangstextbasiert",
        "Referenzbasiert",
    ):
        assert german in page


def test_the_queue_down_message_is_translated_when_it_is_used() -> None:
    from django.utils import translation

    from metrics.api import QUEUE_DOWN  # imported while English is active

    with translation.override("de"):
        assert str(QUEUE_DOWN).startswith("Die Warteschlange im Hintergrund ist gerade nicht")
    with translation.override("en"):
        assert str(QUEUE_DOWN).startswith("The background queue is unreachable right now.")


def test_the_database_down_answer_speaks_german_to_a_german_browser() -> None:
    import json

    from django.test import RequestFactory
    from django.utils import translation

    from evalsite.middleware import database_unavailable

    factory = RequestFactory()
    with translation.override("de"):
        page = database_unavailable(factory.get("/campaigns/"))
        api = database_unavailable(factory.get("/api/campaigns/"))
    assert page.status_code == api.status_code == 503
    html = page.content.decode()
    assert "Vorübergehend nicht verfügbar" in html
    assert "Die Datenbank ist gerade nicht erreichbar" in html
    assert json.loads(api.content)["detail"].startswith("Die Datenbank ist gerade nicht erreichbar")
