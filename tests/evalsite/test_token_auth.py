"""API token authentication (evalsite/authentication.py): the token lookup is fixed SQL, and
answers as DRF's own TokenAuthentication does — the reference here — for a valid key, an
unknown or revoked one and an inactive user, in English and German, in one query."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation
from rest_framework import authentication as drf
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from evalsite.authentication import TokenAuthentication

pytestmark = pytest.mark.django_db


def outcome(auth: drf.TokenAuthentication, key: str) -> tuple[object, ...]:
    try:
        user, token = auth.authenticate_credentials(key)
    except AuthenticationFailed as exc:
        return ("refused", str(exc.detail), exc.status_code)
    return ("user", user.pk, user.username, user.is_staff, token.key, token.user_id, token.created)


def test_every_case_answers_as_drf_token_authentication(annotator, owner, other_organizer) -> None:  # type: ignore[no-untyped-def]
    valid = Token.objects.create(user=annotator)
    inactive = Token.objects.create(user=owner)
    owner.is_active = False
    owner.save()
    revoked = Token.objects.create(user=other_organizer)
    revoked_key = revoked.key
    revoked.delete()
    ours, reference = TokenAuthentication(), drf.TokenAuthentication()
    for language in ("en", "de"):
        with translation.override(language):
            for key in (valid.key, inactive.key, revoked_key, "no-such-key", ""):
                assert outcome(ours, key) == outcome(reference, key), (language, key)
    assert outcome(ours, valid.key)[:3] == ("user", annotator.pk, annotator.username)
    assert outcome(ours, inactive.key)[:2] == ("refused", "User inactive or deleted.")
    assert outcome(ours, revoked_key)[:2] == ("refused", "Invalid token.")
    with translation.override("de"):
        assert outcome(ours, "no-such-key")[1] != "Invalid token."  # DRF's German text


def test_the_lookup_is_one_query_and_the_token_user_is_loaded(
    annotator,  # type: ignore[no-untyped-def]
    django_assert_num_queries,
) -> None:
    key = Token.objects.create(user=annotator).key
    with django_assert_num_queries(1):
        user, token = TokenAuthentication().authenticate_credentials(key)
        assert token.user is user
        assert user.username == annotator.username


def test_the_api_accepts_a_valid_token_and_refuses_others_with_401(annotator) -> None:  # type: ignore[no-untyped-def]
    token = Token.objects.create(user=annotator)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get(reverse("api-my-tasks")).status_code == 200
    token.delete()
    # Revoked: refused at once (nothing is cached between requests).
    answer = client.get(reverse("api-my-tasks"))
    assert answer.status_code == 401
    assert answer.json() == {"detail": "Invalid token."}
    assert answer["WWW-Authenticate"] == "Token"
    annotator.is_active = False
    annotator.save()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    answer = client.get(reverse("api-my-tasks"))
    assert answer.status_code == 401
    assert answer.json() == {"detail": "User inactive or deleted."}
