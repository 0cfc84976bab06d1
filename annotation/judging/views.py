"""Annotator pages: my tasks, taking a task, the annotation screen, invite links."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.judging.documents import document_screen
from annotation.judging.entrances import (
    entrance_finished_page,
    entrance_invite_page,
    entrance_take,
)
from annotation.judging.gates import gate_page, gate_released_page
from annotation.judging.page import criteria_widgets, document_score_widget, screen_script_data
from annotation.judging.screens import JudgmentError, annotation_screen
from annotation.judging.services import closed_message
from annotation.models import Assignment, Campaign
from annotation.permissions import (
    assignments_of,
    campaigns_annotated_by,
    config_for_annotator,
    signed_in,
)
from annotation.protocols.guidance import protocol_guidance
from annotation.tasking.invites import InviteError, invite_accept, invite_from_token
from annotation.tasking.pull import (
    allocation_stopped,
    allocation_stopped_for,
    assignments_progress_most,
    progress_most,
    stopped_configs,
    stopped_message,
)
from annotation.tasking.services import assignments_expire, configs_for_annotator, task_assign_next


# The annotator's pages change with every answer: never from the browser's cache (Back would
# show an item answered since, or progress long passed, as if it were current).
@login_required
@never_cache
@require_safe
def my_tasks(request: HttpRequest) -> HttpResponse:
    """An annotator's home: their tasks with progress, and the protocols they can take tasks of."""
    # Holds that ran out go back to the pool first, so statuses and free counts are current.
    assignments_expire()
    assignments = list(
        assignments_of(request.user)
        .select_related("task__config__campaign")
        .order_by("status", "-claimed_at")
    )
    assignments_progress_most(assignments)
    finished = _finished_assignment(request, assignments)
    end = (
        None
        if finished is None
        else entrance_finished_page(annotator=signed_in(request), assignment=finished)
    )
    if end is not None:
        # A crowd worker's task ends on the page with their completion code.
        return redirect(end)
    context = {
        "assignments": assignments,
        # Unfinished tasks of campaigns closed since: the annotators who hold them are told.
        "cut_short": [
            a
            for a in assignments
            if a.task.config.campaign.status == Campaign.Status.CLOSED
            and a.status in (Assignment.Status.ACTIVE, Assignment.Status.EXPIRED)
        ],
        "finished": finished,
        "finished_stopped": finished is not None and allocation_stopped(finished.task.config),
        "open_configs": configs_for_annotator(annotator=signed_in(request)),
        "stopped_configs": stopped_configs(annotator=signed_in(request)),
        "campaigns": campaigns_annotated_by(request.user).order_by("name"),
    }
    return render(request, "annotation/my_tasks.html", context)


def _finished_assignment(request: HttpRequest, assignments: Any) -> Assignment | None:
    """The task named by ``?finished=`` (where the annotation page goes after the last answer),
    when it is the caller's and done: My tasks then confirms that it is finished. Any other
    value shows nothing."""
    try:
        assignment_id = uuid.UUID(request.GET.get("finished", ""))
    except ValueError:
        return None
    for assignment in assignments:
        if assignment.pk == assignment_id:
            return assignment if assignment.status == Assignment.Status.DONE else None
    return None


@login_required
@require_POST
def task_take(request: HttpRequest, config_id: int) -> HttpResponse:
    """Pull the next free task of a protocol (or continue the one in progress)."""
    config = config_for_annotator(request.user, config_id)
    if config.campaign.status == Campaign.Status.CLOSED:
        messages.info(request, closed_message())
        return redirect("my_tasks")
    take = entrance_take(annotator=signed_in(request), config=config)
    if take is not None:
        # A crowd worker's one task: back to it, or to its completion code once done.
        if take.assignment is None:
            messages.info(request, take.message)
            return redirect("my_tasks")
        return redirect(take.page)
    if allocation_stopped_for(config, annotator=signed_in(request)):
        # The stopping rule of a pull mode holds: no new task is handed out.
        messages.info(request, stopped_message(config))
        return redirect("my_tasks")
    assignment = task_assign_next(config=config, annotator=signed_in(request))
    if assignment is None:
        messages.info(
            request, _("There are no free tasks left in %(name)s.") % {"name": config.name}
        )
        return redirect("my_tasks")
    return redirect("annotate", assignment_id=assignment.pk)


@login_required
@never_cache
@require_safe
def annotate(
    request: HttpRequest, assignment_id: uuid.UUID, position: int | None = None
) -> HttpResponse:
    """The annotation screen: the current item, or an earlier one (numbered from 1) to revise."""
    try:
        screen = annotation_screen(
            assignment_id=assignment_id,
            annotator=signed_in(request),
            position=None if position is None else position - 1,
        )
    except JudgmentError as exc:
        if exc.status == 404:
            raise Http404(exc.message) from None
        released = (
            gate_released_page(assignment_id=assignment_id, annotator=signed_in(request))
            if exc.code == "not_active"
            else None
        )
        if released is not None:
            # Stopped by a gate, the tutorial (the task went back to the pool): its page says why.
            return redirect(released)
        messages.info(request, exc.message)
        return redirect("my_tasks")
    # The protocol's tutorial first (no query for a protocol without one).
    gated = gate_page(assignment=screen.assignment, annotator=signed_in(request))
    if gated is not None:
        return redirect(gated)
    # A document screen shows all its segments' items (the API serves them one by one).
    screen = document_screen(screen, annotator=signed_in(request))
    config = screen.assignment.task.config
    criteria = screen.protocol.criteria_for(len(screen.outputs))
    most = progress_most(config, screen.total)
    context = {
        "screen": screen,
        "criteria_view": criteria_widgets(criteria=criteria),
        "config": config,
        "campaign": config.campaign,
        "criteria": criteria,
        "data": screen_script_data(screen=screen, criteria=criteria, most=most),
        # In a pull mode while more items may follow: the most the task may grow to.
        "progress_most": most,
        "letters": "ABCDEFGHIJKLMNOPQRST",
        "percent": round(100 * screen.done / screen.total) if screen.total else 0,
        "guidance": protocol_guidance(protocol=screen.protocol, organizer=config.instructions),
        "document_criterion": document_score_widget(screen=screen),
    }
    return render(request, "annotation/annotate.html", context)


@require_http_methods(["GET", "POST"])
def invite(request: HttpRequest, token: str) -> HttpResponse:
    """An invite link: GET explains, POST makes (or logs in) the annotator account."""
    try:
        invitation = invite_from_token(token=token)
    except InviteError as exc:
        return render(request, "annotation/invite.html", {"error": str(exc)}, status=410)
    # A crowd link has a page of its own.
    page = entrance_invite_page(request, invitation)
    if page is not None:
        return page
    if request.method == "POST":
        # A logged-in user joins as themselves; only an anonymous visitor is logged in, and
        # only as the annotator account the link created (invite_accept checks it).
        current = request.user if request.user.is_authenticated else None
        try:
            user = invite_accept(invite=invitation, current_user=current)
        except InviteError as exc:
            return render(request, "annotation/invite.html", {"error": str(exc)}, status=403)
        if current is None:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request,
            _("Welcome! You are an annotator of %(name)s.") % {"name": invitation.campaign.name},
        )
        return redirect("my_tasks")
    return render(request, "annotation/invite.html", {"invite": invitation, "token": token})
