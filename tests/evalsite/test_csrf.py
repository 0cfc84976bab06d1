"""CSRF protection on every state-changing request, with Django's CSRF checks switched on.

For every URL pattern and every state-changing method (POST, PUT, PATCH, DELETE) that some role
may use, that role's request (from the permission matrix, with its valid body) is refused with 403
without a CSRF token, and gets the matrix's answer with one. The API enforces CSRF on session
logins too (a browser's cookies are sent by any page); with a token in the Authorization header
there is no cookie to abuse, so no CSRF token is needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.support.permissions import (
    LOGIN,
    MATRIX,
    ROLES,
    SITE_PATTERNS,
    STATE_CHANGING,
    Pattern,
    Seed,
    outcome,
    path_for,
    seed_rolled_back,
)


@pytest.fixture(scope="module")
def seeded(django_db_setup: None, django_db_blocker: Any) -> Iterator[Seed]:
    with seed_rolled_back(django_db_blocker) as built:
        yield built


@pytest.fixture
def seed(seeded: Seed, db: None) -> Seed:
    return seeded


REFUSALS = {LOGIN, 401, 403, 404, 405}
# Who to try first: an anonymous visitor where one may (login, logout, invite links).
PREFERENCE = ("anonymous", "owner", "annotator", *ROLES)


def allowed_requests() -> list[tuple[Pattern, str, str]]:
    """(pattern, method, role) for each state-changing method some role may use."""
    found = []
    for pattern in SITE_PATTERNS:
        rule = MATRIX[str(pattern.name)]
        for method in STATE_CHANGING:
            if pattern.name == "logout":
                # A logged-in user; success is a redirect to the login page, as refusals are.
                if method == "POST":
                    found.append((pattern, method, "owner"))
                continue
            role = next((r for r in PREFERENCE if rule(r, method) not in REFUSALS), None)
            if role is not None:
                found.append((pattern, method, role))
    return found


ALLOWED = allowed_requests()


def send(client: Client, method: str, url: str, seed: Seed, name: str, **extra: Any) -> Any:
    body, is_json = seed.body(name)
    if is_json:
        return client.generic(
            method, url, json.dumps(body), content_type="application/json", **extra
        )
    if method == "POST":
        return client.post(url, body, **extra)
    return client.generic(method, url, **extra)


def csrf_client(seed: Seed, role: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    user = seed.users[role]
    if user is not None:
        client.force_login(user)
    return client


def test_every_state_changing_view_is_tried() -> None:
    """The list is not accidentally empty or partial: every form view of the site is in it."""
    names = {pattern.name for pattern, _method, _role in ALLOWED}
    for name in ("login", "logout", "campaign_create", "campaign_upload", "invite_revoke"):
        assert name in names
    assert {
        "api-assignment-submit",
        "api-assignment-screen-submit",
        "api-campaign-upload",
        "api-campaign-detail",
    } <= names


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("pattern", "method", "role"),
    ALLOWED,
    ids=[f"{method} {pattern.route} as {role}" for pattern, method, role in ALLOWED],
)
def test_a_request_without_csrf_token_is_refused_and_with_one_accepted(
    pattern: Pattern, method: str, role: str, seed: Seed
) -> None:
    name = str(pattern.name)
    url = path_for(pattern, seed)
    client = csrf_client(seed, role)

    refused = send(client, method, url, seed, name)
    assert refused.status_code == 403
    assert b"CSRF" in refused.content

    # The token a page hands out: the login form renders one and sets its cookie.
    assert client.get(reverse("login")).status_code == 200
    token = client.cookies["csrftoken"].value
    accepted = send(client, method, url, seed, name, HTTP_X_CSRFTOKEN=token)
    assert outcome(accepted) == MATRIX[name](role, method)


API_ALLOWED = [
    (pattern, method, role)
    for pattern, method, role in ALLOWED
    if pattern.route.startswith("api/") and role != "anonymous"
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("pattern", "method", "role"),
    API_ALLOWED,
    ids=[f"{method} {pattern.route} as {role}" for pattern, method, role in API_ALLOWED],
)
def test_the_api_with_a_token_needs_no_csrf_token(
    pattern: Pattern, method: str, role: str, seed: Seed
) -> None:
    name = str(pattern.name)
    user = seed.users[role]
    assert user is not None
    key = Token.objects.create(user=user).key
    client = Client(enforce_csrf_checks=True)  # no session: the token is the only credential
    response = send(
        client, method, path_for(pattern, seed), seed, name, HTTP_AUTHORIZATION=f"Token {key}"
    )
    assert outcome(response) == MATRIX[name](role, method)
