"""Project middleware."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from evalsite.views import healthz


class HealthCheckMiddleware:
    """Answer ``GET /healthz`` before anything reads the Host header.

    Container healthchecks and load balancers call the app by its internal address
    (``127.0.0.1:8000``), which is rarely in ``ALLOWED_HOSTS``; Django would answer 400 there. The
    check reveals nothing but liveness and database reachability.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == "/healthz" and request.method == "GET":
            return healthz(request)
        return self.get_response(request)
