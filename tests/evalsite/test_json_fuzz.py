"""No JSON body gives a 5xx, on any route that takes JSON, to any signed-in account.

The routes are read from Django's resolver: every DRF view with a JSON parser for a
state-changing method, so a new one is covered without an entry here. Each is sent, by the
campaign's owner, its annotator and a crowd worker (an account anyone with a study link can
make): JSON nested 1,000 deep (arrays and objects), every JSON type but an object at the top,
1e400, 10**400 as an integer literal, NaN and Infinity, a NUL character, a lone surrogate,
invalid UTF-8 and cut-off JSON; and, where the role may use the route, a valid body with each
of its values in turn replaced by those (spans in ESA submits, tutorial submits and tutorial
expectations included). Refusals are 4xx answered in JSON."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.exceptions import ParseError
from rest_framework.views import APIView

from annotation.crowd.services import crowd_link_create, crowd_task_start, crowd_worker_enter
from annotation.models import Assignment, Item, ProtocolConfig, TutorialItem
from annotation.tasking.services import task_assign_next
from evalsite.parsers import JSONParser
from tests.factories import make_config
from tests.support.permissions import Seed, seed_rolled_back

JSON = "application/json"
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
PLACEHOLDER = "\u0000fuzz\u0000"

# Values that replace the whole body or one value of a valid body (JSON text).
VALUES = {
    "arrays 1,000 deep": "[" * 1000 + "]" * 1000,
    "objects 1,000 deep": '{"a":' * 1000 + "1" + "}" * 1000,
    "a list": "[1, 2]",
    "an object": '{"a": [1]}',
    "a string": '"x"',
    "a number": "7",
    "null": "null",
    "true": "true",
    "1e400": "1e400",
    "10**400": "1" + "0" * 400,
    "-10**400": "-1" + "0" * 400,
    "2**53": str(2**53),
    "2**53 - 1": str(2**53 - 1),
    "-(2**53 - 1)": str(-(2**53 - 1)),
    "1e308": "1e308",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "a NUL character": '"a\\u0000b"',
    "a lone surrogate": '"\\ud800"',
}
# Bodies that are not JSON values at all.
RAW = {
    "invalid UTF-8": b'{"a": "\xff\xfe\xc3"}',
    "cut off": b'{"item": [1, ',
    "empty": b"",
    "a BOM": b'\xef\xbb\xbf{"a": 1}',
}


# Valid bodies that the route stores, by (route, method, role).
TAKEN = {
    ("api-assignment-submit", "POST", "crowd"): 201,
    ("api-assignment-screen-submit", "POST", "crowd"): 201,
    ("api-config-tutorial", "POST", "owner"): 201,
}


@dataclass(frozen=True)
class Route:
    route: str
    name: str
    params: tuple[str, ...]
    methods: tuple[str, ...]


def _json_methods(callback: Any) -> tuple[str, ...]:
    """The state-changing methods for which the view has a JSON parser (none: not DRF)."""
    cls = getattr(callback, "cls", None)
    if cls is None or not issubclass(cls, APIView):
        return ()
    actions = getattr(callback, "actions", None)
    default = callback.initkwargs.get("parser_classes", cls.parser_classes)
    methods = []
    for method in STATE_CHANGING:
        if actions is not None:
            action = actions.get(method.lower())
            if action is None:
                continue
            parsers = getattr(getattr(cls, action), "kwargs", {}).get("parser_classes", default)
        elif hasattr(cls, method.lower()):
            parsers = default
        else:
            continue
        if any(parser.media_type == JSON for parser in parsers):
            methods.append(method)
    return tuple(methods)


def json_routes(patterns: list[Any] | None = None, prefix: str = "") -> Iterator[Route]:
    """Every route of the project that takes a JSON body."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from json_routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and entry.name:
            methods = _json_methods(entry.callback)
            pattern = entry.pattern
            params = tuple(getattr(pattern, "converters", None) or pattern.regex.groupindex)
            if methods:
                yield Route(route, entry.name, params, methods)


ROUTES = sorted(json_routes(), key=lambda r: r.route)


