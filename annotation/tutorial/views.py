"""Tutorial pages: the organizer's (items, file upload, rule, who passed) and the annotator's
tutorial screen, which shows the protocol's own screen parts and its feedback after each
answer."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation.crowd.services import crowd_return_url, crowd_stopped_record
from annotation.judging.page import criteria_widgets, screen_script_data
from annotation.judging.screens import JudgmentError, assignment_for
from annotation.models import CrowdWorker, ProtocolConfig, TutorialItem
from annotation.permissions import (
    campaign_for_organizer,
    config_for_organizer,
    organizer_required,
    signed_in,
)
from annotation.protocols import Protocol
from annotation.protocols.guidance import protocol_guidance
from annotation.tutorial.expectations import expectation_lines
from annotation.tutorial.files import tutorial_file_parse
from annotation.tutorial.forms import TutorialItemForm, TutorialRuleForm, TutorialUploadForm
from annotation.tutorial.items import (
    TutorialItemError,
    tutorial_item_remove,
    tutorial_items_add,
    tutorial_rule_save,
)
from annotation.tutorial.runs import TutorialError, TutorialScreen, tutorial_items, tutorial_screen
from annotation.tutorial.selectors import tutorial_rule, tutorial_runs


@organizer_required
@require_http_methods(["GET", "POST"])
def config_tutorial(request: HttpRequest, campaign_id: uuid.UUID, config_id: int) -> HttpResponse:
    """A protocol's tutorial: its items (add one, upload a file of them), its rule, and every
    annotator's run through it."""
    config = config_for_organizer(request.user, campaign_id, config_id)
    action = request.POST.get("action")
    rule = tutorial_rule(config=config)
    item_form = TutorialItemForm(request.POST if action == "add" else None, config=config)
    upload_form = TutorialUploadForm(
        request.POST if action == "upload" else None, request.FILES if action == "upload" else None
    )
    rule_form = TutorialRuleForm(request.POST if action == "rule" else None, instance=rule)
    problems: list[str] = []
    here = reverse("config_tutorial", args=[config.campaign_id, config.pk])
    if action == "add" and item_form.is_valid():
        tutorial_items_add(config=config, items=[item_form.cleaned_data["item"]])
        messages.success(request, _("Tutorial item added."))
        return redirect(here)
    if action == "upload" and upload_form.is_valid():
        upload = upload_form.cleaned_data["file"]
        try:
            parsed = tutorial_file_parse(name=upload.name, content=upload.read())
            added = tutorial_items_add(
                config=config, items=parsed, replace=upload_form.cleaned_data["replace"]
            )
        except TutorialItemError as exc:
            problems = exc.problems
        else:
            messages.success(request, _("%(n)d tutorial items added.") % {"n": len(added)})
            return redirect(here)
    if action == "rule" and rule_form.is_valid():
        fields = {f: rule_form.cleaned_data[f] for f in TutorialRuleForm.Meta.fields}
        tutorial_rule_save(config=config, **fields)
        messages.success(request, _("Tutorial rule saved."))
        return redirect(here)
    items = tutorial_items(config=config)
    protocol = config.definition
    for item in items:
        # For the template only, not a field.
        item.described = expectation_lines(  # type: ignore[attr-defined]
            protocol, item.expectation, item.outputs
        )
    context = {
        "config": config,
        "campaign": config.campaign,
        "items": items,
        "real_items": sum(1 for i in items if not i.is_check),
        "item_form": item_form,
        "upload_form": upload_form,
        "rule_form": rule_form,
        "rule": rule,
        "problems": problems,
        "runs": tutorial_runs(config=config),
        # Expected spans marked with the mouse, for a kind that marks spans.
        "marker": _marker(protocol) if "spans" in item_form.fields else None,
    }
    invalid = request.method == "POST"
    return render(
        request, "annotation/tutorial_setup.html", context, status=400 if invalid else 200
    )


@organizer_required
@require_POST
def tutorial_item_delete(
    request: HttpRequest, campaign_id: uuid.UUID, item_id: int
) -> HttpResponse:
    """Remove an organizer's tutorial item (an attention check goes with the rule's switch)."""
    campaign = campaign_for_organizer(request.user, campaign_id)
    item = get_object_or_404(
        TutorialItem.objects.select_related("config"),
        pk=item_id,
        config__campaign=campaign,
        original__isnull=True,
    )
    tutorial_item_remove(item=item)
    messages.success(request, _("Tutorial item removed."))
    return redirect("config_tutorial", campaign_id=campaign.pk, config_id=item.config_id)


@login_required
@never_cache
@require_safe
def tutorial(request: HttpRequest, assignment_id: uuid.UUID) -> HttpResponse:
    """The tutorial item the annotator is at, shown with the protocol's own screen (the answer
    goes to the tutorial's submit, whose feedback the page shows), or why they are stopped."""
    try:
        assignment = assignment_for(assignment_id, signed_in(request))
    except JudgmentError as exc:
        raise Http404(exc.message) from None
    try:
        screen = tutorial_screen(assignment=assignment, annotator=signed_in(request))
    except TutorialError:
        return redirect("annotate", assignment_id=assignment.pk)
    config = assignment.task.config
    if screen.item is None:
        return _stopped(request, screen, config)
    criteria = screen.protocol.criteria_for(len(screen.outputs))
    context = {
        "screen": screen,
        "criteria_view": criteria_widgets(criteria=criteria),
        "config": config,
        "campaign": config.campaign,
        "criteria": criteria,
        # The annotation page's data and script serve the tutorial, with its own submit.
        "data": _tutorial_data(
            screen,
            screen_script_data(screen=screen, criteria=criteria),  # type: ignore[arg-type]
        ),
        "guidance": protocol_guidance(protocol=screen.protocol, organizer=config.instructions),
    }
    return render(request, "annotation/tutorial.html", context)


def _marker(protocol: Protocol) -> dict[str, Any]:
    """The severities and categories the span marker of the item form offers."""
    return {
        "severities": getattr(protocol, "severities", ()),
        "categories": getattr(protocol, "categories", ()),
    }


def _stopped(request: HttpRequest, screen: TutorialScreen, config: ProtocolConfig) -> HttpResponse:
    """The stop message; a crowd worker also gets the fail code to take back to the platform."""
    context: dict[str, Any] = {"screen": screen, "config": config, "campaign": config.campaign}
    worker = CrowdWorker.objects.filter(user=signed_in(request), campaign=config.campaign).first()
    if worker is not None:
        worker = crowd_stopped_record(worker=worker)
        context.update({"worker": worker, "return_url": crowd_return_url(worker=worker)})
    return render(request, "annotation/tutorial_stopped.html", context)


def _tutorial_data(screen: TutorialScreen, data: dict[str, Any]) -> dict[str, Any]:
    assert screen.item is not None
    here = reverse("tutorial", args=[screen.assignment.pk])
    data.update(
        {
            "submitUrl": reverse("api-assignment-tutorial-submit", args=[screen.assignment.pk]),
            "items": [
                {"id": screen.item.pk, "revision": 0, "outputs": [o.pk for o in screen.outputs]}
            ],
            "documents": False,
            "outputs": [o.pk for o in screen.outputs],
            "answer": None,
            "currentUrl": here,
            "itemUrl": here,
            "feedback": {
                "met": _("Your answer met the expectation."),
                "missed": _("Your answer did not meet the expectation."),
                "next": _("Continue"),
            },
        }
    )
    return data
