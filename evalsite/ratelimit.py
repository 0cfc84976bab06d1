"""Login rate limiting: failed logins counted per username and per client address.

After ``EVALSITE_LOGIN_FAILURES_PER_USER`` failures for one username, or
``EVALSITE_LOGIN_FAILURES_PER_IP`` failures from one address, within
``EVALSITE_LOGIN_WINDOW_SECONDS`` of the first of them, the login form refuses further attempts
with HTTP 429, a message saying when to try again and a ``Retry-After`` header — without checking
the password, so guessing on stops. Each attempt is counted before its password is checked (an
atomic increment), so the limits hold when many attempts arrive at once. A successful login clears
its username's count and gives its attempt back to the address's count, which otherwise stays
(one valid account must not reset an address that is guessing other accounts).

The counts live in Django's cache (Redis in production and the tests, files in ``var/cache`` for
the embedded default), so every gunicorn worker and machine shares them. Both the site's login and
the admin's go through here. Invite links log in without a password and are not counted.

Behind a TLS proxy every request comes from the proxy's address. ``EVALSITE_PROXY_COUNT`` says how
many proxies of ours append to ``X-Forwarded-For``: the client is the entry that many places from
the right (entries further left are whatever the client sent, and can be forged). With 0 (the
default) ``X-Forwarded-For`` is ignored and the connection's address is used.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import ngettext
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

RATE_LIMITED = "rate_limited"
_PREFIX = "evalsite:login-failures"


def client_ip(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``EVALSITE_PROXY_COUNT`` proxies the
    ``X-Forwarded-For`` entry the outermost of them appended."""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    proxies: int = settings.EVALSITE_PROXY_COUNT
    if proxies == 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    # Fewer entries than proxies: the request did not come through them; trust only the socket.
    return forwarded[-proxies] if len(forwarded) >= proxies else remote


def _keys(request: HttpRequest, username: str) -> dict[str, tuple[str, int]]:
    """Cache key and limit of each counter of an attempt."""
    # Hashed: usernames are user input of any length and alphabet; cache keys are not.
    user = hashlib.sha256(username.strip().lower().encode()).hexdigest()
    return {
        "user": (f"{_PREFIX}:user:{user}", settings.EVALSITE_LOGIN_FAILURES_PER_USER),
        "ip": (f"{_PREFIX}:ip:{client_ip(request)}", settings.EVALSITE_LOGIN_FAILURES_PER_IP),
    }


def _guarded(default: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A cache outage must not lock everybody out of the site: log it and let the attempt go on
    (the password is still checked)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except (RedisError, OSError):
                logger.warning("login rate limiting skipped: the cache is unreachable")
                return default

        return wrapper

    return decorate


@_guarded(default=0)
def login_attempt_reserve(*, request: HttpRequest, username: str) -> int:
    """Count this attempt against the username and the client address before its password is
    checked; the seconds until an attempt may be made when a count is over its limit (the
    attempt is then refused unchecked), else 0.

    Counting first, with the cache's atomic increment, is what holds the limits under
    concurrency: 40 attempts at once each get their own count, and only the first ``limit``
    reach the password check (checking the count and counting after the check let every one of
    them through). A correct password gives its attempt back (:func:`login_success_record`)."""
    window: int = settings.EVALSITE_LOGIN_WINDOW_SECONDS
    now = time.time()
    wait = 0
    for key, limit in _keys(request, username).values():
        # The window starts with the first attempt and is not extended by later ones.
        cache.add(f"{key}:until", now + window, timeout=window)
        cache.add(key, 0, timeout=window)
        try:
            count = cache.incr(key)  # atomic in Redis
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)
            count = 1
        until = cache.get(f"{key}:until") or now + window
        # The file cache's incr rewrites the entry with the default expiry: restore the window's.
        cache.touch(key, timeout=max(1, math.ceil(until - now)))
        if count > limit:
            wait = max(wait, math.ceil(until - now), 1)
    return wait


@_guarded(default=None)
def login_success_record(*, request: HttpRequest, username: str) -> None:
    """A correct password clears the username's count and gives its attempt back to the
    address's count (which counts failures only: one valid account must not reset an address
    that is guessing others)."""
    keys = _keys(request, username)
    user_key, _limit = keys["user"]
    cache.delete_many([user_key, f"{user_key}:until"])
    ip_key, _limit = keys["ip"]
    try:
        if cache.decr(ip_key) < 0:
            cache.set(ip_key, 0, timeout=settings.EVALSITE_LOGIN_WINDOW_SECONDS)
    except ValueError:  # the window ended meanwhile
        pass


def _wait_message(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return ngettext(
        "Too many failed login attempts. Please try again in %(n)d minute.",
        "Too many failed login attempts. Please try again in %(n)d minutes.",
        minutes,
    ) % {"n": minutes}


class RateLimitedAuthenticationForm(AuthenticationForm):
    """The login form, refusing attempts over the limits before checking the password."""

    retry_after = 0

    def clean(self) -> dict[str, Any]:
        username = str(self.data.get("username", ""))
        request = self.request
        if request is None or not username or not self.data.get("password"):
            return super().clean()
        self.retry_after = login_attempt_reserve(request=request, username=username)
        if self.retry_after:
            raise forms.ValidationError(_wait_message(self.retry_after), code=RATE_LIMITED)
        # A wrong password keeps the count the attempt took; a correct one gives it back.
        cleaned = super().clean()
        login_success_record(request=request, username=username)
        return cleaned


class RateLimitedAdminAuthenticationForm(RateLimitedAuthenticationForm, AdminAuthenticationForm):
    """The admin's login form (staff only), with the same limits."""


def _limited_form(response: HttpResponseBase) -> RateLimitedAuthenticationForm | None:
    context = getattr(response, "context_data", None) or {}
    form = context.get("form")
    if isinstance(form, RateLimitedAuthenticationForm) and form.retry_after:
        return form
    return None


def too_many_requests(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Answer 429 with ``Retry-After`` when the view's login form refused an attempt over the
    limits (the page itself shows the form with the message)."""

    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        form = _limited_form(response)
        if form is not None:
            response.status_code = 429
            response["Retry-After"] = str(form.retry_after)
        return response

    return wrapper


class LoginView(auth_views.LoginView):
    """Django's login view with the rate-limited form."""

    authentication_form = RateLimitedAuthenticationForm
    # FormView would take PUT as a login attempt too.
    http_method_names = ["get", "post", "head", "options"]


login = too_many_requests(LoginView.as_view())