@dataclass
class Fuzzed:
    seed: Seed
    esa: ProtocolConfig
    accounts: dict[str, Any]
    assignments: dict[str, Assignment]


@pytest.fixture(scope="module")
def fuzzed(django_db_setup: None, django_db_blocker: Any) -> Iterator[Fuzzed]:
    """The permission matrix's seed, plus an ESA protocol with a tutorial and a crowd link:
    the annotator holds an ESA task (whose tutorial it answers), a crowd worker another."""
    with seed_rolled_back(django_db_blocker) as seed:
        campaign = seed.campaign
        esa = make_config(campaign, "esa", name="ESA", outputs_per_screen=1, items_per_task=2)
        crowd_config = make_config(
            campaign, "esa", name="ESA crowd", outputs_per_screen=1, items_per_task=2
        )
        TutorialItem.objects.create(
            config=esa, position=0, source="a", outputs=["b c"], expectation={}
        )
        link = crowd_link_create(
            campaign=campaign,
            created_by=seed.users["owner"],
            config=crowd_config,
            platform="prolific",
            id_parameter="PROLIFIC_PID",
            rule="not_failed",
        )
        worker = crowd_worker_enter(invite=link.invite, worker_id="5f0c1a2b3c4d5e6f7a8b9c0d")
        crowd = crowd_task_start(worker=worker)
        annotator = task_assign_next(config=esa, annotator=seed.users["annotator"])
        assert crowd is not None
        assert annotator is not None
        yield Fuzzed(
            seed,
            esa,
            {"owner": seed.users["owner"], "annotator": annotator.annotator, "crowd": worker.user},
            {"annotator": annotator, "crowd": crowd},
        )


def _values(fuzzed: Fuzzed, role: str) -> dict[str, Any]:
    """Path parameters: the role's own task; the owner's protocol is the ESA one."""
    values = fuzzed.seed.values() | {"config_id": fuzzed.esa.pk}
    if role in fuzzed.assignments:
        values["assignment_id"] = fuzzed.assignments[role].pk
    return values


def _span_answer(item: Item) -> dict[str, Any]:
    return {
        str(o.pk): {"score": 50, "spans": [{"start": 0, "end": 1, "severity": "major"}]}
        for o in item.outputs.all()
    }


