"""What the organizer reads of a tutorial: its items, its rule, and who passed or failed."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotation.models import ProtocolConfig, TutorialItem, TutorialRule, TutorialRun
from annotation.tutorial.runs import needed


def tutorial_rule(*, config: ProtocolConfig) -> TutorialRule:
    """The config's rule (the defaults, unsaved, when the organizer has set none)."""
    return TutorialRule.objects.filter(config=config).first() or TutorialRule(config=config)


def tutorial_runs(*, config: ProtocolConfig) -> QuerySet[TutorialRun]:
    """Every annotator's run through the tutorial, with their answers, newest first."""
    return (
        TutorialRun.objects.filter(config=config)
        .select_related("annotator")
        .prefetch_related("answers")
        .order_by("-started")
    )


def item_json(item: TutorialItem) -> dict[str, Any]:
    return {
        "id": item.pk,
        "position": item.position + 1,
        "source": item.source,
        "reference": item.reference,
        "outputs": item.outputs,
        "expectation": item.expectation,
        "feedback": item.feedback,
        "attention_check": item.is_check,
    }


def rule_json(rule: TutorialRule, total: int) -> dict[str, Any]:
    return {
        "pass_at_least": rule.pass_at_least,
        "needed": needed(rule, total),
        "on_fail": rule.on_fail,
        "attempts": rule.attempts,
        "stop_message": rule.stop_message,
        "attention_check": rule.attention_check,
    }


def run_json(run: TutorialRun) -> dict[str, Any]:
    """A run as the API shows it: the annotator, how it ended, and every answer's verdict."""
    return {
        "annotator": run.annotator.get_username(),
        "status": run.status,
        "attempt": run.attempt,
        "items_done": run.items_done,
        "items_met": run.items_met,
        "started": run.started,
        "finished": run.finished,
        "answers": [
            {
                "attempt": a.attempt,
                "position": a.position + 1,
                "item": a.item_id,
                "met": a.met,
                "notes": a.notes,
                "answer": a.answer,
                "submitted_at": a.submitted_at,
            }
            for a in run.answers.all()
        ],
    }
