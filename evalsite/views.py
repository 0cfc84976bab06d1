"""Project-level pages: a health check, the favicon, and the error answers of addresses no view
handles (JSON under ``/api/``, a page elsewhere)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
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


def _bad_request_message(exception: Exception | None) -> str:
    """Why Django refused a request before any view ran, in words (its limits from
    ``settings``): too many files, too many form fields, or a body over the size limit."""
    if isinstance(exception, TooManyFilesSent):
        return _(
            "The request sends more than %(n)d files at once. Send fewer files per request."
        ) % {"n": settings.DATA_UPLOAD_MAX_NUMBER_FILES}
    if isinstance(exception, TooManyFieldsSent):
        return _(
            "The request sends more than %(n)d form fields at once. Send fewer per request."
        ) % {"n": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}
    if isinstance(exception, RequestDataTooBig):
        return _(
            "The request is too large: its body or its form fields (files aside, which are "
            "limited on their own) may hold at most %(size)s."
        ) % {"size": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)}
    return _("The request could not be understood.")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """400 for a request Django refused before any view ran (``handler400``): over its limits
    on files, form fields or body size, or malformed. JSON with a readable ``detail`` under
    ``/api/``, a page saying what was wrong elsewhere."""
    message = _bad_request_message(exception)
    if is_api_request(request):
        return JsonResponse({"detail": message}, status=400)
    return render(request, "400.html", {"message": message}, status=400)


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
