"""A crowd link: a worker arrives with their platform id in the URL and gets an account bound to
it (no password), an annotator of the campaign, with a task of the link's protocol; the same id
coming back gets the same account and task; a missing or malformed id is refused clearly."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd.forms import CrowdLinkForm
from annotation.crowd.services import crowd_completion_record
from annotation.models import Assignment, CrowdLink, CrowdWorker
from annotation.tasking.invites import invite_token
from tests.crowd_factories import crowd_study, task_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(owner) -> CrowdLink:  # type: ignore[no-untyped-def]
    return crowd_study(owner)


def url(link: CrowdLink) -> str:
    return reverse("invite", args=[invite_token(invite=link.invite)])


def arrive(client: Client, link: CrowdLink, worker_id: str) -> str:
    """Open the study URL as the platform sends the worker, press Start; where it leads."""
    page = client.get(f"{url(link)}?PROLIFIC_PID={worker_id}&STUDY_ID=s1&SESSION_ID=x9")
    assert page.status_code == 200, page.content.decode()
    assert worker_id in page.content.decode()
    response = client.post(url(link), {"worker_id": worker_id})
    assert response.status_code == 302
    return str(response["Location"])


def test_a_worker_arriving_with_their_prolific_id_gets_an_account_bound_to_it_and_a_task(
    client, link
) -> None:  # type: ignore[no-untyped-def]
    location = arrive(client, link, "5f1e2d3c4b5a697887766554")
    worker = CrowdWorker.objects.get()
    assert (worker.platform, worker.worker_id) == ("prolific", "5f1e2d3c4b5a697887766554")
    assert worker.user.username.startswith("prolific-5f1e2d3c4b5a697887766554-")
    assert not worker.user.has_usable_password()
    assert link.invite.campaign.annotators.filter(pk=worker.user.pk).exists()
    assignment = Assignment.objects.get(annotator=worker.user)
    assert assignment.task.config == link.config
    assert worker.assignment == assignment
    assert location == reverse("annotate", args=[assignment.pk])
    assert client.get(location).status_code == 200


def test_the_same_worker_id_coming_back_gets_the_same_account_and_task(link) -> None:  # type: ignore[no-untyped-def]
    first = arrive(Client(), link, "abc123")
    again = Client()
    assert arrive(again, link, "abc123") == first
    assert CrowdWorker.objects.count() == 1
    assert again.get(reverse("my_tasks")).context["user"] == CrowdWorker.objects.get().user


def test_another_worker_id_gets_another_account_and_another_task(link) -> None:  # type: ignore[no-untyped-def]
    assert arrive(Client(), link, "worker-one") != arrive(Client(), link, "worker_two")
    assert CrowdWorker.objects.values("user").distinct().count() == 2


@pytest.mark.parametrize(
    "query", ["", "?PROLIFIC_PID=", "?workerId=abc", "?STUDY_ID=s1&SESSION_ID=x9"]
)
def test_a_crowd_link_without_the_worker_id_refuses_clearly(client, link, query) -> None:  # type: ignore[no-untyped-def]
    page = client.get(url(link) + query)
    assert page.status_code == 400
    text = page.content.decode()
    assert "This link needs your worker id from the platform." in text
    assert "PROLIFIC_PID" in text
    assert client.post(url(link)).status_code == 400
    assert not CrowdWorker.objects.exists()


@pytest.mark.parametrize(
    "worker_id", ["abc def", "<script>alert(1)</script>", "x" * 65, "abc%2F..", "über"]
)
def test_a_malformed_worker_id_is_refused(client, link, worker_id) -> None:  # type: ignore[no-untyped-def]
    page = client.get(url(link), {"PROLIFIC_PID": worker_id})
    assert page.status_code == 400
    assert "This worker id is not valid" in page.content.decode()
    assert client.post(url(link), {"worker_id": worker_id}).status_code == 400
    assert not CrowdWorker.objects.exists()


def test_a_custom_parameter_carries_the_id_on_another_platform(client, owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, platform="other", id_parameter="pid")
    assert client.get(url(link), {"PROLIFIC_PID": "abc"}).status_code == 400
    page = client.get(url(link), {"pid": "abc"})
    assert page.status_code == 200
    assert client.post(url(link), {"worker_id": "abc"}).status_code == 302
    assert CrowdWorker.objects.get().platform == "other"


def test_a_worker_who_finished_is_taken_back_to_their_code(client, link) -> None:  # type: ignore[no-untyped-def]
    arrive(client, link, "abc123")
    worker = CrowdWorker.objects.get()
    task_answer(worker.assignment)
    assert arrive(Client(), link, "abc123") == reverse(
        "crowd_completion", args=[worker.assignment_id]
    )


def test_a_worker_id_never_logs_in_an_account_that_has_a_password(client, link) -> None:  # type: ignore[no-untyped-def]
    arrive(client, link, "abc123")
    user = CrowdWorker.objects.get().user
    user.set_password("a-password-of-their-own")
    user.save()
    other = Client()
    response = other.post(url(link), {"worker_id": "abc123"})
    assert response.status_code == 403
    assert "_auth_user_id" not in other.session


def test_a_withdrawn_crowd_link_refuses_workers(client, link) -> None:  # type: ignore[no-untyped-def]
    link.invite.revoked = True
    link.invite.save()
    assert client.get(url(link), {"PROLIFIC_PID": "abc"}).status_code == 410
    assert client.post(url(link), {"worker_id": "abc"}).status_code == 410
    assert not CrowdWorker.objects.exists()


def test_a_finished_code_is_recorded_once(client, link) -> None:  # type: ignore[no-untyped-def]
    arrive(client, link, "abc123")
    worker = CrowdWorker.objects.get()
    task_answer(worker.assignment)
    worker.assignment.refresh_from_db()
    first = crowd_completion_record(worker=worker, assignment=worker.assignment)
    again = crowd_completion_record(worker=worker, assignment=worker.assignment)
    assert (again.code, again.completed_at) == (first.code, first.completed_at)


@pytest.mark.parametrize(
    ("fields", "error_field"),
    [
        ({"return_url": "http://example.org/done?cc={code}"}, "return_url"),
        ({"return_url": "javascript:alert(1)"}, "return_url"),
        ({"platform": "other"}, "id_parameter"),
        ({"id_parameter": "worker id"}, "id_parameter"),
        ({"pass_code": "SAME", "fail_code": "SAME"}, "fail_code"),
        ({"pass_code": "no spaces"}, "pass_code"),
    ],
)
def test_the_crowd_link_form_refuses_bad_settings(link, fields, error_field) -> None:  # type: ignore[no-untyped-def]
    data = {
        "platform": "prolific",
        "config": link.config.pk,
        "rule": "not_failed",
        "days": 30,
        **fields,
    }
    form = CrowdLinkForm(data, campaign=link.config.campaign)
    assert not form.is_valid()
    assert error_field in form.errors


def test_the_crowd_link_form_fills_in_the_platforms_parameter(link) -> None:  # type: ignore[no-untyped-def]
    data = {"platform": "mturk", "config": link.config.pk, "rule": "passed", "days": 3}
    form = CrowdLinkForm(
        {**data, "return_url": "https://example.org/back?code={code}"},
        campaign=link.config.campaign,
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["id_parameter"] == "workerId"
