"""Tasks of a protocol that a crowd link serves are the crowd's: the campaign's own
annotators (added by username or invited personally) are not offered them on My tasks and a
take of them (page or API) is refused — unless the organizer offers them, on the crowd page or
through the campaign API. A withdrawn link gives the protocol back to them; a task they held
already stays theirs; an organizer may still assign one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd.services import crowd_link_create
from annotation.models import Assignment, Campaign, CrowdLink, ProtocolConfig
from annotation.tasking.services import task_assign, task_assign_next
from tests.crowd_factories import crowd_study
from tests.factories import make_config, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(owner: Any) -> CrowdLink:
    link = crowd_study(owner)
    Campaign.objects.filter(pk=link.config.campaign_id).update(status=Campaign.Status.ACTIVE)
    return link


@pytest.fixture
def roster_config(link: CrowdLink) -> ProtocolConfig:
    """A second protocol of the campaign that no crowd link serves."""
    return make_config(link.config.campaign, "direct_assessment", name="Team DA")


def annotator_client(link: CrowdLink, name: str = "ann") -> tuple[Any, Client]:
    user = make_user(name)
    link.config.campaign.annotators.add(user)
    client = Client()
    client.force_login(user)
    return user, client


def offered(client: Client) -> list[ProtocolConfig]:
    return [open.config for open in client.get(reverse("my_tasks")).context["open_configs"]]


def test_the_campaigns_annotators_are_not_offered_crowd_tasks_by_default(
    link: CrowdLink, roster_config: ProtocolConfig
) -> None:
    user, client = annotator_client(link)
    assert offered(client) == [roster_config]
    taken = client.post(reverse("task_take", args=[link.config.pk]), follow=True)
    assert "for the workers of a crowd study" in taken.content.decode()
    api = client.post(reverse("api-config-take", args=[link.config.pk]))
    assert api.status_code == 409
    assert api.json()["code"] == "crowd_tasks"
    assert not Assignment.objects.filter(annotator=user, task__config=link.config).exists()
    # The protocol no crowd link serves is theirs to take.
    assert client.post(reverse("api-config-take", args=[roster_config.pk])).status_code == 200


def test_the_organizer_offers_crowd_tasks_to_the_campaigns_annotators(
    client: Client, owner: Any, link: CrowdLink, roster_config: ProtocolConfig
) -> None:
    user, annotator = annotator_client(link)
    client.force_login(owner)
    campaign_id = link.config.campaign_id
    page = client.get(reverse("crowd_setup", args=[campaign_id]))
    assert page.context["roster_form"]["offer"].value() is False
    saved = client.post(reverse("crowd_roster_offer", args=[campaign_id]), {"offer": "on"})
    assert saved["Location"].endswith("#roster-offer")
    assert Campaign.objects.get(pk=campaign_id).crowd_tasks_to_roster is True
    assert set(offered(annotator)) == {link.config, roster_config}
    taken = annotator.post(reverse("api-config-take", args=[link.config.pk]))
    assert taken.status_code == 200
    assert Assignment.objects.filter(annotator=user, task__config=link.config).count() == 1

    # Unticked: for the crowd only again (the task taken meanwhile stays theirs).
    client.post(reverse("crowd_roster_offer", args=[campaign_id]), {})
    assert Campaign.objects.get(pk=campaign_id).crowd_tasks_to_roster is False
    assert offered(annotator) == [roster_config]
    again = annotator.post(reverse("api-config-take", args=[link.config.pk]))
    assert again.json()["id"] == taken.json()["id"]


def test_the_campaign_api_reads_and_sets_the_offer(owner: Any, link: CrowdLink) -> None:
    api = APIClient()
    api.force_authenticate(owner)
    url = reverse("api-campaign-detail", args=[link.config.campaign_id])
    assert api.get(url).json()["crowd_tasks_to_roster"] is False
    changed = api.patch(url, {"crowd_tasks_to_roster": True}, format="json")
    assert changed.status_code == 200, changed.content
    assert Campaign.objects.get(pk=link.config.campaign_id).crowd_tasks_to_roster is True


def test_a_withdrawn_crowd_link_gives_the_protocol_back_to_the_campaigns_annotators(
    link: CrowdLink, roster_config: ProtocolConfig
) -> None:
    _user, client = annotator_client(link)
    link.invite.revoked = True
    link.invite.save(update_fields=["revoked"])
    assert set(offered(client)) == {link.config, roster_config}
    assert client.post(reverse("api-config-take", args=[link.config.pk])).status_code == 200


def test_a_task_held_before_the_crowd_link_came_stays_its_annotators(
    owner: Any, link: CrowdLink
) -> None:
    config = make_config(link.config.campaign, "direct_assessment", name="Before")
    user, client = annotator_client(link, "early")
    held = task_assign_next(config=config, annotator=user)
    assert held is not None
    crowd_link_create(
        campaign=config.campaign,
        created_by=owner,
        config=config,
        platform="prolific",
        id_parameter="PROLIFIC_PID",
        rule="not_failed",
    )
    taken = client.post(reverse("api-config-take", args=[config.pk]))
    assert taken.json()["id"] == str(held.pk)
    # Another annotator gets none of it.
    _other, newcomer = annotator_client(link, "newcomer")
    assert newcomer.post(reverse("api-config-take", args=[config.pk])).status_code == 409


def test_an_organizer_may_still_assign_a_crowd_task_to_an_annotator(link: CrowdLink) -> None:
    user, client = annotator_client(link)
    task = link.config.tasks.order_by("position").first()
    assert task is not None
    assignment = task_assign(task=task, annotator=user)
    page = client.get(reverse("annotate", args=[assignment.pk]))
    assert page.status_code == 200
