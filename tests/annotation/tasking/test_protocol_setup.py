"""Adding a protocol to a campaign on the setup page."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test import Client
from django.urls import reverse

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.models import ProtocolConfig, Task
from annotation.tasking.services import assignment_release, task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def protocol_form(campaign: Any, name: str) -> dict[str, Any]:
    """The add form as the page offers it, with ``name``."""
    form = ProtocolConfigForm(instance=ProtocolConfig(campaign=campaign))
    data = {
        field: value
        for field, value in (
            (f, form[f].value()) for f in ProtocolConfigForm.Meta.fields if f != "fluency_first"
        )
        if value is not None
    }
    return {**data, "name": name, "protocol": "direct_assessment", "mode": "source"}


def test_a_second_protocol_of_the_same_name_is_refused_on_the_form(campaign, owner) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("annotation_setup", args=[campaign.pk])
    first = client.post(url, protocol_form(campaign, "DA"))
    assert first.status_code == 302
    # Another organizer's page, loaded before the first was added, sends the same name: the
    # database's unique constraint decides, and the form says why instead of a server error.
    again = client.post(url, protocol_form(campaign, "DA"))
    assert again.status_code == 400
    assert "This campaign already has a protocol of that name." in again.content.decode()
    assert ProtocolConfig.objects.filter(campaign=campaign, name="DA").count() == 1
    # The request's connection is still usable after the refused insert.
    assert connection.is_usable()
    other = client.post(url, protocol_form(campaign, "DA 2"))
    assert other.status_code == 302
    assert ProtocolConfig.objects.filter(campaign=campaign).count() == 2


def test_two_organizers_adding_the_same_name_at_once_get_one_protocol_and_a_message(
    campaign, owner, co_organizer
) -> None:  # type: ignore[no-untyped-def]
    # The other organizer's insert is made and held open in a transaction of its own, then
    # committed once this request waits for it on the unique index: a check for the name
    # before the insert saw nothing and the insert failed with a server error.
    inserted, done = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def other_organizer() -> None:
        try:
            with transaction.atomic():
                ProtocolConfig.objects.create(
                    campaign=campaign, name="DA", protocol="direct_assessment", mode="source"
                )
                inserted.set()
                with connection.cursor() as cursor:
                    for _ in range(200):
                        cursor.execute(
                            "SELECT count(*) FROM pg_stat_activity "
                            "WHERE wait_event_type = 'Lock' AND datname = current_database()"
                        )
                        if cursor.fetchone()[0]:
                            break
                        time.sleep(0.05)
                    else:
                        raise AssertionError("the request never waited for the other insert")
        except BaseException as exc:  # reported by the test's thread
            failures.append(exc)
        finally:
            connections.close_all()
            done.set()

    thread = threading.Thread(target=other_organizer)
    thread.start()
    assert inserted.wait(10)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    response = client.post(
        reverse("annotation_setup", args=[campaign.pk]), protocol_form(campaign, "DA")
    )
    thread.join(15)
    assert done.is_set()
    assert not failures, failures
    assert response.status_code == 400
    assert "This campaign already has a protocol of that name." in response.content.decode()
    assert ProtocolConfig.objects.filter(campaign=campaign, name="DA").count() == 1


def test_the_setup_page_counts_the_items_of_every_task(owner) -> None:  # type: ignore[no-untyped-def]
    # Tasks of equal size: the page summed distinct sizes, so three tasks of 100 items
    # showed 100 items.
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", items_per_task=100, outputs_per_screen=1)
    sizes = list(Task.objects.filter(config=config).values_list("size", flat=True))
    assert sizes == [100, 100, 100]
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    page = client.get(reverse("annotation_setup", args=[campaign.pk]))
    assert page.status_code == 200
    row = page.context["rows"][0]
    assert (row["config"].n_tasks, row["config"].n_items) == (3, 300)
    assert '<td class="num">300</td>' in page.content.decode()


def test_rebuild_is_not_offered_once_a_task_was_taken_even_if_given_back(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    # The button showed while no hold was active or done, so a task given back (or expired)
    # offered "Rebuild tasks", which always answered that annotators had started.
    campaign = make_rich_campaign(owner=owner)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("annotation_setup", args=[campaign.pk])
    build = reverse("config_build", args=[campaign.pk, config.pk])
    assert build in client.get(url).content.decode()
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    assignment_release(assignment=assignment)
    page = client.get(url)
    assert page.context["rows"][0]["assigned"] == 1
    assert build not in page.content.decode()


def test_the_setup_page_shows_one_output_per_screen_for_direct_assessment(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_rich_campaign(owner=owner)
    da = make_config(campaign, "direct_assessment", outputs_per_screen=5, items_per_task=5)
    af = make_config(campaign, "adequacy_fluency", outputs_per_screen=3, items_per_task=5)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    html = client.get(reverse("annotation_setup", args=[campaign.pk])).content.decode()

    def k_cell(config_id: int) -> str:
        row = html[html.index(f'<tr id="config-{config_id}">') :].split("</tr>")[0]
        return row.split('<td class="num">')[1].split("</td>")[0]

    assert k_cell(da.pk) == "1"
    assert k_cell(af.pk) == "3"