def valid_body(fuzzed: Fuzzed, role: str, name: str) -> Any:
    """A body the route takes (or nearly): the matrix's, with spans where a route has them."""
    assignment = fuzzed.assignments.get(role)
    spans = [{"start": 0, "end": 1, "severity": "major"}]
    if name == "api-assignment-submit" and assignment is not None:
        item = Item.objects.filter(task=assignment.task).order_by("position").first()
        assert item is not None
        return {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": _span_answer(item),
        }
    if name == "api-assignment-screen-submit" and assignment is not None:
        item = Item.objects.filter(task=assignment.task).order_by("position").first()
        assert item is not None
        answer = {
            "item": item.pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": _span_answer(item),
        }
        return {"screen": item.pk, "items": [answer], "document_score": None}
    if name == "api-assignment-tutorial-submit":
        item = fuzzed.esa.tutorial_items.get()
        return {
            "item": item.pk,
            "submission_id": str(uuid.uuid4()),
            "answer": {"1": {"score": 50, "spans": spans}},
        }
    if name == "api-config-tutorial":
        expectation = {"spans": {"1": spans}, "scores": {"1": {"score": [0, 30]}}}
        item = {"source": "a", "outputs": ["b c"], "expectation": expectation, "feedback": "f"}
        return {"items": [item], "on_fail": "stop", "attempts": 2}
    if name == "api-campaign-analysis-settings":
        return {"preset": "wmt", "seed": 1, "resamples": 200, "alpha": 0.05, "include_failed": True}
    if name == "api-campaign-annotator-decisions":
        username = fuzzed.seed.assignment.annotator.get_username()
        return {"annotator": username, "action": "exclude", "reason": "careless"}
    body, _is_json = fuzzed.seed.body(name)
    return body


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value inside ``value`` (its keys and indexes), the root first."""
    yield at
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths(inner, (*at, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths(inner, (*at, index))


def replaced(body: Any, at: tuple[Any, ...], text: str) -> bytes:
    """``body`` as JSON with the value at ``at`` replaced by the JSON text ``text``."""
    if not at:
        return text.encode()
    copy = json.loads(json.dumps(body))
    inner = copy
    for step in at[:-1]:
        inner = inner[step]
    inner[at[-1]] = PLACEHOLDER
    return json.dumps(copy).replace(json.dumps(PLACEHOLDER), text).encode()


def bodies(body: Any, *, nested: bool) -> Iterator[tuple[str, bytes]]:
    for label, raw in RAW.items():
        yield label, raw
    for at in paths(body) if nested else [()]:
        for label, text in VALUES.items():
            yield f"{label} at {'/'.join(map(str, at)) or 'the top'}", replaced(body, at, text)


def test_the_routes_that_take_json_are_found() -> None:
    names = {r.name for r in ROUTES}
    assert {
        "api-assignment-submit",
        "api-assignment-screen-submit",
        "api-assignment-document-score",
        "api-assignment-tutorial-submit",
        "api-config-tutorial",
        "api-campaign-annotators",
        "api-campaign-list",
        "api-campaign-detail",
    } <= names
    # Multipart-only routes take no JSON.
    assert "api-campaign-upload" not in names


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["owner", "annotator", "crowd"])
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.route)
def test_no_json_body_gives_a_server_error(fuzzed: Fuzzed, role: str, route: Route) -> None:
    # A view's exception answers 500 here, as in production, instead of ending the test.
    client = Client(raise_request_exception=False)
    client.force_login(fuzzed.accounts[role])
    values = _values(fuzzed, role)
    url = reverse(route.name, kwargs={p: values[p] for p in route.params})
    failures = []
    for method in route.methods:
        body = valid_body(fuzzed, role, route.name)
        # Values inside a valid body only where the role gets past the role check.
        probe = client.generic(method, url, json.dumps(body), content_type=JSON)
        nested = probe.status_code not in (401, 403, 404, 405)
        # The span bodies are valid: their values reach the spans' checks.
        expected = TAKEN.get((route.name, method, role))
        assert expected in (None, probe.status_code), (url, probe.content)
        for label, raw in bodies(body, nested=nested):
            response = client.generic(method, url, raw, content_type=JSON)
            if response.status_code >= 500:
                failures.append(f"{method} {url} with {label}: {response.status_code}")
            elif response.status_code >= 400:
                assert response["Content-Type"] == JSON, (method, url, label, response.content)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[" * 1000 + b"]" * 1000, "nested more than 32 deep"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "nested more than 32 deep"),
        (b'{"n": NaN}', "NaN is not a JSON number"),
        (b'{"n": 1e400}', "1e400 is too large"),
        (b'{"n": ' + b"9" * 400 + b"}", "beyond ±(2^53 − 1)"),
        (b'{"s": "a\\u0000"}', "NUL character"),
        (b'{"\\udc00": 1}', "unpaired surrogate (\\udc00)"),
        (b'{"s": "\xff"}', "not UTF-8 (byte 8)"),
        (b'{"s": ', "not valid JSON"),
    ],
)
def test_the_parser_refuses_what_no_view_can_use_with_the_reason(body: bytes, reason: str) -> None:
    with pytest.raises(ParseError) as refused:
        JSONParser().parse(io.BytesIO(body))
    assert reason in str(refused.value.detail)


def test_the_parser_takes_astral_characters_and_the_largest_exact_integers() -> None:
    body = b'{"text": "\\ud83d\\ude00 \xf0\xa0\x80\x80", "n": [9007199254740991, -1.5e308]}'
    assert JSONParser().parse(io.BytesIO(body)) == {
        "text": "😀 𠀀",
        "n": [2**53 - 1, -1.5e308],
    }
    nested: Any = 1
    for _ in range(32):
        nested = [nested]
    assert JSONParser().parse(io.BytesIO(json.dumps(nested).encode())) == nested
