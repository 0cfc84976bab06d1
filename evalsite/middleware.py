"""Project middleware: the health check, and clear answers while the database is unreachable."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from evalsite.views import healthz, is_api_request

logger = logging.getLogger(__name__)

# What Django raises when PostgreSQL is down, restarting, refusing connections or dropped ours.
DATABASE_DOWN = (OperationalError, InterfaceError)
# Seconds a client is asked to wait before trying again; a PostgreSQL restart takes a few.
RETRY_AFTER = 5


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with a readable message: JSON under ``/api/``, a page otherwise.

    The page is rendered without the request: its context processors would look up the session
    and the user, in the database that is down.
    """
    detail = _(
        "The database is unreachable right now, so this request could not be completed. "
        "Please try again in a few seconds."
    )
    response: HttpResponse
    if is_api_request(request):
        response = JsonResponse({"code": "service_unavailable", "detail": detail}, status=503)
    else:
        html = render_to_string("503.html", {"detail": detail, "LANGUAGE_CODE": get_language()})
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    return response


class HealthCheckMiddleware:
    """Answer ``GET /healthz`` before anything reads the Host header.

    Container healthchecks and load balancers call the app by its internal address
    (``127.0.0.1:8000``), which is rarely in ``ALLOWED_HOSTS``; Django would answer 400 there. The
    check reveals nothing but liveness and database reachability: 200 when a query succeeds, 503
    with ``"database": "unreachable"`` when it does not (a web process without its database cannot
    serve a page, so a load balancer should send no one to it).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == "/healthz" and request.method == "GET":
            try:
                return healthz(request)
            except DATABASE_DOWN as exc:
                logger.warning("health check: database unreachable: %s", _one_line(exc))
                response = JsonResponse(
                    {"status": "unavailable", "database": "unreachable"}, status=503
                )
                response["Retry-After"] = str(RETRY_AFTER)
                return response
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """Turn a database connection failure in a view into 503 with a clear message, logged,
    instead of a bare 500. Django opens a connection per request (or checks a persistent one), so
    once PostgreSQL is back the next request succeeds without restarting anything."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_is_down(exception):
            return None
        logger.error(
            "database unavailable: %s %s answered 503: %s",
            request.method,
            request.path_info,
            _one_line(exception),
        )
        return database_unavailable(request)


def database_is_down(exc: BaseException) -> bool:
    """Whether ``exc`` means the database cannot be reached (not, say, a deadlock or a statement
    timeout, which are errors of one request): no SQLSTATE (the client could not connect or lost
    the connection), class 08 (connection exception) or 57P (the server is shutting down, starting
    up or crashed)."""
    if not isinstance(exc, DATABASE_DOWN):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
