"""Project-level pages: the landing redirect and a health check."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_safe

from annotation.permissions import user_is_organizer


@login_required
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """Organizers land on their campaigns, annotators on their tasks."""
    if user_is_organizer(request.user):
        return redirect("campaign_list")
    return redirect("my_tasks")


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers and compose healthchecks."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return JsonResponse({"status": "ok"})
