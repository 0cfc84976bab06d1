"""Every error of the REST API is JSON with a readable ``detail``, as its OpenAPI schema says:
addresses no view handles, server errors, the report downloads' errors; and the schema lists
the error answers of every operation (``evalsite/schema.py``). The pages keep their HTML."""

from __future__ import annotations

import pytest
import yaml
from django.test import Client
from django.urls import get_resolver

from evalsite import views

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/api/nothing-here/",
        # The route's converter refuses the id, so no view is reached.
        "/api/assignments/not-a-uuid/current/",
        # No such assignment (a fixed id: every test process collects the same tests).
        "/api/assignments/7d1c2f2e-4b8a-4e53-9a51-0c6f3b2d9e10/nothing/",
    ],
)
def test_an_api_address_no_view_handles_answers_json_404(as_role, path) -> None:  # type: ignore[no-untyped-def]
    for role in ("anonymous", "annotator"):
        response = as_role(role).get(path)
        assert response.status_code == 404, (role, path)
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detail": "Not found."}


def test_the_api_404_speaks_the_callers_language(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/api/nothing-here/", HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 404
    assert response.json() == {"detail": "Nicht gefunden."}


def test_a_page_address_no_view_handles_answers_the_sites_404_page(as_role) -> None:  # type: ignore[no-untyped-def]
    response = as_role("annotator").get("/nothing-here/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "There is nothing here, or you have no access to it." in response.content.decode()


def test_the_project_urls_name_these_error_views() -> None:
    resolver = get_resolver()
    assert resolver.resolve_error_handler(404) is views.page_not_found
    assert resolver.resolve_error_handler(500) is views.server_error


def test_a_server_error_in_the_api_answers_json_and_on_a_page_html(annotator, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from rest_framework.authtoken.models import Token

    def broken(**kwargs: object) -> int:
        raise RuntimeError("a fault injected by the test")

    # The first thing My tasks does, in the API and on the page.
    monkeypatch.setattr("annotation.judging.api.assignments_expire", broken)
    monkeypatch.setattr("annotation.judging.views.assignments_expire", broken)
    client = Client(raise_request_exception=False)
    token = Token.objects.create(user=annotator).key
    response = client.get("/api/my/tasks/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "A server error occurred."}
    client.force_login(annotator)
    page = client.get("/my/tasks/")
    assert page.status_code == 500
    assert page["Content-Type"].startswith("text/html")


def test_report_downloads_answer_their_errors_as_json(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    owner = as_role("owner")
    base = f"/api/campaigns/{campaign.pk}/reports"
    for path, formats in (
        (f"{base}/judgments.xlsx", "csv, tsv or jsonl"),
        (f"{base}/systems.xlsx", "csv, json or tex"),
    ):
        response = owner.get(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detail": f"Unknown format: use {formats}."}
    # A refused setting: before, the answer's type was the download renderer's "*/*".
    for path in (f"{base}/judgments.csv", f"{base}/systems.json", f"{base}/annotators.csv"):
        response = owner.get(path, {"seed": "x"}, HTTP_ACCEPT="*/*")
        assert response.status_code == 400, path
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"seed": ["A valid integer is required."]}
    response = as_role("annotator").get(f"{base}/systems.csv")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert "detail" in response.json()


def test_the_schema_lists_the_error_answers_of_every_operation(client) -> None:  # type: ignore[no-untyped-def]
    schema = yaml.safe_load(client.get("/api/schema/").content)
    error = {"$ref": "#/components/schemas/ErrorDetail"}
    assert schema["components"]["schemas"]["ErrorDetail"]["required"] == ["detail"]
    operations = [
        (path, method, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    assert len(operations) >= 20
    for path, method, operation in operations:
        responses = operation["responses"]
        expected = {"401", "403", "503"} | ({"404"} if "{" in path else set())
        if "requestBody" in operation or any(
            p["in"] == "query" for p in operation.get("parameters", [])
        ):
            expected.add("400")
        assert expected <= set(responses), (method, path, sorted(responses))
        for status in expected - {"400"}:
            assert responses[status]["content"]["application/json"]["schema"] == error
            assert responses[status]["description"]
    submit = schema["paths"]["/api/assignments/{assignment_id}/submit/"]["post"]["responses"]
    assert submit["409"]["content"]["application/json"]["schema"] == error
    assert "`stale`" in submit["409"]["description"]
    current = schema["paths"]["/api/assignments/{assignment_id}/current/"]["get"]["responses"]
    assert {"409", "410"} <= set(current)
    # Only errors get the error schema: the successes keep theirs.
    assert submit["201"]["content"]["application/json"]["schema"] != error
