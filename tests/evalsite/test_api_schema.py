"""The OpenAPI schema describes the whole API, and the API holds up against it.

1. Every API route that Django's resolver knows (everything under ``/api/`` but the schema, its
   docs and DRF's browsable root) appears in ``/api/schema/`` with each of its methods, and the
   schema generates without a warning and validates (``manage.py spectacular --fail-on-warn
   --validate``).
2. A bounded schemathesis run: for every operation, requests generated from the schema (valid and
   invalid ones) go through the real WSGI application to PostgreSQL, authenticated by token as
   an organizer who owns a seeded campaign and annotates it, half of them aimed at that
   campaign's real ids. No answer may be a server error, and every answer, errors included, must
   be documented and match its schema (content type, body): the errors' statuses and bodies
   come from ``evalsite/schema.py`` and the views' own ``extend_schema`` (409 of a submit).
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections import Counter
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
        return {method.lower() for method in actions} - IGNORED_METHODS
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
    assert routes["/api/assignments/{assignment_id}/screen/"] == {"post"}


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

    analysis_run_sync(campaign=campaign, resamples=20, ar_trials=20)
    url = f"/api/campaigns/{campaign.pk}/results/segments/"
    response = as_role("owner").get(url, {"metric": "bl\x00eu"})
    assert response.status_code == 400
    assert response.json()["detail"] == "Choose a metric: bleu, chrf, ter."


# Examples per operation and generation mode: the whole run stays well under a minute.
MAX_EXAMPLES = 25


@pytest.fixture
def seeded(transactional_db: None) -> dict[str, Any]:
    """An organizer with an API token who owns a campaign with data, a protocol with tasks, and
    annotates it too (a task taken, one judgment recorded), with a finished analysis: the real
    ids to aim requests at."""
    from rest_framework.authtoken.models import Token

    from annotation.judging.services import judgment_record
    from annotation.tasking.services import task_assign_next
    from tests.dashboard_factories import analysis_run_sync
    from tests.factories import full_answer, make_campaign, make_config, make_user

    owner = make_user("schema-owner", organizer=True)
    campaign = make_campaign(owner=owner, with_data=True)
    campaign.annotators.add(owner)
    config = make_config(campaign, items_per_task=4, outputs_per_screen=2)
    assignment = task_assign_next(config=config, annotator=owner)
    assert assignment is not None
    item = assignment.task.items.order_by("position").first()
    judgment_record(
        assignment_id=assignment.pk,
        annotator=owner,
        item_id=item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(item),
    )
    analysis_run_sync(campaign=campaign, user=owner, resamples=20, ar_trials=20)
    screens = []
    for later in assignment.task.items.order_by("position")[1:]:
        outputs = list(later.outputs.order_by("position"))
        criteria = config.definition.criteria_for(len(outputs))
        screens.append(
            {
                "item": later.pk,
                "outputs": [str(o.pk) for o in outputs],
                "criteria": [(c.key, c.minimum, c.maximum) for c in criteria],
            }
        )
    return {
        "screens": screens,
        "token": Token.objects.create(user=owner).key,
        "path": {
            "id": str(campaign.pk),
            "campaign_id": str(campaign.pk),
            "config_id": config.pk,
            "assignment_id": str(assignment.pk),
        },
    }


def _with_body(case: Any, body: dict[str, Any]) -> Any:
    case.body = body
    case.media_type = "application/json"
    return case


def _answers(screens: list[dict[str, Any]]) -> Any:
    """Submits to the task's items: every output and criterion answered with a value in, at the
    edge of or outside the scale, whole or not, as a new answer or a revision."""
    from hypothesis import strategies as st

    def body(screen: dict[str, Any]) -> Any:
        value = {
            key: st.one_of(
                st.integers(low, high), st.integers(low - 1, high + 1), st.floats(low - 1, high + 1)
            )
            for key, low, high in screen["criteria"]
        }
        return st.fixed_dictionaries(
            {
                "item": st.just(screen["item"]),
                "revision": st.integers(0, 2),
                "submission_id": st.uuids().map(str),
                "answer": st.fixed_dictionaries(
                    {output: st.fixed_dictionaries(value) for output in screen["outputs"]}
                ),
            }
        )

    return st.sampled_from(screens).flatmap(body)


# The operations are run in parts, each a test of its own: the same requests, a shorter test.
PARTS = 3


@pytest.mark.parametrize("part", range(PARTS))
def test_schemathesis_finds_no_server_error_and_no_schema_mismatch(seeded, part: int) -> None:  # type: ignore[no-untyped-def]
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
    )

    from annotation.models import Campaign
    from evalsite.wsgi import application

    schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
    headers = {"Authorization": f"Token {seeded['token']}"}
    checks = [not_a_server_error, content_type_conformance, response_schema_conformance]
    failures: list[str] = []
    answered: Counter[tuple[str, int]] = Counter()

    def run(label: str, strategy: Any) -> None:
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,  # the same requests on every run: CI does not flicker
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def requests(case: Any) -> None:
            response = case.call(headers=headers)
            answered[label, response.status_code // 100] += 1
            documented = case.operation.definition.raw["responses"]
            # Every answer is documented, errors included, and matches its schema.
            assert str(response.status_code) in documented, (
                f"{label} answered {response.status_code}, documented: {sorted(documented)}"
            )
            case.validate_response(response, checks=checks)

        try:
            requests()
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"{label}: {exc}")

    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    size = -(-len(operations) // PARTS)
    mine = operations[part * size : (part + 1) * size]
    for operation in mine:
        # An earlier operation may have closed the campaign (PUT, PATCH): open it again, so
        # the annotator's operations reach their tasks.
        Campaign.objects.filter(pk=seeded["path"]["id"]).update(status=Campaign.Status.ACTIVE)
        names = {p.name for p in operation.path_parameters}
        real = {k: v for k, v in seeded["path"].items() if k in names}
        strategies = [
            operation.as_strategy(mode, path_parameters=real or None)
            for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
        ]
        if real:  # also ids of objects that do not exist
            strategies.append(operation.as_strategy(schemathesis.GenerationMode.POSITIVE))
        run(operation.label, st.one_of(strategies))
        if operation.path.endswith("/submit/"):  # and answers to the task's real items
            answers = st.builds(
                _with_body,
                operation.as_strategy(path_parameters=real, media_type="application/json"),
                _answers(seeded["screens"]),
            )
            run(f"{operation.label} (answers)", answers)
    assert not failures, "\n\n".join(failures)
    # The run reached the views, not only the 404 of unknown ids: many answers succeeded, and
    # answers to the real items were stored.
    assert sum(n for (_, status), n in answered.items() if status == 2) > 100 // PARTS, answered
    if any(operation.path.endswith("/submit/") for operation in mine):
        label = "POST /api/assignments/{assignment_id}/submit/ (answers)"
        assert answered[label, 2] > 0, answered
