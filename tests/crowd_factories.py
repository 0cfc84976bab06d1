"""Crowd studies for tests: a campaign with a direct-assessment protocol whose tasks hold
several bad references, a crowd link to it, and a worker who answers a whole task carefully
(bad references scored lower) or carelessly (higher)."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.crowd.services import crowd_link_create
from annotation.judging.services import judgment_record
from annotation.models import Assignment, CrowdLink, Item, ItemKind
from tests.factories import full_answer, make_config, make_rich_campaign


def crowd_study(owner: AbstractBaseUser, *, bad_references: int = 30, **link: Any) -> CrowdLink:
    """A Prolific link (unless ``link`` says otherwise) to 10-item direct-assessment tasks with
    ``bad_references`` bad references per 100 items (3 per task by default)."""
    campaign = make_rich_campaign(owner=owner, name="Crowd study")
    config = make_config(
        campaign,
        "direct_assessment",
        name="DA",
        items_per_task=10,
        outputs_per_screen=1,
        qc_bad_reference=bad_references,
        qc_repeat=0,
        qc_reference=0,
    )
    settings: dict[str, Any] = {
        "platform": "prolific",
        "id_parameter": "PROLIFIC_PID",
        "rule": "not_failed",
        "pass_code": "C1PASS",
        "fail_code": "C2FAIL",
    }
    settings.update(link)
    return crowd_link_create(campaign=campaign, created_by=owner, config=config, **settings)


def task_answer(assignment: Assignment, *, careful: bool = True, leave_last: bool = False) -> None:
    """Answer every item of the task in order (all but the last with ``leave_last``): real
    items 60–80; bad references 10–30 when ``careful``, 85–95 when not (so that the
    bad-reference test fails)."""
    annotator = assignment.annotator
    items = list(Item.objects.filter(task=assignment.task).order_by("position"))
    for item in items[:-1] if leave_last else items:
        if item.kind == ItemKind.BAD_REFERENCE:
            value = 10 + 10 * (item.position % 3) if careful else 85 + 5 * (item.position % 3)
        else:
            value = 60 + 5 * (item.position % 5)
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=full_answer(item, value),
        )
