"""Push assignment through the organizer's page: an organizer of the campaign gives a numbered
task to a named user, who becomes an annotator of the campaign; mistakes come back as messages;
nobody else can push."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation.models import Assignment, Task
from tests.factories import make_config, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def config(campaign):  # type: ignore[no-untyped-def]
    return make_config(
        campaign, "ranking", outputs_per_screen=2, items_per_task=4, annotations_per_task=1
    )


def url(config) -> str:  # type: ignore[no-untyped-def]
    return reverse("config_assign", args=[config.campaign.pk, config.pk])


def messages_of(response) -> list[str]:  # type: ignore[no-untyped-def]
    """The newest message (unread earlier ones stay in the session before it)."""
    return [str(m) for m in get_messages(response.wsgi_request)][-1:]


@pytest.mark.parametrize("role", ["owner", "co_organizer"])
def test_an_organizer_pushes_a_task_to_a_named_user(as_role, config, role) -> None:  # type: ignore[no-untyped-def]
    newcomer = make_user("newcomer")
    response = as_role(role).post(url(config), {"task": 2, "username": "newcomer"})
    assert response.status_code == 302
    assert response["Location"] == reverse("config_tasks", args=[config.campaign.pk, config.pk])
    assert messages_of(response) == ["Task 2 assigned to newcomer."]
    pushed = Assignment.objects.get(annotator=newcomer)
    assert pushed.task.position == 1
    assert pushed.origin == Assignment.Origin.PUSH
    assert pushed.expires_at is None
    assert config.campaign.annotators.filter(pk=newcomer.pk).exists()
    assert Task.objects.get(pk=pushed.task_id).slots_taken == 1
    # The task page lists the annotator.
    page = as_role(role).get(reverse("config_tasks", args=[config.campaign.pk, config.pk]))
    assert "newcomer" in page.content.decode()


def test_pushing_to_a_full_task_an_unknown_user_or_a_missing_task_says_why(as_role, config) -> None:  # type: ignore[no-untyped-def]
    make_user("first")
    make_user("second")
    owner = as_role("owner")
    owner.post(url(config), {"task": 1, "username": "first"})
    full = owner.post(url(config), {"task": 1, "username": "second"})
    assert messages_of(full) == ["This task already has all the annotators it needs."]
    again = owner.post(url(config), {"task": 1, "username": "first"})
    assert messages_of(again) == ["first already has this task."]
    unknown = owner.post(url(config), {"task": 1, "username": "nobody"})
    assert messages_of(unknown) == ["No such user: nobody"]
    missing = owner.post(url(config), {"task": 999, "username": "second"})
    assert messages_of(missing) == ["This protocol has no task 999."]
    assert Assignment.objects.count() == 1


@pytest.mark.parametrize(
    ("role", "status"),
    [("annotator", 403), ("other_organizer", 404), ("anonymous", 302)],
)
def test_nobody_else_can_push_a_task(as_role, config, role, status) -> None:  # type: ignore[no-untyped-def]
    make_user("newcomer")
    response = as_role(role).post(url(config), {"task": 1, "username": "newcomer"})
    assert response.status_code == status
    assert not Assignment.objects.exists()
