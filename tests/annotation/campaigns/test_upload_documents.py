"""An upload without document ids says that its segments became one document (document
context would show lines that may not belong together); with them, or as a table, it does not."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.campaigns.services import campaign_data_import
from annotation.models import Document
from tests.factories import SOURCE, lines, make_campaign, make_user, plain_files

pytestmark = pytest.mark.django_db


def test_plain_text_without_document_ids_is_one_document_with_a_warning() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    files = [f for f in plain_files() if f.role != "doc_ids"]
    upload = campaign_data_import(campaign=campaign, files=files, user=owner)
    assert Document.objects.filter(campaign=campaign).count() == 1
    assert upload.summary["no_document_ids"] == len(SOURCE)
    [warning] = upload.summary["warnings"]
    assert warning.startswith(f"No document ids: the {len(SOURCE)} segments were put in one")


def test_document_ids_bring_documents_and_no_warning() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    upload = campaign_data_import(campaign=campaign, files=plain_files(), user=owner)
    assert Document.objects.filter(campaign=campaign).count() > 1
    assert "warnings" not in upload.summary


def test_the_upload_page_shows_the_warning() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    client = Client()
    client.force_login(owner)
    stored = client.post(
        reverse("campaign_upload", args=[campaign.id]),
        {"source": [SimpleUploadedFile("src.de", lines(SOURCE))]},
        follow=True,
    )
    assert stored.status_code == 200
    page = stored.content.decode()
    assert f"No document ids: the {len(SOURCE)} segments were put in one document" in page
