"""An upload form registered by the test suite alone is detected by its extension, stored like
the shipped forms, and named on the campaign page by its label. No module of EvalSite names
it: a new form is one ``annotation.campaigns.uploads.UploadFormat`` and one entry in
``annotation.campaigns.parse.UPLOAD_FORMATS``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.campaigns import parse
from annotation.campaigns.formats.table import parse_table
from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import ParsedUpload, UploadError, UploadFile, UploadFormat
from tests.factories import PASSWORD, make_campaign, make_user, plain_files
from tests.support.uploads import campaign_dump, tsv, tsv_rows

pytestmark = pytest.mark.django_db


def parse_tab(files: Sequence[UploadFile], *, max_bytes: int) -> ParsedUpload:
    """A ``.tab`` file is our TSV table under another name."""
    upload = files[0]
    as_tsv = dataclasses.replace(upload, name=upload.name.removesuffix(".tab") + ".tsv")
    parsed = parse_table(as_tsv, max_bytes=max_bytes)
    return dataclasses.replace(parsed, form="tab", files=[upload.name])


TAB = UploadFormat(
    key="tab",
    label="Tab table (a test form)",
    parse=parse_tab,
    extensions=(".tab",),
    one_file_only="upload one .tab file at a time",
)


@pytest.fixture
def tab_form(monkeypatch: pytest.MonkeyPatch) -> UploadFormat:
    monkeypatch.setattr(parse, "UPLOAD_FORMATS", (*parse.UPLOAD_FORMATS, TAB))
    return TAB


def _page(user: Any, campaign: Any) -> str:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()


def test_a_registered_form_stores_what_plain_text_stores_and_is_named_by_its_label(
    tab_form: UploadFormat,
) -> None:
    owner = make_user("owner", organizer=True)
    tab = make_campaign(owner=owner, name="tab")
    upload = campaign_data_import(
        campaign=tab, files=[UploadFile("all.tab", tsv(tsv_rows()), "data")], user=owner
    )
    assert (upload.form, upload.files, upload.summary["segments_added"]) == ("tab", ["all.tab"], 4)
    plain = make_campaign(owner=owner, name="plain")
    campaign_data_import(campaign=plain, files=plain_files(), user=owner)
    assert campaign_dump(tab) == campaign_dump(plain)
    assert "<td>Tab table (a test form)</td>" in _page(owner, tab)
    assert "<td>Plain text</td>" in _page(owner, plain)


def test_a_registered_form_keeps_its_own_rule_on_several_files(tab_form: UploadFormat) -> None:
    files = [UploadFile(name, tsv(tsv_rows()), "data") for name in ("a.tab", "b.tab")]
    with pytest.raises(UploadError) as refused:
        parse.parse_upload(files, max_bytes=1_000_000)
    assert [(p.file, p.message) for p in refused.value.problems] == [
        ("upload", "upload one .tab file at a time")
    ]
