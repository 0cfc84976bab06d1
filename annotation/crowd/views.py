"""Crowd pages: a worker arriving through a crowd link, their completion page, and the
organizer's page of crowd links, workers and codes."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.analysis.qc_power import campaign_qc_power
from annotation.crowd.forms import (
    CrowdLinkForm,
    CrowdLinkProtocolForm,
    CrowdRosterForm,
    VerifyForm,
    WorkerIdForm,
)
from annotation.crowd.selectors import crowd_links, crowd_verify, crowd_workers
from annotation.crowd.services import (
    crowd_completion_record,
    crowd_link_create,
    crowd_link_protocol_set,
    crowd_return_url,
    crowd_roster_offer_set,
    crowd_task_start,
    crowd_worker_enter,
)
from annotation.judging.services import closed_message
from annotation.models import Assignment, Campaign, CrowdLink, CrowdWorker, Invite, ProtocolConfig
from annotation.permissions import (
    assignment_for_annotator,
    campaign_for_organizer,
    organizer_required,
    signed_in,
)
from annotation.tasking.invites import InviteError, invite_check

# The organizer's page lists this many workers at most (the API and the verify box find any).
WORKERS_SHOWN = 500

_PAGE = "annotation/crowd_invite.html"


def crowd_invite(request: HttpRequest, invitation: Invite) -> HttpResponse:
    """A crowd link: GET checks the worker id in the URL and explains; POST makes (or logs in)
    the worker's account and starts their task. Without a valid id it refuses."""
    link = invitation.crowd
    source = (
        request.POST
        if request.method == "POST"
        else {"worker_id": request.GET.get(link.id_parameter, "")}
    )
    form = WorkerIdForm(source)
    context = {"invite": invitation, "link": link, "form": form}
    if not form.is_valid():
        context["error"] = form.errors["worker_id"][0]
        return render(request, _PAGE, context, status=400)
    if invitation.campaign.status == Campaign.Status.CLOSED:
        context["error"] = closed_message()
        return render(request, _PAGE, context, status=403)
    if request.method != "POST":
        return render(request, _PAGE, context)
    try:
        worker = crowd_worker_enter(invite=invitation, worker_id=form.cleaned_data["worker_id"])
    except InviteError as exc:
        context["error"] = str(exc)
        return render(request, _PAGE, context, status=403)
    # The worker's account, whoever was logged in in this browser before: a crowd link is
    # how this worker logs in.
    login(request, worker.user, backend="django.contrib.auth.backends.ModelBackend")
    assignment = crowd_task_start(worker=worker)
    if assignment is None:
        context["error"] = _(
            "There is no task left for you in this study. Please return it on the platform."
        )
        return render(request, _PAGE, context, status=409)
    if assignment.status == Assignment.Status.DONE:
        return redirect("crowd_completion", assignment_id=assignment.pk)
    return redirect("annotate", assignment_id=assignment.pk)


@require_http_methods(["GET", "POST"])
def crowd_study(request: HttpRequest, study_token: str) -> HttpResponse:
    """A crowd link's study URL (the one the platform keeps): as its invite link, by the
    token stored with the link."""
    link = (
        CrowdLink.objects.select_related("invite__campaign", "config")
        .filter(study_token=study_token)
        .first()
    )
    if link is None:
        context = {"error": _("This invite link is not valid.")}
        return render(request, "annotation/invite.html", context, status=404)
    try:
        invite_check(invite=link.invite)
    except InviteError as exc:
        return render(request, "annotation/invite.html", {"error": str(exc)}, status=410)
    return crowd_invite(request, link.invite)


@login_required
@never_cache
@require_safe
def crowd_completion(request: HttpRequest, assignment_id: uuid.UUID) -> HttpResponse:
    """The end of a crowd worker's task: their completion code and the way back to the
    platform. An unfinished task goes back to its page; an annotator who did not come through
    a crowd link goes to My tasks."""
    assignment = assignment_for_annotator(request.user, assignment_id)
    if assignment.status != Assignment.Status.DONE:
        return redirect("annotate", assignment_id=assignment.pk)
    worker = (
        CrowdWorker.objects.filter(
            user=signed_in(request), campaign=assignment.task.config.campaign
        )
        .select_related("link")
        .first()
    )
    if worker is None:
        return redirect(f"{reverse('my_tasks')}?finished={assignment.pk}")
    worker = crowd_completion_record(worker=worker, assignment=assignment)
    context = {
        "campaign": assignment.task.config.campaign,
        "worker": worker,
        "return_url": crowd_return_url(worker=worker),
    }
    return render(request, "annotation/crowd_completion.html", context)


