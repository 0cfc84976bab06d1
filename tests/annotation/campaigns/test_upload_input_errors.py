"""Upload inputs that used to end in a server error or garbled text: each is refused through the
API and the upload page with a message naming the file and line, and nothing is stored (or, for an
XML encoding declaration, the text is stored as written)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Campaign, Reference, Segment
from tests.factories import REF_A, SOURCE, lines, make_campaign
from tests.support.uploads import database_snapshot

pytestmark = pytest.mark.django_db

LABEL_MAX = Reference._meta.get_field("label").max_length


def api_upload(
    owner: AbstractBaseUser, campaign: Campaign, files: dict[str, object]
) -> HttpResponse:
    client = APIClient()
    client.force_authenticate(owner)
    url = reverse("api-campaign-upload", args=[campaign.id])
    response: HttpResponse = client.post(url, files, format="multipart")
    return response


def page_upload(
    owner: AbstractBaseUser, campaign: Campaign, files: dict[str, object]
) -> HttpResponse:
    client = Client()
    client.force_login(owner)
    response: HttpResponse = client.post(reverse("campaign_upload", args=[campaign.id]), files)
    return response


def jsonl_file(*rows: dict[str, object]) -> SimpleUploadedFile:
    return SimpleUploadedFile("data.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())


FIRST_ROW_ONE_REFERENCE = {"doc_id": "d", "seg_id": "1", "source": "a", "reference": "A"}
SECOND_ROW_TWO_REFERENCES = {"doc_id": "d", "seg_id": "2", "source": "b", "references": ["B", "C"]}
FIRST_ROW_TWO_REFERENCES = {"doc_id": "d", "seg_id": "1", "source": "a", "references": ["A", "Z"]}
SECOND_ROW_NO_REFERENCE = {"doc_id": "d", "seg_id": "2", "source": "b"}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            (FIRST_ROW_ONE_REFERENCE, SECOND_ROW_TWO_REFERENCES),
            "2 references, but earlier rows have 1",
        ),
        (
            (FIRST_ROW_TWO_REFERENCES, SECOND_ROW_NO_REFERENCE),
            "0 references, but earlier rows have 2",
        ),
    ],
    ids=["more in a later row", "fewer in a later row"],
)
def test_a_jsonl_row_with_another_number_of_references_is_refused_naming_its_line(
    owner: AbstractBaseUser, rows: tuple[dict[str, object], ...], message: str
) -> None:
    campaign = make_campaign(owner=owner)
    before = database_snapshot()
    response = api_upload(owner, campaign, {"data": [jsonl_file(*rows)]})
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert (problem["file"], problem["line"]) == ("data.jsonl", 2)
    assert message in problem["message"]
    assert database_snapshot() == before


def test_the_upload_page_names_the_jsonl_row_with_another_number_of_references(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    before = database_snapshot()
    response = page_upload(
        owner, campaign, {"data": [jsonl_file(FIRST_ROW_ONE_REFERENCE, SECOND_ROW_TWO_REFERENCES)]}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "data.jsonl</code>, line 2: 2 references, but earlier rows have 1" in page
    assert database_snapshot() == before


def test_a_jsonl_number_too_long_for_python_is_refused_as_malformed_naming_its_line(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    body = (
        json.dumps(FIRST_ROW_ONE_REFERENCE)
        + '\n{"doc_id": "d", "seg_id": '
        + "1" * 5000
        + ', "source": "b", "reference": "B"}\n'
    ).encode()
    before = database_snapshot()
    response = api_upload(owner, campaign, {"data": [SimpleUploadedFile("data.jsonl", body)]})
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert (problem["file"], problem["line"]) == ("data.jsonl", 2)
    assert problem["message"].startswith("malformed JSONL: a number has more than")
    assert database_snapshot() == before


def test_a_jsonl_line_nested_too_deeply_is_refused_as_malformed_naming_its_line(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    body = (json.dumps(FIRST_ROW_ONE_REFERENCE) + "\n" + "[" * 100_000 + "\n").encode()
    before = database_snapshot()
    response = api_upload(owner, campaign, {"data": [SimpleUploadedFile("data.jsonl", body)]})
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert problem == {
        "file": "data.jsonl",
        "line": 2,
        "message": "malformed JSONL: nested too deeply",
    }
    assert database_snapshot() == before


def long_reference_upload() -> dict[str, object]:
    long_name = "r" * (LABEL_MAX + 20) + ".txt"
    return {
        "source": SimpleUploadedFile("src.txt", lines(SOURCE)),
        "references": [SimpleUploadedFile(long_name, lines(REF_A))],
    }


def test_a_reference_file_name_longer_than_the_label_column_is_refused_naming_the_file(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    before = database_snapshot()
    response = api_upload(owner, campaign, long_reference_upload())
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert (problem["file"], problem["line"]) == ("r" * (LABEL_MAX + 20) + ".txt", None)
    assert f"reference label longer than {LABEL_MAX} characters" in problem["message"]
    assert database_snapshot() == before


def test_the_upload_page_names_a_reference_file_name_longer_than_the_label_column(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    before = database_snapshot()
    response = page_upload(owner, campaign, long_reference_upload())
    assert response.status_code == 400
    page = response.content.decode()
    assert f"reference label longer than {LABEL_MAX} characters" in page
    assert database_snapshot() == before


def test_an_xml_translator_longer_than_the_label_column_is_refused_naming_its_line(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    xml = (
        '<dataset>\n<doc id="d">\n<src><p><seg id="1">a</seg></p></src>\n'
        f'<ref translator="{"t" * (LABEL_MAX + 100)}"><p><seg id="1">A</seg></p></ref>\n'
        "</doc>\n</dataset>\n"
    ).encode()
    before = database_snapshot()
    response = api_upload(owner, campaign, {"data": [SimpleUploadedFile("test.xml", xml)]})
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert (problem["file"], problem["line"]) == ("test.xml", 4)
    assert f"longer than {LABEL_MAX} characters" in problem["message"]
    assert "translator" in problem["message"]
    assert database_snapshot() == before


def latin1_declared_xml() -> str:
    return (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<dataset>\n<doc id="d">\n'
        '<src><p><seg id="1">Grüße aus Köln</seg></p></src>\n'
        '<ref translator="A"><p><seg id="1">Greetings from Cologne</seg></p></ref>\n'
        "</doc>\n</dataset>\n"
    )


def test_xml_in_utf8_declaring_another_encoding_is_stored_as_written(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    xml = SimpleUploadedFile("test.xml", latin1_declared_xml().encode("utf-8"))
    response = api_upload(owner, campaign, {"data": [xml]})
    assert response.status_code == 201, response.content
    assert Segment.objects.get(campaign=campaign).source == "Grüße aus Köln"


def test_the_upload_page_stores_utf8_xml_declaring_another_encoding_as_written(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    xml = SimpleUploadedFile("test.xml", latin1_declared_xml().encode("utf-8"))
    response = page_upload(owner, campaign, {"data": [xml]})
    assert response.status_code == 302
    assert Segment.objects.get(campaign=campaign).source == "Grüße aus Köln"


def test_xml_really_in_latin1_is_refused_as_not_utf8_like_plain_text(
    owner: AbstractBaseUser,
) -> None:
    campaign = make_campaign(owner=owner)
    xml = SimpleUploadedFile("test.xml", latin1_declared_xml().encode("iso-8859-1"))
    before = database_snapshot()
    response = api_upload(owner, campaign, {"data": [xml]})
    assert response.status_code == 400, response.content
    problem = response.json()["problems"][0]
    assert (problem["file"], problem["line"]) == ("test.xml", 4)
    assert problem["message"] == "not valid UTF-8 (byte 0xfc); save the file as UTF-8"
    assert database_snapshot() == before
