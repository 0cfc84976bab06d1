"""Who may do what, over every URL of the site and the API.

The URL patterns are read from Django's resolver, so a new pattern without an entry in ``MATRIX``
fails ``test_the_matrix_covers_exactly_the_url_patterns``. Each pattern is requested with every
method (GET, POST, PUT, PATCH, DELETE) by six roles, its path parameters filled with real objects
of a seeded campaign:

- ``anonymous``;
- ``annotator``: an annotator of the campaign, holding one of its tasks;
- ``other_annotator``: an annotator of another campaign;
- ``owner``: the organizer who owns the campaign;
- ``other_organizer``: an organizer of another campaign;
- ``staff``: ``is_staff`` without permissions and not a superuser. The site treats staff like any
  other user (only organizer rights, the ``annotation.add_campaign`` permission, and a campaign's
  owner or co-organizer list open its pages); ``is_staff`` only opens the admin's door, and the
  admin then shows nothing without model permissions (``test_the_admin``).

Refusals: a page answers an anonymous visitor with a redirect to the login page and the API with
401; a logged-in user without organizer rights gets 403 on organizer pages; a campaign, task or
invite that is not the user's does not exist (404, so existence does not leak). A method a view
does not accept answers 405 to whoever got past the role check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import reverse

from tests.support.permissions import (
    MATRIX,
    METHODS,
    ROLES,
    SITE_PATTERNS,
    Pattern,
    Seed,
    outcome,
    path_for,
    request,
    seed_rolled_back,
)


@pytest.fixture(scope="module")
def seeded(django_db_setup: None, django_db_blocker: Any) -> Iterator[Seed]:
    """Built once per module (it takes seconds; the tests take many requests each)."""
    with seed_rolled_back(django_db_blocker) as built:
        yield built


def client_for(user: AbstractBaseUser | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_the_matrix_covers_exactly_the_url_patterns() -> None:
    unnamed = [p.route for p in SITE_PATTERNS if not p.name]
    assert unnamed == [], "name these URL patterns and give them a MATRIX entry"
    names = {p.name for p in SITE_PATTERNS}
    assert sorted(names - MATRIX.keys()) == [], "URL patterns without a MATRIX entry"
    assert sorted(MATRIX.keys() - names) == [], "MATRIX entries without a URL pattern"


@pytest.mark.django_db
@pytest.mark.parametrize("pattern", SITE_PATTERNS, ids=lambda p: p.route)
def test_every_role_gets_the_expected_answer_to_every_method(pattern: Pattern, seed: Seed) -> None:
    rule = MATRIX[str(pattern.name)]
    url = path_for(pattern, seed)
    wrong = []
    # Refused roles first: the roles let in come last, so their changes cannot hide a refusal.
    for method in METHODS:
        for role in ROLES:
            # A fresh body each time: an uploaded file is read to its end.
            body, is_json = seed.body(str(pattern.name)) if method != "GET" else ({}, False)
            expected = rule(role, method)
            got = outcome(request(client_for(seed.users[role]), method, url, body, is_json))
            if got != expected:
                wrong.append(f"{method} {url} as {role}: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_the_admin(role: str, seed: Seed) -> None:
    """The admin is Django's: staff get in, and see only what their model permissions allow
    (none here); everyone else is sent to the admin's login."""
    client = client_for(seed.users[role])
    pages = [
        reverse("admin:index"),
        reverse("admin:annotation_campaign_changelist"),
        reverse("admin:annotation_campaign_change", args=[seed.campaign.pk]),
        reverse("admin:auth_user_changelist"),
    ]
    for number, url in enumerate(pages):
        response = client.get(url)
        if role == "staff":
            assert response.status_code == (200 if number == 0 else 403), url
        else:
            assert response.status_code == 302, url
            assert response["Location"].startswith(reverse("admin:login")), url
        assert client.post(url, {}).status_code in ({200, 403} if role == "staff" else {302})


@pytest.fixture
def seed(seeded: Seed, db: None) -> Seed:
    return seeded
