"""A crowd worker does the one task of their study: My tasks offers no other task of the
study's campaign, and a take of it (page or API) leads back to their own task — or, once it is
done, to their completion code — instead of handing out another. A campaign they were added to
otherwise is theirs to take tasks of as any annotator's."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.services import crowd_task_start, crowd_worker_enter
from annotation.models import Assignment, CrowdWorker
from tests.crowd_factories import crowd_study, task_answer
from tests.factories import make_config, make_rich_campaign

pytestmark = pytest.mark.django_db


def started(owner, worker_id: str = "w1") -> tuple[CrowdWorker, Assignment, Client]:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    worker = crowd_worker_enter(invite=link.invite, worker_id=worker_id)
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    client = Client()
    client.force_login(worker.user)
    return worker, assignment, client


def test_a_crowd_worker_who_finished_gets_no_second_task(owner) -> None:  # type: ignore[no-untyped-def]
    worker, assignment, client = started(owner)
    config = assignment.task.config
    task_answer(assignment)
    page = client.get(reverse("my_tasks"))
    assert [c.config for c in page.context["open_configs"]] == []
    taken = client.post(reverse("task_take", args=[config.pk]))
    assert taken["Location"] == reverse("crowd_completion", args=[assignment.pk])
    api = client.post(reverse("api-config-take", args=[config.pk]))
    assert api.status_code == 200
    assert (api.json()["id"], api.json()["status"]) == (str(assignment.pk), "done")
    assert Assignment.objects.filter(annotator=worker.user).count() == 1


def test_a_crowd_worker_mid_task_is_taken_back_to_it(owner) -> None:  # type: ignore[no-untyped-def]
    worker, assignment, client = started(owner)
    config = assignment.task.config
    taken = client.post(reverse("task_take", args=[config.pk]))
    assert taken["Location"] == reverse("annotate", args=[assignment.pk])
    api = client.post(reverse("api-config-take", args=[config.pk]))
    assert api.json()["id"] == str(assignment.pk)
    assert Assignment.objects.filter(annotator=worker.user).count() == 1


def test_another_protocol_of_the_study_is_refused_to_a_crowd_worker(owner) -> None:  # type: ignore[no-untyped-def]
    worker, assignment, client = started(owner)
    other = make_config(assignment.task.config.campaign, "direct_assessment", name="Other DA")
    taken = client.post(reverse("task_take", args=[other.pk]), follow=True)
    assert "it gives you one task" in taken.content.decode()
    api = client.post(reverse("api-config-take", args=[other.pk]))
    assert api.status_code == 409
    assert api.json()["code"] == "crowd_one_task"
    assert Assignment.objects.filter(annotator=worker.user).count() == 1


def test_a_crowd_worker_added_to_another_campaign_takes_its_tasks(owner) -> None:  # type: ignore[no-untyped-def]
    worker, _assignment, client = started(owner)
    other = make_config(make_rich_campaign(owner=owner, name="Other"), "direct_assessment")
    other.campaign.annotators.add(worker.user)
    page = client.get(reverse("my_tasks"))
    assert [c.config for c in page.context["open_configs"]] == [other]
    taken = client.post(reverse("task_take", args=[other.pk]))
    mine = Assignment.objects.get(annotator=worker.user, task__config=other)
    assert taken["Location"] == reverse("annotate", args=[mine.pk])
