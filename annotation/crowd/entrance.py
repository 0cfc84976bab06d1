"""Crowd links as the annotator's pages ask them (``annotation.judging.entrances``): a crowd
link's own invite page, a worker's one task of their study, and its end on the completion
page. ``AnnotationConfig.ready`` registers it."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from annotation.crowd.services import (
    crowd_one_task_message,
    crowd_take,
    crowd_tasks_message,
    crowd_tasks_withheld,
)
from annotation.crowd.views import crowd_invite
from annotation.judging.entrances import Entrance, Take
from annotation.models import Assignment, CrowdWorker, Invite, ProtocolConfig


class CrowdEntrance(Entrance):
    """Workers of a crowd study: they arrive through its link and do its one task."""

    key = "crowd"

    def invite_page(self, request: HttpRequest, invite: Invite) -> HttpResponse | None:
        return crowd_invite(request, invite) if hasattr(invite, "crowd") else None

    def take(self, *, annotator: User, config: ProtocolConfig) -> Take | None:
        crowd, assignment = crowd_take(user=annotator, config=config)
        if not crowd:
            # The campaign's own annotators: a protocol a crowd link serves is the crowd's,
            # unless the organizer offers its tasks to them too.
            if crowd_tasks_withheld(config=config, annotator=annotator):
                return Take(None, code="crowd_tasks", message=crowd_tasks_message())
            return None
        if assignment is None:
            return Take(None, code="crowd_one_task", message=crowd_one_task_message())
        # Back to their task, or to its completion code once done.
        done = assignment.status == Assignment.Status.DONE
        page = reverse("crowd_completion" if done else "annotate", args=[assignment.pk])
        return Take(assignment, page=page)

    def finished_page(self, *, annotator: User, assignment: Assignment) -> str | None:
        # A crowd worker's task ends on the page with their completion code.
        if not CrowdWorker.objects.filter(
            user=annotator, campaign_id=assignment.task.config.campaign_id
        ).exists():
            return None
        return reverse("crowd_completion", args=[assignment.pk])
