"""The REST API: campaigns, multipart upload, contents, token auth and the OpenAPI docs."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Campaign, Segment
from tests.factories import REF_A, SOURCE, lines, make_user, plain_files
from tests.support.uploads import GOOD_FORMS, campaign_dump, database_snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(owner) -> APIClient:  # type: ignore[no-untyped-def]
    client = APIClient()
    token = Token.objects.create(user=owner)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def multipart(files) -> dict[str, object]:  # type: ignore[no-untyped-def]
    data: dict[str, list[SimpleUploadedFile]] = {}
    for f in files:
        data.setdefault(f.role, []).append(SimpleUploadedFile(f.name, f.content))
    return {k: (v if k in ("references", "systems", "data") else v[0]) for k, v in data.items()}


def test_an_organizer_creates_uploads_and_reads_a_campaign_with_a_token(api, owner) -> None:  # type: ignore[no-untyped-def]
    created = api.post(
        reverse("api-campaign-list"),
        {"name": "WMT de-en", "source_language": "de", "target_language": "en"},
        format="json",
    )
    assert created.status_code == 201, created.content
    campaign_id = created.json()["id"]
    assert created.json()["owner"] == owner.username

    upload = api.post(
        reverse("api-campaign-upload", args=[campaign_id]),
        multipart(plain_files()),
        format="multipart",
    )
    assert upload.status_code == 201, upload.content
    assert upload.json()["summary"]["segments_added"] == len(SOURCE)
    assert upload.json()["summary"]["systems_added"] == ["bad", "good"]

    contents = api.get(reverse("api-campaign-contents", args=[campaign_id])).json()
    assert contents["counts"]["segments"] == 4
    assert contents["counts"]["reference_sets"] == 2
    assert contents["counts"]["translations"] == 16
    assert [s["name"] for s in contents["systems"]] == ["bad", "good"]
    assert [r["name"] for r in contents["systems"][1]["runs"]] == ["opt0", "opt1"]

    segments = api.get(reverse("api-campaign-segments", args=[campaign_id]), {"limit": 2}).json()
    assert segments["count"] == 4
    assert segments["results"][0]["source"] == SOURCE[0]
    assert segments["results"][0]["references"][0] == REF_A[0]


def test_an_api_upload_error_names_file_and_line_and_stores_nothing(api, owner) -> None:  # type: ignore[no-untyped-def]
    campaign = Campaign.objects.create(
        name="x", source_language="de", target_language="en", owner=owner
    )
    files = plain_files()
    files[0] = type(files[0])("src.de", lines([SOURCE[0], "", *SOURCE[2:]]), "source")
    response = api.post(
        reverse("api-campaign-upload", args=[campaign.id]), multipart(files), format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["problems"][0] == {"file": "src.de", "line": 2, "message": "empty source line"}
    assert not Segment.objects.filter(campaign=campaign).exists()


@pytest.mark.parametrize("form", list(GOOD_FORMS))
def test_every_upload_form_through_the_api_stores_the_same_data(api, owner, form: str) -> None:  # type: ignore[no-untyped-def]
    def uploaded(files) -> dict[str, object]:  # type: ignore[no-untyped-def]
        campaign = Campaign.objects.create(
            name=f"c{Campaign.objects.count()}",
            source_language="de",
            target_language="en",
            owner=owner,
        )
        response = api.post(
            reverse("api-campaign-upload", args=[campaign.id]), multipart(files), format="multipart"
        )
        assert response.status_code == 201, response.content
        return campaign_dump(campaign)

    assert uploaded(GOOD_FORMS[form]()) == uploaded(plain_files())


def test_replacing_a_system_through_the_api_needs_replace_true(api, owner) -> None:  # type: ignore[no-untyped-def]
    campaign = Campaign.objects.create(
        name="x", source_language="de", target_language="en", owner=owner
    )
    url = reverse("api-campaign-upload", args=[campaign.id])
    assert api.post(url, multipart(plain_files()), format="multipart").status_code == 201
    again = {"systems": [SimpleUploadedFile("good.opt0.txt", lines(REF_A))]}
    before = database_snapshot()
    refused = api.post(url, again, format="multipart")
    assert refused.status_code == 400
    assert "replace" in refused.json()["detail"]
    assert database_snapshot() == before
    again = {"systems": [SimpleUploadedFile("good.opt0.txt", lines(REF_A))], "replace": "true"}
    replaced = api.post(url, again, format="multipart")
    assert replaced.status_code == 201, replaced.content
    assert replaced.json()["summary"]["systems_replaced"] == ["good"]
    assert campaign_dump(campaign)["outputs"]["good/opt0"] == REF_A


def test_an_oversized_file_through_the_api_is_refused_naming_it(api, owner, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EVALSITE_UPLOAD_MAX_BYTES = 40
    campaign = Campaign.objects.create(
        name="x", source_language="de", target_language="en", owner=owner
    )
    before = database_snapshot()
    response = api.post(
        reverse("api-campaign-upload", args=[campaign.id]),
        multipart(plain_files()),
        format="multipart",
    )
    assert response.status_code == 400
    problem = response.json()["problems"][0]
    assert problem["file"] == "src.de"
    assert "the limit is 40 bytes" in problem["message"]
    assert database_snapshot() == before


def test_an_organizer_updates_a_campaign_and_names_co_organizers(
    api, campaign, other_organizer
) -> None:  # type: ignore[no-untyped-def]
    response = api.patch(
        reverse("api-campaign-detail", args=[campaign.id]),
        {"status": "closed", "organizers": [other_organizer.username]},
        format="json",
    )
    assert response.status_code == 200, response.content
    campaign.refresh_from_db()
    assert campaign.status == "closed"
    assert list(campaign.organizers.all()) == [other_organizer]


def test_only_organizers_can_be_co_organizers(api, campaign, annotator) -> None:  # type: ignore[no-untyped-def]
    response = api.patch(
        reverse("api-campaign-detail", args=[campaign.id]),
        {"organizers": [annotator.username]},
        format="json",
    )
    assert response.status_code == 400
    assert "not an organizer" in str(response.json()["organizers"])


def test_an_invalid_campaign_is_refused_with_field_errors(api) -> None:  # type: ignore[no-untyped-def]
    response = api.post(reverse("api-campaign-list"), {"name": ""}, format="json")
    assert response.status_code == 400
    assert set(response.json()) >= {"name", "source_language", "target_language"}


def test_a_wrong_token_is_refused() -> None:
    make_user("someone", organizer=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(reverse("api-campaign-list")).status_code == 401


def test_the_openapi_schema_describes_the_endpoints(api) -> None:  # type: ignore[no-untyped-def]
    response = api.get(reverse("api_schema"), HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert "/api/campaigns/{id}/upload/" in schema["paths"]
    assert (
        "multipart/form-data"
        in schema["paths"]["/api/campaigns/{id}/upload/"]["post"]["requestBody"]["content"]
    )


def test_the_api_docs_page_loads_its_assets_from_the_installed_package(client, owner) -> None:  # type: ignore[no-untyped-def]
    client.force_login(owner)
    response = client.get(reverse("api_docs"))
    assert response.status_code == 200
    html = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("drf_spectacular_sidecar/swagger-ui-dist" in a for a in assets), assets
    assert not any(a.startswith(("http://", "https://", "//")) for a in assets), assets
    for asset in (a for a in assets if a.startswith("/static/")):
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not an installed file"
