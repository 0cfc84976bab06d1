"""The annotator pages can be offered in the annotators' language (German is shipped)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.tasking import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign

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


def test_the_language_can_be_chosen_on_the_page(annotator) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    client.post(reverse("set_language"), {"language": "de", "next": reverse("my_tasks")})
    assert "Meine Aufgaben" in client.get(reverse("my_tasks")).content.decode()