@organizer_required
@require_http_methods(["GET", "POST"])
def crowd_setup(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Crowd links of a campaign (create one; the URL to give the platform), its workers with
    their codes, and a box to verify the code a worker sent in."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = CrowdLinkForm(request.POST or None, campaign=campaign)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        crowd_link_create(
            campaign=campaign,
            created_by=signed_in(request),
            config=data["config"],
            platform=data["platform"],
            id_parameter=data["id_parameter"],
            rule=data["rule"],
            pass_code=data["pass_code"],
            fail_code=data["fail_code"],
            return_url=data["return_url"],
            label=data["label"],
            days=data["days"],
        )
        messages.success(request, _("Crowd link created. Give its study URL to the platform."))
        qc = campaign_qc_power(campaign=campaign, config=data["config"])
        for warning in qc.warnings if qc else []:
            messages.warning(request, warning)
        return redirect(f"{reverse('crowd_setup', args=[campaign.pk])}#links")
    verify = VerifyForm(request.GET if "worker" in request.GET else None)
    verified = (
        crowd_verify(
            campaign=campaign,
            worker_id=verify.cleaned_data["worker"],
            code=verify.cleaned_data["code"],
        )
        if verify.is_valid()
        else None
    )
    workers = list(crowd_workers(campaign=campaign)[: WORKERS_SHOWN + 1])
    context = {
        "campaign": campaign,
        "form": form,
        "links": crowd_links(request=request, campaign=campaign),
        "workers": workers[:WORKERS_SHOWN],
        "workers_more": len(workers) > WORKERS_SHOWN,
        "verify_form": verify if verify.is_bound else VerifyForm(),
        "verified": verified,
        # The protocols a link may be switched to.
        "configs": list(ProtocolConfig.objects.filter(campaign=campaign).order_by("created")),
        "roster_form": CrowdRosterForm(initial={"offer": campaign.crowd_tasks_to_roster}),
    }
    return render(request, "annotation/crowd.html", context, status=400 if form.errors else 200)


@organizer_required
@require_POST
def crowd_link_protocol(request: HttpRequest, campaign_id: uuid.UUID, link_id: int) -> HttpResponse:
    """Let a crowd link serve another protocol of the campaign; its study URL stays."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    link = get_object_or_404(
        CrowdLink.objects.select_related("invite"), invite_id=link_id, invite__campaign=campaign
    )
    form = CrowdLinkProtocolForm(request.POST, campaign=campaign)
    if not form.is_valid():
        messages.error(request, _("Choose a protocol of this campaign."))
    elif form.cleaned_data["config"].pk != link.config_id:
        crowd_link_protocol_set(link=link, config=form.cleaned_data["config"])
        messages.success(
            request,
            _("The link now serves %(name)s; its study URL has not changed.")
            % {"name": form.cleaned_data["config"].name},
        )
    return redirect(f"{reverse('crowd_setup', args=[campaign.pk])}#links")


@organizer_required
@require_POST
def crowd_roster_offer(request: HttpRequest, campaign_id: uuid.UUID) -> HttpResponse:
    """Whether the campaign's own annotators are offered tasks of its crowd protocols."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    form = CrowdRosterForm(request.POST)
    offer = bool(form.is_valid() and form.cleaned_data["offer"])
    crowd_roster_offer_set(campaign=campaign, offer=offer)
    messages.success(
        request,
        _("The campaign's own annotators are offered tasks of its crowd protocols too.")
        if offer
        else _("Tasks of the crowd protocols are for crowd workers only."),
    )
    return redirect(f"{reverse('crowd_setup', args=[campaign.pk])}#roster-offer")
