"""The campaign form (create and edit): a refused form answers 400 with its errors, as the
setup page's forms do, so a script or a test sees the refusal without reading the page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD, make_campaign

pytestmark = pytest.mark.django_db


def test_a_refused_campaign_form_answers_400_with_its_errors(owner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=owner.username, password=PASSWORD)
    fields = {"name": "", "source_language": "en", "target_language": "de", "status": "draft"}
    created = client.post(reverse("campaign_create"), fields)
    assert created.status_code == 400
    assert "This field is required." in created.content.decode()
    campaign = make_campaign(owner=owner)
    edited = client.post(reverse("campaign_edit", args=[campaign.pk]), fields)
    assert edited.status_code == 400
    assert client.get(reverse("campaign_edit", args=[campaign.pk])).status_code == 200
