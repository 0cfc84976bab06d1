"""The end of a crowd worker's task: the last answer leads to their completion page, which shows
the pass code or the fail code by the bad-reference test on their own judgments and the link's
rule, and links back to the platform with the code."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.services import (
    CODE_ALPHABET,
    crowd_completion_record,
    crowd_task_start,
    crowd_worker_enter,
)
from annotation.models import CrowdLink, CrowdWorker, Item
from annotation.tasking.services import task_assign_next
from tests.crowd_factories import crowd_study, task_answer
from tests.factories import full_answer, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


def finished_worker(link: CrowdLink, worker_id: str, *, careful: bool = True) -> CrowdWorker:
    worker = crowd_worker_enter(invite=link.invite, worker_id=worker_id)
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    task_answer(assignment, careful=careful)
    assignment.refresh_from_db()
    return crowd_completion_record(worker=worker, assignment=assignment)


def test_a_careful_worker_gets_the_pass_code_and_a_careless_one_the_fail_code(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    careful = finished_worker(link, "careful", careful=True)
    careless = finished_worker(link, "careless", careful=False)
    assert (careful.code, careful.passed) == ("C1PASS", True)
    assert (careless.code, careless.passed) == ("C2FAIL", False)
    assert careful.qc["status"] == "passed"
    assert careful.qc["criteria"][0]["n"] == 3
    assert careful.qc["criteria"][0]["p_value"] <= 0.05
    assert careless.qc["status"] == "failed"
    assert careless.qc["criteria"][0]["p_value"] > 0.05
    assert careful.qc["test"] == "paired_t"


@pytest.mark.parametrize(
    ("rule", "careful", "passed"),
    [
        ("not_failed", True, True),  # untested: only one bad reference in the task
        ("passed", True, False),
        ("always", True, True),
    ],
)
def test_the_rule_decides_for_a_worker_the_test_could_not_judge(
    owner, rule, careful, passed
) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, bad_references=10, rule=rule)
    worker = finished_worker(link, "w1", careful=careful)
    assert worker.qc["status"] == "untested"
    assert worker.passed is passed


def test_the_always_rule_passes_a_careless_worker(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, rule="always")
    worker = finished_worker(link, "w1", careful=False)
    assert worker.qc["status"] == "failed"
    assert (worker.code, worker.passed) == ("C1PASS", True)


def test_without_codes_of_its_own_every_worker_gets_a_code_of_their_own(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, pass_code="", fail_code="")
    first = finished_worker(link, "w1")
    second = finished_worker(link, "w2")
    assert first.code != second.code
    assert len(first.code) == 10
    assert set(first.code) <= set(CODE_ALPHABET)


def test_the_last_answer_leads_a_crowd_worker_to_a_page_with_their_code(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    client = Client()
    worker = crowd_worker_enter(invite=link.invite, worker_id="abc123")
    client.force_login(worker.user)
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    items = list(Item.objects.filter(task=assignment.task).order_by("position"))
    task_answer(assignment, leave_last=True)
    response = client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        {
            "item": items[-1].pk,
            "revision": 0,
            "submission_id": str(uuid.uuid4()),
            "answer": full_answer(items[-1], 70),
        },
        content_type="application/json",
    )
    assert response.json()["finished"] is True
    to_code = client.get(response.json()["next_url"])
    assert to_code["Location"] == reverse("crowd_completion", args=[assignment.pk])
    page = client.get(to_code["Location"])
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="completion-code">C1PASS<' in text
    assert 'href="https://app.prolific.com/submissions/complete?cc=C1PASS"' in text
    assert "Return to Prolific" in text
    worker.refresh_from_db()
    assert (worker.code, worker.passed, worker.assignment) == ("C1PASS", True, assignment)
    # A reload shows the same code; nothing is decided twice.
    assert 'id="completion-code">C1PASS<' in client.get(to_code["Location"]).content.decode()
    assert CrowdWorker.objects.get().completed_at == worker.completed_at


def test_an_unfinished_task_has_no_code_yet(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    worker = crowd_worker_enter(invite=link.invite, worker_id="abc123")
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    client = Client()
    client.force_login(worker.user)
    page = client.get(reverse("crowd_completion", args=[assignment.pk]))
    assert page["Location"] == reverse("annotate", args=[assignment.pk])
    worker.refresh_from_db()
    assert (worker.completed_at, worker.code) == (None, "")


def test_an_annotator_who_came_without_a_crowd_link_finishes_on_my_tasks(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    annotator = make_user("invited")
    link.config.campaign.annotators.add(annotator)
    assignment = task_assign_next(config=link.config, annotator=annotator)
    assert assignment is not None
    task_answer(assignment)
    client = Client()
    client.force_login(annotator)
    page = client.get(reverse("crowd_completion", args=[assignment.pk]))
    assert page["Location"] == f"{reverse('my_tasks')}?finished={assignment.pk}"
    assert client.get(page["Location"]).status_code == 200
    assert not CrowdWorker.objects.exists()


def test_nobody_else_sees_a_workers_completion_page(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    worker = finished_worker(link, "w1")
    other = finished_worker(link, "w2")
    client = Client()
    client.force_login(other.user)
    assert client.get(reverse("crowd_completion", args=[worker.assignment_id])).status_code == 404


def test_a_return_url_of_the_organizers_gets_the_code(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(
        owner,
        platform="mturk",
        id_parameter="workerId",
        pass_code="",
        fail_code="",
        return_url="https://example.org/hit/done?c={code}&from=evalsite",
    )
    worker = finished_worker(link, "A1B2C3D4E5F6G7")
    client = Client()
    client.force_login(worker.user)
    text = client.get(reverse("crowd_completion", args=[worker.assignment_id])).content.decode()
    assert f'href="https://example.org/hit/done?c={worker.code}&amp;from=evalsite"' in text
    assert "Return to Amazon Mechanical Turk" in text


def test_without_a_return_url_the_page_asks_to_copy_the_code(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, platform="other", id_parameter="pid")
    worker = finished_worker(link, "w1")
    client = Client()
    client.force_login(worker.user)
    text = client.get(reverse("crowd_completion", args=[worker.assignment_id])).content.decode()
    assert 'id="crowd-return"' not in text
    assert "Copy this code into the platform" in text


def test_a_crowd_worker_finishing_a_task_of_another_campaign_finishes_on_my_tasks(owner) -> None:  # type: ignore[no-untyped-def]
    worker = finished_worker(crowd_study(owner), "w1")
    other = make_config(make_rich_campaign(owner=owner, name="Other"), "direct_assessment")
    other.campaign.annotators.add(worker.user)
    assignment = task_assign_next(config=other, annotator=worker.user)
    assert assignment is not None
    task_answer(assignment)
    client = Client()
    client.force_login(worker.user)
    page = client.get(reverse("my_tasks"), {"finished": str(assignment.pk)})
    assert page.status_code == 200
    assert page.context["finished"] == assignment
