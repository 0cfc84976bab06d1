"""Project-level pages: a health check, the favicon, and the error answers of addresses no view
handles (JSON under ``/api/``, a page elsewhere)."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.utils.translation import gettext as _
from django.views import defaults
from django.views.decorators.http import require_safe


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers and compose healthchecks."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return JsonResponse({"status": "ok"})


@require_safe
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """``/favicon.ico``, which browsers and feed readers ask for whatever the page says: the
    static file (pages name it in ``<link rel="icon">`` themselves)."""
    return HttpResponseRedirect(static("favicon.ico"))


def is_api_request(request: HttpRequest) -> bool:
    """Whether the request is for the REST API, whose every answer, errors included, is JSON."""
    return request.path_info.startswith("/api/")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404 for an address no view handles (``handler404``): an API client gets JSON, as from
    the API's own views, rather than the site's page."""
    if is_api_request(request):
        return JsonResponse({"detail": _("Not found.")}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """500 (``handler500``): JSON under ``/api/``, the site's page elsewhere."""
    if is_api_request(request):
        return JsonResponse({"detail": _("A server error occurred.")}, status=500)
    return defaults.server_error(request)
