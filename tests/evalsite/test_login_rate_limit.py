"""Login rate limiting, through the real login pages and the real cache (Redis in the suite):
failures per username and per client address, 429 until the window has passed, a successful
login clearing its username, the proxy header trusted only as configured, the admin's login
limited alike, invite links unaffected, and a cache outage not locking anyone out."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory
from django.urls import reverse
from redis.exceptions import RedisError

from annotation.tasking.invites import invite_create, invite_token
from evalsite import ratelimit
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

WINDOW = 2  # seconds; the tests wait for it to pass


@pytest.fixture(autouse=True)
def limits(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    settings.EVALSITE_LOGIN_FAILURES_PER_USER = 3
    settings.EVALSITE_LOGIN_FAILURES_PER_IP = 5
    settings.EVALSITE_LOGIN_WINDOW_SECONDS = WINDOW
    settings.EVALSITE_PROXY_COUNT = 0
    counters_clear()
    yield
    counters_clear()


# Documentation addresses (RFC 5737): no other test logs in from them.
ADDRESSES = ["192.0.2.10", "192.0.2.11", "198.51.100.7", "203.0.113.5"]
USERNAMES = ["limited", "other1", "other2", "other3", "other4", "other5", "staffer", "nobody"]


def counters_clear() -> None:
    """The counters live in the shared cache: start clean and leave none behind."""
    with contextlib.suppress(RedisError):  # the outage test's cache is unreachable
        for address in ADDRESSES:
            for username in USERNAMES:
                request = RequestFactory().get("/", REMOTE_ADDR=address)
                for key, _limit in ratelimit._keys(request, username).values():
                    cache.delete_many([key, f"{key}:until"])


def attempt(username: str, password: str, address: str = ADDRESSES[0], **extra: str) -> object:
    client = Client(REMOTE_ADDR=address, **extra)
    response = client.post(reverse("login"), {"username": username, "password": password})
    response.client_session = client.session  # type: ignore[attr-defined]
    return response


def test_failed_logins_for_one_username_are_refused_with_429_until_the_window_passes() -> None:
    make_user("limited")
    for _ in range(3):
        response = attempt("limited", "wrong")
        assert response.status_code == 200
        assert "password didn" in response.content.decode()
    # Over the limit even the right password is not checked: guessing on gets nothing.
    refused = attempt("limited", PASSWORD)
    assert refused.status_code == 429
    assert (
        "Too many failed login attempts. Please try again in 1 minute." in refused.content.decode()
    )
    assert 1 <= int(refused["Retry-After"]) <= WINDOW
    assert "_auth_user_id" not in refused.client_session
    # From another address too: the username's own count is over its limit.
    assert attempt("limited", PASSWORD, ADDRESSES[1]).status_code == 429

    time.sleep(WINDOW + 0.5)
    accepted = attempt("limited", PASSWORD)
    assert accepted.status_code == 302
    assert accepted["Location"] == reverse("home")
    assert "_auth_user_id" in accepted.client_session


def test_a_successful_login_clears_the_usernames_count() -> None:
    make_user("limited")
    for _ in range(2):
        assert attempt("limited", "wrong").status_code == 200
    assert attempt("limited", PASSWORD).status_code == 302
    for _ in range(2):
        assert attempt("limited", "wrong").status_code == 200
    # Four failures in all, but only two since the success: still allowed.
    assert attempt("limited", PASSWORD).status_code == 302


def test_failures_from_one_address_refuse_every_username_from_it_and_no_other_address() -> None:
    make_user("other5")
    for n in range(1, 6):
        assert attempt(f"other{n}", "wrong").status_code == 200
    refused = attempt("other5", PASSWORD)
    assert refused.status_code == 429
    assert "_auth_user_id" not in refused.client_session
    assert attempt("other5", PASSWORD, ADDRESSES[1]).status_code == 302


def test_the_forwarded_address_counts_only_behind_the_configured_proxies(settings) -> None:  # type: ignore[no-untyped-def]
    make_user("other5")
    settings.EVALSITE_PROXY_COUNT = 1
    proxy = ADDRESSES[3]  # every request reaches gunicorn from the TLS proxy
    for n in range(1, 6):
        # The client forges a first entry; the proxy appends the address it saw.
        forwarded = f"10.9.9.{n}, {ADDRESSES[0]}"
        response = attempt(f"other{n}", "wrong", proxy, HTTP_X_FORWARDED_FOR=forwarded)
        assert response.status_code == 200
    forged = f"10.9.9.99, {ADDRESSES[0]}"
    assert attempt("other5", PASSWORD, proxy, HTTP_X_FORWARDED_FOR=forged).status_code == 429
    # Another client behind the same proxy is not refused.
    other = f"{ADDRESSES[1]}"
    assert attempt("other5", PASSWORD, proxy, HTTP_X_FORWARDED_FOR=other).status_code == 302

    request = RequestFactory().get("/", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="1.2.3.4")
    settings.EVALSITE_PROXY_COUNT = 0
    assert ratelimit.client_ip(request) == proxy  # no proxy configured: the header is ignored
    settings.EVALSITE_PROXY_COUNT = 2
    assert ratelimit.client_ip(request) == proxy  # too few entries: not from our proxies


def test_the_admin_login_is_limited_too() -> None:
    make_user("staffer", is_staff=True)
    url = reverse("admin:login")
    client = Client(REMOTE_ADDR=ADDRESSES[2])
    for _ in range(3):
        assert client.post(url, {"username": "staffer", "password": "wrong"}).status_code == 200
    refused = client.post(url, {"username": "staffer", "password": PASSWORD})
    assert refused.status_code == 429
    assert "Too many failed login attempts" in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_invite_link_works_from_an_address_that_is_refused_password_logins(
    campaign, owner
) -> None:  # type: ignore[no-untyped-def]
    for n in range(1, 6):
        attempt(f"other{n}", "wrong")
    assert attempt("nobody", "wrong").status_code == 429
    invite = invite_create(campaign=campaign, label="Crowd", created_by=owner)
    client = Client(REMOTE_ADDR=ADDRESSES[0])
    response = client.post(reverse("invite", args=[invite_token(invite=invite)]))
    assert response.status_code == 302
    assert response["Location"] == reverse("my_tasks")
    assert client.get(reverse("my_tasks")).status_code == 200


def test_an_unreachable_cache_does_not_lock_anyone_out(settings) -> None:  # type: ignore[no-untyped-def]
    """Nothing listens on port 1: the limiter logs and lets the password decide."""
    make_user("limited")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    for _ in range(4):
        assert attempt("limited", "wrong").status_code == 200
    assert attempt("limited", PASSWORD).status_code == 302


def test_the_refusal_speaks_german_to_a_german_browser() -> None:
    for _ in range(3):
        attempt("limited", "wrong", HTTP_ACCEPT_LANGUAGE="de")
    refused = attempt("limited", "wrong", HTTP_ACCEPT_LANGUAGE="de")
    assert refused.status_code == 429
    assert "Zu viele fehlgeschlagene Anmeldeversuche" in refused.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_username_limit_holds_under_concurrent_attempts(settings) -> None:  # type: ignore[no-untyped-def]
    """40 wrong passwords for one username at once, each from its own thread: exactly the
    limit's number of them are checked against the password, the rest refused with 429."""
    import threading

    from django.db import connection

    settings.EVALSITE_LOGIN_FAILURES_PER_USER = 5
    settings.EVALSITE_LOGIN_FAILURES_PER_IP = 1000
    settings.EVALSITE_LOGIN_WINDOW_SECONDS = 60
    make_user("limited")
    start = threading.Barrier(40)
    statuses: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        try:
            client = Client(REMOTE_ADDR=ADDRESSES[1])
            start.wait()
            response = client.post(reverse("login"), {"username": "limited", "password": "wrong"})
            with lock:
                statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(statuses) == 40
    # 200: the form's "wrong password" after a password check; 429: refused unchecked.
    assert statuses.count(200) == 5
    assert statuses.count(429) == 35
