"""A crowd link's study URL — what the organizer pastes into Prolific or MTurk — stays the same
across page loads, task rebuilds, a change of the link's protocol and a server restart with
another secret key, and keeps working; a withdrawn link's URL is refused, an unknown one is
not found. The signed invite URL of older crowd links keeps working too."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management.utils import get_random_secret_key
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd.services import crowd_task_start, crowd_worker_enter
from annotation.models import Assignment, CrowdLink, CrowdWorker
from annotation.tasking.build import tasks_build
from annotation.tasking.invites import invite_token
from tests.crowd_factories import crowd_study
from tests.factories import make_config, make_user

pytestmark = pytest.mark.django_db


def study_urls(client: Client, link: CrowdLink) -> list[str]:
    page = client.get(reverse("crowd_setup", args=[link.config.campaign_id]))
    assert page.status_code == 200
    return [row["url"] for row in page.context["links"]]


def arrive(url: str, worker_id: str) -> Any:
    """A worker following the study URL with their id filled in, and pressing Start."""
    path = url.split("testserver", 1)[1].split("?", 1)[0]
    worker = Client()
    shown = worker.get(path, {"PROLIFIC_PID": worker_id, "STUDY_ID": "s", "SESSION_ID": "x"})
    assert shown.status_code == 200, shown.content
    return worker.post(path, {"worker_id": worker_id})


def test_the_study_url_survives_page_loads_a_rebuild_and_a_new_secret_key(
    client: Client, owner: Any
) -> None:
    link = crowd_study(owner)
    client.force_login(owner)
    [url] = study_urls(client, link)
    assert url.startswith(f"http://testserver/study/{link.study_token}/?PROLIFIC_PID=")
    assert study_urls(client, link) == [url]

    tasks_build(config=link.config)
    assert study_urls(client, link) == [url]
    # A restart with another key: nothing signed with the old one verifies any more.
    with override_settings(SECRET_KEY=get_random_secret_key()):
        restarted = Client()
        restarted.force_login(owner)
        assert study_urls(restarted, link) == [url]
        started = arrive(url, "w-after-restart")
    assignment = Assignment.objects.get(annotator__crowd_worker__worker_id="w-after-restart")
    assert started["Location"] == reverse("annotate", args=[assignment.pk])
    assert assignment.task.config == link.config

    # The API gives the same URL.
    api = APIClient()
    api.force_authenticate(owner)
    listed = api.get(reverse("api-campaign-crowd-links", args=[link.config.campaign_id]))
    assert [row["study_url"] for row in listed.json()["links"]] == [url]


def test_a_link_changed_to_another_protocol_keeps_its_url_and_its_workers_tasks(
    client: Client, owner: Any
) -> None:
    link = crowd_study(owner)
    client.force_login(owner)
    [url] = study_urls(client, link)
    earlier = crowd_worker_enter(invite=link.invite, worker_id="early")
    first = crowd_task_start(worker=earlier)
    assert first is not None
    second_protocol = make_config(
        link.config.campaign, "direct_assessment", name="DA, round 2", items_per_task=5
    )

    changed = client.post(
        reverse("crowd_link_protocol", args=[link.config.campaign_id, link.pk]),
        {"config": second_protocol.pk},
        follow=True,
    )
    assert "its study URL has not changed" in changed.content.decode()
    link.refresh_from_db()
    assert link.config == second_protocol
    assert study_urls(client, link) == [url]

    # A new worker gets a task of the new protocol; one who had started finishes their own.
    arrive(url, "late")
    late = Assignment.objects.get(annotator__crowd_worker__worker_id="late")
    assert late.task.config == second_protocol
    again = arrive(url, "early")
    assert again["Location"] == reverse("annotate", args=[first.pk])
    assert Assignment.objects.filter(annotator=earlier.user).count() == 1
    worker = Client()
    worker.force_login(earlier.user)
    taken = worker.post(reverse("api-config-take", args=[first.task.config_id]))
    assert taken.json()["id"] == str(first.pk)


def test_a_link_cannot_serve_another_campaigns_protocol_and_outsiders_cannot_change_it(
    client: Client, owner: Any
) -> None:
    link = crowd_study(owner)
    other = crowd_study(owner)
    client.force_login(owner)
    url = reverse("crowd_link_protocol", args=[link.config.campaign_id, link.pk])
    refused = client.post(url, {"config": other.config.pk}, follow=True)
    assert "Choose a protocol of this campaign." in refused.content.decode()
    # A link of another campaign is not found under this one.
    wrong = reverse("crowd_link_protocol", args=[link.config.campaign_id, other.pk])
    assert client.post(wrong, {"config": link.config.pk}).status_code == 404
    outsider = Client()
    outsider.force_login(make_user("outsider", organizer=True))
    assert outsider.post(url, {"config": link.config.pk}).status_code == 404
    link.refresh_from_db()
    assert link.config_id != other.config.pk


def test_a_withdrawn_study_url_is_refused_and_an_unknown_one_not_found(owner: Any) -> None:
    link = crowd_study(owner)
    worker = Client()
    path = reverse("crowd_study", args=[link.study_token])
    link.invite.revoked = True
    link.invite.save(update_fields=["revoked"])
    withdrawn = worker.get(path, {"PROLIFIC_PID": "w1"})
    assert withdrawn.status_code == 410
    assert "withdrawn" in withdrawn.content.decode()
    assert worker.post(path, {"worker_id": "w1"}).status_code == 410
    unknown = worker.get(reverse("crowd_study", args=["x" * 22]), {"PROLIFIC_PID": "w1"})
    assert unknown.status_code == 404
    assert not CrowdWorker.objects.exists()


def test_the_signed_url_of_an_older_crowd_link_still_works(owner: Any) -> None:
    link = crowd_study(owner)
    old = reverse("invite", args=[invite_token(invite=link.invite)])
    worker = Client()
    assert worker.get(old, {"PROLIFIC_PID": "w1"}).status_code == 200
    started = worker.post(old, {"worker_id": "w1"})
    assert started["Location"].startswith("/annotate/")


def test_every_crowd_link_has_a_token_of_its_own(owner: Any) -> None:
    tokens = {crowd_study(owner).study_token for _ in range(3)}
    assert len(tokens) == 3
    assert all(len(token) >= 22 for token in tokens)
