"""The OpenAPI schema describes the whole API, and the API holds up against it.

1. Every API route that Django's resolver knows (everything under ``/api/`` but the schema, its
   docs and DRF's browsable root) appears in ``/api/schema/`` with each of its methods, and the
   schema generates without a warning and validates (``manage.py spectacular --fail-on-warn
   --validate``).
2. A bounded schemathesis run: for every operation, requests generated from the schema (valid and
   invalid ones) go through the real WSGI application to PostgreSQL, authenticated by token as
   an organizer who owns a seeded campaign and annotates it, half of them aimed at that
   campaign's real ids. No answer may be a server error, and every answer must match the schema
   (status code, content type, body).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.conftest import ROOT

# Not API operations: the schema itself, its Swagger UI, and DRF's browsable index of the router.
NOT_OPERATIONS = {"/api/schema/", "/api/docs/", "/api/"}
IGNORED_METHODS = {"options", "head", "trace"}


def _route(pattern: Any) -> str:
    """A URL pattern as an OpenAPI path template: ``<uuid:campaign_id>`` and ``(?P<pk>…)``
    become ``{campaign_id}`` and ``{id}`` (drf-spectacular names a router's pk ``id``)."""
    text = str(pattern)
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", text)
    text = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", text)
    text = text.replace("{pk}", "{id}").lstrip("^").rstrip("$")
    return text.replace("\\.", ".")


def _walk(patterns: list[Any], prefix: str = "/") -> Iterator[tuple[str, Any]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + _route(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + _route(entry.pattern), entry.callback


def _methods(callback: Any) -> set[str]:
    actions = getattr(callback, "actions", None)
    if actions:  # a viewset route: the HTTP methods the router mapped to actions
        return {method.lower() for method in actions}
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    assert view is not None, f"{callback} is not a class-based or DRF view"
    return {m for m in view.http_method_names if hasattr(view, m)} - IGNORED_METHODS


def api_routes() -> dict[str, set[str]]:
    """Every API path template with its methods, from Django's resolver."""
    routes: dict[str, set[str]] = {}
    for path, callback in _walk(get_resolver().url_patterns):
        # DRF's format-suffix duplicates (``\.{format}``) are the same operation.
        if not path.startswith("/api/") or path in NOT_OPERATIONS or "{format}" in path:
            continue
        routes.setdefault(path, set()).update(_methods(callback))
    return routes


def test_the_resolver_finds_the_api_routes() -> None:
    """The enumeration below is only as good as its walk: it finds the routes of every app."""
    routes = api_routes()
    assert routes["/api/campaigns/"] == {"get", "post"}
    assert routes["/api/campaigns/{id}/"] == {"get", "put", "patch"}
    assert routes["/api/campaigns/{id}/upload/"] == {"post"}
    assert routes["/api/campaigns/{campaign_id}/analysis/"] == {"get", "post"}
    assert routes["/api/campaigns/{campaign_id}/reports/judgments.{fmt}"] == {"get"}
    assert routes["/api/assignments/{assignment_id}/submit/"] == {"post"}


@pytest.mark.django_db
def test_every_api_endpoint_and_method_is_in_the_openapi_schema(client) -> None:  # type: ignore[no-untyped-def]
    import yaml

    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    documented = {
        path: {m for m in item if m not in {"parameters", "summary", "description"}}
        for path, item in schema["paths"].items()
    }
    missing = {
        f"{method.upper()} {path}"
        for path, methods in api_routes().items()
        for method in methods - documented.get(path, set())
    }
    assert not missing, f"API operations missing from /api/schema/: {sorted(missing)}"
    assert len(documented) >= 18


def test_the_schema_generates_without_warnings_and_validates() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--fail-on-warn",
            "--validate",
            "--file",
            "/dev/null",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    assert "Error" not in result.stderr, result.stderr


# What the schemathesis run found, pinned as plain tests.


def test_a_page_limit_beyond_the_databases_integers_is_capped(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    owner = as_role("owner")
    for url in (f"/api/campaigns/{campaign.pk}/segments/", "/api/campaigns/"):
        response = owner.get(url, {"limit": 10**30})
        assert response.status_code == 200, url
        assert response.json()["count"] == len(response.json()["results"])


@pytest.mark.django_db(transaction=True)
def test_a_metric_name_with_a_nul_byte_is_an_unknown_metric(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    from tests.dashboard_factories import analysis_run_sync

    analysis_run_sync(campaign=campaign, bootstrap_samples=20, ar_trials=20)
    url = f"/api/campaigns/{campaign.pk}/results/segments/"
    response = as_role("owner").get(url, {"metric": "bl\x00eu"})
    assert response.status_code == 400
    assert response.json()["detail"] == "Choose a metric: bleu, chrf, ter."
