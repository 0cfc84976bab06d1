"""Organizer pages for annotation: protocols and their tasks, push assignment, invite links."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.db.models import Count, Q, Sum
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.campaigns.forms import (
    InviteForm,
    ProtocolConfigForm,
    PushAssignForm,
    RosterAddForm,
)
from annotation.models import Assignment, Campaign, Invite, Judgment, ProtocolConfig, Task
from annotation.permissions import (
    campaign_for_organizer,
    config_for_organizer,
    organizer_required,
    signed_in,
)
from annotation.tasking.background import task_build_request
from annotation.tasking.configs import protocol_config_add
from annotation.tasking.invites import invite_create, invite_token
from annotation.tasking.pull_state import allocation_summaries
from annotation.tasking.roster import (
    campaign_annotator_remove,
    campaign_annotators_add,
    campaign_roster,
    usernames_parse,
)
from annotation.tasking.selectors import task_builds_latest
from annotation.tasking.services import task_assign
from annotation.tasking.source import TaskError

# The setup page lists the newest invite links, this many at most (it says so when there are more).
INVITES_SHOWN = 200


def _setup_url(campaign: Campaign) -> str:
    return reverse("annotation_setup", args=[campaign.pk])


@organizer_required
@require_http_methods(["GET", "POST"])
def annotation_setup(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Protocols with their task counts and progress; add a protocol; the roster of
    annotators; invite links."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = ProtocolConfigForm(request.POST or None, instance=ProtocolConfig(campaign=campaign))
    if request.method == "POST" and form.is_valid():
        config = protocol_config_add(form=form, campaign=campaign)
        if config is not None:
            messages.success(request, _("Protocol added. Build its tasks next."))
            return redirect(f"{_setup_url(campaign)}#config-{config.pk}")
    rows, builds = _config_rows(campaign)
    invites, invites_total = _invite_rows(request, campaign)
    context = {
        "campaign": campaign,
        "form": form,
        "rows": rows,
        "invite_form": InviteForm(),
        "assign_form": PushAssignForm(),
        "invites": invites,
        "invites_total": invites_total,
        "builds_active": any(b["active"] for b in builds.values()),
        "roster": campaign_roster(campaign=campaign),
        "roster_form": RosterAddForm(),
    }
    return render(request, "annotation/setup.html", context, status=400 if form.errors else 200)


def _config_rows(
    campaign: Campaign,
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """Every protocol of the campaign with its task counts, assignments, judgments and newest
    build, oldest protocol first; and the newest builds by config id."""
    configs = (
        ProtocolConfig.objects.filter(campaign=campaign)
        # One join (the tasks), so plain aggregates count each task once; a distinct sum
        # would add equal task sizes once (five tasks of 100 items showed 100 items).
        .annotate(n_tasks=Count("tasks"), n_items=Sum("tasks__size"))
        .order_by("created")
    )
    progress: dict[int, Mapping[str, Any]] = {
        row["task__config"]: row
        for row in Assignment.objects.filter(task__config__campaign=campaign)
        .values("task__config")
        .annotate(
            active=Count("pk", filter=Q(status=Assignment.Status.ACTIVE)),
            done=Count("pk", filter=Q(status=Assignment.Status.DONE)),
            # Any assignment at all, expired or given back too: tasks_build refuses then.
            assigned=Count("pk"),
        )
    }
    judgments = dict(
        Judgment.objects.filter(item__task__config__campaign=campaign)
        .values("item__task__config")
        .annotate(n=Count("pk"))
        .values_list("item__task__config", "n")
    )
    builds = task_builds_latest(campaign=campaign)
    allocations = allocation_summaries(campaign=campaign)
    rows = [
        {
            "config": c,
            "build": builds.get(c.pk),
            "allocation": allocations.get(c.pk),
            "active": progress.get(c.pk, {}).get("active", 0),
            "done": progress.get(c.pk, {}).get("done", 0),
            "assigned": progress.get(c.pk, {}).get("assigned", 0),
            "judgments": judgments.get(c.pk, 0),
            "needed": c.n_tasks * c.annotations_per_task,
            # Outputs a screen shows: a one-output kind (direct assessment) shows one whatever
            # the config's k says.
            # A document screen shows one system's translation.
            "k": 1 if c.shows_documents else c.definition.outputs_per_screen(c.outputs_per_screen),
        }
        for c in configs
    ]
    return rows, builds


def _invite_rows(request: HttpRequest, campaign: Campaign) -> tuple[list[dict[str, Any]], int]:
    """The campaign's newest invite links (INVITES_SHOWN at most) with their URLs, and how many
    it has in all."""
    invites = [
        {
            "invite": inv,
            "url": request.build_absolute_uri(reverse("invite", args=[invite_token(invite=inv)])),
            "expired": inv.expires_at < timezone.now(),
            # A crowd link's URL needs the worker id parameter: the crowd page shows it.
            "crowd": hasattr(inv, "crowd"),
        }
        for inv in Invite.objects.filter(campaign=campaign).select_related("user", "crowd")[
            :INVITES_SHOWN
        ]
    ]
    invites_total = (
        len(invites)
        if len(invites) < INVITES_SHOWN
        else Invite.objects.filter(campaign=campaign).count()
    )
    return invites, invites_total


@organizer_required
@require_POST
def config_build(request: HttpRequest, campaign_id: uuid.UUID, config_id: int) -> HttpResponse:
    """Queue a build of the protocol's tasks (a worker runs it; the setup page shows how it
    gets on), or say that one is already under way."""
    config = config_for_organizer(request.user, campaign_id, config_id)
    try:
        outcome = task_build_request(config=config, user=signed_in(request))
    except TaskError as exc:
        messages.error(request, str(exc))
    else:
        if not outcome.queued:
            messages.error(request, outcome.build.error)
        elif outcome.joined:
            messages.info(
                request,
                _("A build of these tasks is already %(status)s; no second one was started.")
                % {"status": outcome.build.get_status_display().lower()},
            )
        else:
            messages.success(request, _("Build queued. Its progress is shown below."))
    return redirect(f"{_setup_url(config.campaign)}#config-{config.pk}")


@organizer_required
@require_safe
def config_builds_status(request: HttpRequest, campaign_id: uuid.UUID) -> JsonResponse:
    """The newest build of every protocol, for the setup page's polls."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    builds = task_builds_latest(campaign=campaign)
    return JsonResponse(
        {
            "builds": list(builds.values()),
            "active": any(b["active"] for b in builds.values()),
        }
    )


