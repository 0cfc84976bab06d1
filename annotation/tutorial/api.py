"""REST API of tutorials: the organizer's (items, rule, who passed) and the annotator's (the
current tutorial item, and an answer with its feedback)."""

from __future__ import annotations

import uuid
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.judging.screens import JudgmentError, assignment_for
from annotation.models import ProtocolConfig, TutorialRule
from annotation.permissions import IsOrganizer, config_for_organizer, signed_in
from annotation.tutorial.items import TutorialItemError, tutorial_items_add, tutorial_rule_save
from annotation.tutorial.runs import (
    TutorialOutcome,
    TutorialScreen,
    tutorial_answer_record,
    tutorial_items,
    tutorial_screen,
)
from annotation.tutorial.selectors import (
    item_json,
    rule_json,
    run_json,
    tutorial_rule,
    tutorial_runs,
)


class ItemsSerializer(serializers.Serializer):
    items = serializers.ListField(
        child=serializers.DictField(),
        help_text="Items {source, reference, outputs: [texts], expectation, feedback}; the "
        "expectation as docs/annotation.md describes it.",
    )
    replace = serializers.BooleanField(default=False, help_text="Replace the tutorial's items.")


class RuleSerializer(serializers.ModelSerializer):
    class Meta:
        model = TutorialRule
        fields = ["pass_at_least", "on_fail", "attempts", "stop_message", "attention_check"]


def _tutorial_json(config: ProtocolConfig) -> dict[str, Any]:
    items = tutorial_items(config=config)
    return {
        "rule": rule_json(tutorial_rule(config=config), len(items)),
        "items": [item_json(i) for i in items],
        "runs": [run_json(r) for r in tutorial_runs(config=config)],
    }


class TutorialView(APIView):
    permission_classes = [permissions.IsAuthenticated, IsOrganizer]

    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        description="A protocol's tutorial: its rule, its items (the attention check last, "
        "when the rule asks for one) and every annotator's run through it: status (active, "
        "passed, continued, stopped), items met, and each answer with its verdict.",
    )
    def get(self, request: Request, campaign_id: Any, config_id: int) -> Response:
        return Response(_tutorial_json(config_for_organizer(request.user, campaign_id, config_id)))

    @extend_schema(
        request=ItemsSerializer,
        responses={201: OpenApiTypes.OBJECT},
        description="Add tutorial items (all or none; 400 names each problem by item number).",
    )
    def post(self, request: Request, campaign_id: Any, config_id: int) -> Response:
        config = config_for_organizer(request.user, campaign_id, config_id)
        serializer = ItemsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            tutorial_items_add(
                config=config,
                items=serializer.validated_data["items"],
                replace=serializer.validated_data["replace"],
            )
        except TutorialItemError as exc:
            return Response({"items": exc.problems}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_tutorial_json(config), status=status.HTTP_201_CREATED)

    @extend_schema(request=RuleSerializer, responses=OpenApiTypes.OBJECT)
    def put(self, request: Request, campaign_id: Any, config_id: int) -> Response:
        """Set the rule: how many items to pass (null: all), what happens to an annotator who
        fails (continue, retry, stop), attempts, the stop message, the attention check."""
        config = config_for_organizer(request.user, campaign_id, config_id)
        serializer = RuleSerializer(tutorial_rule(config=config), data=request.data)
        serializer.is_valid(raise_exception=True)
        tutorial_rule_save(config=config, **serializer.validated_data)
        return Response(_tutorial_json(config))


def _error(exc: JudgmentError) -> Response:
    return Response(
        {"code": exc.code, "detail": exc.message, "errors": exc.errors}, status=exc.status
    )


def screen_json(screen: TutorialScreen) -> dict[str, Any]:
    """A tutorial item as the API shows it (or a stopped annotator's message)."""
    if screen.item is None:
        return {"stopped": True, "message": screen.message}
    criteria = screen.protocol.criteria_for(len(screen.outputs))
    return {
        "stopped": False,
        "item": screen.item.pk,
        "position": screen.position + 1,
        "total": screen.total,
        "attempt": screen.run.attempt,
        "source": screen.item.source if screen.shows_source else None,
        "reference": screen.item.reference if screen.shows_reference else None,
        "outputs": [{"id": o.pk, "text": o.text} for o in screen.outputs],
        "criteria": [c.as_json() for c in criteria],
    }


@extend_schema(
    responses={
        200: OpenApiTypes.OBJECT,
        410: OpenApiResponse(
            description="The tutorial no longer stands in the way (`done`): none, or passed."
        ),
    }
)
@api_view(["GET"])
def tutorial_current(request: Request, assignment_id: uuid.UUID) -> Response:
    """The tutorial item the caller is at before the real items of this task (410 when the
    tutorial no longer stands in the way; ``stopped`` with the organizer's message when they
    failed and may not continue)."""
    try:
        assignment = assignment_for(assignment_id, signed_in(request))
        screen = tutorial_screen(assignment=assignment, annotator=signed_in(request))
    except JudgmentError as exc:  # a TutorialError too
        return _error(exc)
    return Response(screen_json(screen))


class TutorialSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    revision = serializers.IntegerField(required=False, help_text="Ignored (the page sends 0).")
    submission_id = serializers.UUIDField()
    answer = serializers.DictField(help_text="As for a real item; outputs are numbered 1, 2, …")


def outcome_json(outcome: TutorialOutcome, assignment_id: uuid.UUID) -> dict[str, Any]:
    answer = outcome.answer
    go_on = outcome.status in ("passed", "continued")
    return {
        "met": answer.met,
        "notes": answer.notes,
        "feedback": outcome.feedback,
        "status": outcome.status,
        "summary": outcome.summary,
        "done": outcome.done,
        "total": outcome.total,
        "revision": 1,
        "next": None,
        "next_url": reverse("annotate" if go_on else "tutorial", args=[assignment_id]),
    }


@extend_schema(
    request=TutorialSubmitSerializer,
    responses={
        201: OpenApiTypes.OBJECT,
        400: OpenApiResponse(description="The answer is invalid (`invalid`)."),
        409: OpenApiResponse(
            description="Not the current tutorial item, or the tutorial takes no answers "
            "(`not_current`)."
        ),
    },
)
@api_view(["POST"])
def tutorial_submit(request: Request, assignment_id: uuid.UUID) -> Response:
    """Answer the current tutorial item: 201 with whether it met the expectation (``met``,
    ``notes``), the organizer's ``feedback``, and after the last item the rule's outcome
    (``status``: passed, continued, retry, stopped; ``summary``). 400 for an invalid answer
    (the protocol's own checks), 409 for an item that is not the current one."""
    serializer = TutorialSubmitSerializer(data=request.data)
    if not serializer.is_valid():
        return Response(
            {"code": "invalid", "detail": "The answer is malformed.", "errors": serializer.errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    data = serializer.validated_data
    try:
        assignment = assignment_for(assignment_id, signed_in(request))
        outcome = tutorial_answer_record(
            assignment=assignment,
            annotator=signed_in(request),
            item_id=data["item"],
            submission_id=data["submission_id"],
            answer=data["answer"],
        )
    except JudgmentError as exc:  # a TutorialError too
        return _error(exc)
    return Response(outcome_json(outcome, assignment_id), status=status.HTTP_201_CREATED)