@organizer_required
@require_safe
def config_tasks(request: HttpRequest, campaign_id: uuid.UUID, config_id: int) -> HttpResponse:
    """The tasks of a protocol with their annotators and progress."""
    config = config_for_organizer(request.user, campaign_id, config_id)
    tasks = (
        Task.objects.filter(config=config)
        .prefetch_related("assignments__annotator")
        .order_by("position")
    )
    return render(
        request,
        "annotation/config_tasks.html",
        {
            "config": config,
            "campaign": config.campaign,
            "tasks": tasks,
            "assign_form": PushAssignForm(),
        },
    )


@organizer_required
@require_POST
def config_assign(request: HttpRequest, campaign_id: uuid.UUID, config_id: int) -> HttpResponse:
    """Push: give a task to a named annotator."""
    config = config_for_organizer(request.user, campaign_id, config_id)
    form = PushAssignForm(request.POST)
    if form.is_valid():
        task = Task.objects.filter(config=config, position=form.cleaned_data["task"] - 1).first()
        if task is None:
            messages.error(
                request, _("This protocol has no task %(n)d.") % {"n": form.cleaned_data["task"]}
            )
        else:
            try:
                task_assign(task=task, annotator=form.cleaned_data["username"])
            except TaskError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(
                    request,
                    _("Task %(n)d assigned to %(user)s.")
                    % {"n": task.position + 1, "user": form.cleaned_data["username"]},
                )
    else:
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
    return redirect("config_tasks", campaign_id=config.campaign.pk, config_id=config.pk)


@organizer_required
@require_POST
def invites_create(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = InviteForm(request.POST)
    if form.is_valid():
        for n in range(form.cleaned_data["count"]):
            label = form.cleaned_data["label"]
            if form.cleaned_data["count"] > 1:
                label = f"{label or _('annotator')} {n + 1}"
            invite_create(
                campaign=campaign,
                label=label,
                created_by=signed_in(request),
                days=form.cleaned_data["days"],
            )
        messages.success(request, _("Invite links created."))
    else:
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
    return redirect(f"{_setup_url(campaign)}#invites")


@organizer_required
@require_POST
def invite_revoke(request: HttpRequest, campaign_id: uuid.UUID, invite_id: int) -> HttpResponse:
    campaign = campaign_for_organizer(request.user, campaign_id)
    if not Invite.objects.filter(pk=invite_id, campaign=campaign).update(revoked=True):
        raise Http404("No such invite link.")
    messages.success(request, _("Invite link withdrawn."))
    return redirect(f"{_setup_url(campaign)}#invites")


@organizer_required
@require_POST
def roster_add(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Make the existing users of a pasted list of usernames annotators of the campaign."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = RosterAddForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect(f"{_setup_url(campaign)}#roster")
    change = campaign_annotators_add(
        campaign=campaign, usernames=usernames_parse(form.cleaned_data["usernames"])
    )
    if change.added:
        messages.success(
            request,
            _("Added as annotators: %(names)s. They see the campaign on My tasks.")
            % {"names": ", ".join(change.added)},
        )
    if change.already:
        messages.info(
            request,
            _("Annotators already: %(names)s.") % {"names": ", ".join(change.already)},
        )
    if change.unknown:
        messages.error(
            request,
            _("No user is called %(names)s. People without an account join through an invite link.")
            % {"names": ", ".join(change.unknown)},
        )
    return redirect(f"{_setup_url(campaign)}#roster")


@organizer_required
@require_http_methods(["GET", "POST"])
def roster_remove(request: HttpRequest, campaign_id: uuid.UUID, user_id: int) -> HttpResponse:
    """Take an annotator off the roster; the tasks they hold go back to the pool. GET asks
    first: a page that says what removing them does, with the button that does it."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    annotator = get_object_or_404(campaign.annotators, pk=user_id)
    if request.method != "POST":
        [entry] = campaign_roster(campaign=campaign, user_id=annotator.pk)
        context = {"campaign": campaign, "entry": entry}
        return render(request, "annotation/roster_remove.html", context)
    released = campaign_annotator_remove(campaign=campaign, annotator=annotator)
    message = _("%(name)s can no longer take tasks in this campaign.") % {
        "name": annotator.get_username()
    }
    if released:
        message += " " + ngettext(
            "The task they held went back to the pool; their answers are kept.",
            "The %(n)d tasks they held went back to the pool; their answers are kept.",
            released,
        ) % {"n": released}
    messages.success(request, message)
    return redirect(f"{_setup_url(campaign)}#roster")
