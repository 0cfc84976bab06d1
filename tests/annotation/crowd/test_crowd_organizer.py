"""The organizer's side of crowd links: creating one on the crowd page, the study URL to give
the platform, the workers' completions table, and verifying a worker's code in the page and
through the API. Only the campaign's organizers see any of it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd.services import crowd_completion_record, crowd_task_start, crowd_worker_enter
from annotation.models import CrowdLink, CrowdWorker
from annotation.tasking.invites import invite_token
from tests.crowd_factories import crowd_study, task_answer
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def finished_worker(link: CrowdLink, worker_id: str, *, careful: bool = True) -> CrowdWorker:
    worker = crowd_worker_enter(invite=link.invite, worker_id=worker_id)
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    task_answer(assignment, careful=careful)
    assignment.refresh_from_db()
    return crowd_completion_record(worker=worker, assignment=assignment)


@pytest.fixture
def link(owner) -> CrowdLink:  # type: ignore[no-untyped-def]
    link = crowd_study(owner, pass_code="", fail_code="")
    finished_worker(link, "careful", careful=True)
    finished_worker(link, "careless", careful=False)
    crowd_worker_enter(invite=link.invite, worker_id="still-at-work")
    return link


def completions(client: APIClient, link: CrowdLink, **query: str) -> list[dict]:  # type: ignore[type-arg]
    url = reverse("api-campaign-completions", args=[link.config.campaign_id])
    response = client.get(url, query)
    assert response.status_code == 200, response.content
    return list(response.json()["completions"])


def test_an_organizer_verifies_a_workers_code_through_the_api(owner, link) -> None:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(owner)
    careful = CrowdWorker.objects.get(worker_id="careful")
    [row] = completions(client, link, worker="careful", code=f" {careful.code.lower()} ")
    assert row["code_matches"] is True
    assert (row["code"], row["passed"], row["platform"]) == (careful.code, True, "prolific")
    assert row["username"] == careful.user.username
    assert row["qc"]["status"] == "passed"
    assert row["qc"]["criteria"][0]["n"] == 3
    [row] = completions(client, link, worker="careless", code=careful.code)
    assert (row["code_matches"], row["passed"]) == (False, False)
    [row] = completions(client, link, worker="careful")
    assert row["code_matches"] is None
    assert completions(client, link, worker="nobody") == []


def test_the_api_lists_every_worker_finished_ones_first(owner, link) -> None:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(owner)
    rows = completions(client, link)
    assert [r["worker_id"] for r in rows] == ["careless", "careful", "still-at-work"]
    assert rows[-1]["finished"] is False
    assert rows[-1]["code"] is None


def test_the_api_pages_the_workers_in_the_same_order(owner, link) -> None:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(owner)
    url = reverse("api-campaign-completions", args=[link.config.campaign_id])
    first = client.get(url, {"limit": 2}).json()
    assert first["count"] == 3
    assert [r["worker_id"] for r in first["completions"]] == ["careless", "careful"]
    assert first["next"] is not None
    second = client.get(first["next"]).json()
    assert [r["worker_id"] for r in second["completions"]] == ["still-at-work"]
    assert (second["count"], second["next"]) == (3, None)
    whole = client.get(url).json()
    assert (whole["count"], whole["next"], len(whole["completions"])) == (3, None, 3)
    one = client.get(url, {"worker": "careful", "limit": 1}).json()
    assert (one["count"], one["next"], len(one["completions"])) == (1, None, 1)
    for bad in ({"limit": 0}, {"limit": 1001}, {"limit": "many"}, {"offset": -1}):
        response = client.get(url, bad)
        assert response.status_code == 400, bad
        # The field named, as every other refused query parameter is.
        assert list(response.json()) == list(bad), response.json()


def test_only_the_campaigns_organizers_see_completions(owner, link) -> None:  # type: ignore[no-untyped-def]
    url = reverse("api-campaign-completions", args=[link.config.campaign_id])
    worker = CrowdWorker.objects.get(worker_id="careful").user
    outsider = make_user("outsider", organizer=True)
    client = APIClient()
    assert client.get(url).status_code == 401
    client.force_authenticate(worker)
    assert client.get(url).status_code == 403
    client.force_authenticate(outsider)
    assert client.get(url).status_code == 404
    page = Client()
    page.force_login(worker)
    assert page.get(reverse("crowd_setup", args=[link.config.campaign_id])).status_code == 403
    page.force_login(outsider)
    assert page.get(reverse("crowd_setup", args=[link.config.campaign_id])).status_code == 404


def test_the_crowd_page_lists_completions_and_verifies_a_code(client, owner, link) -> None:  # type: ignore[no-untyped-def]
    client.force_login(owner)
    careful = CrowdWorker.objects.get(worker_id="careful")
    url = reverse("crowd_setup", args=[link.config.campaign_id])
    page = client.get(url)
    assert page.status_code == 200
    rows = [w.worker_id for w in page.context["workers"]]
    assert rows == ["careless", "careful", "still-at-work"]
    text = page.content.decode()
    assert f"<code>{careful.code}</code>" in text
    assert "?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}" in text
    verified = client.get(url, {"worker": "careful", "code": careful.code}).content.decode()
    assert "The code you entered is this worker" in verified
    wrong = client.get(url, {"worker": "careless", "code": careful.code}).content.decode()
    assert "The code you entered is not this worker" in wrong
    unknown = client.get(url, {"worker": "nobody"}).content.decode()
    assert "No worker with this id came through a crowd link of this campaign." in unknown


def test_an_organizer_creates_a_crowd_link_on_the_crowd_page(client, owner, link) -> None:  # type: ignore[no-untyped-def]
    client.force_login(owner)
    url = reverse("crowd_setup", args=[link.config.campaign_id])
    response = client.post(
        url,
        {
            "platform": "mturk",
            "config": link.config.pk,
            "rule": "passed",
            "return_url": "https://example.org/done?code={code}",
            "label": "Batch 2",
            "days": 7,
        },
    )
    assert response.status_code == 302
    created = CrowdLink.objects.get(invite__label="Batch 2")
    assert (created.platform, created.id_parameter, created.rule) == ("mturk", "workerId", "passed")
    assert created.invite.campaign == link.config.campaign
    assert "?workerId=" in client.get(url).content.decode()


def test_a_bad_crowd_link_is_refused_with_its_errors(client, owner, link) -> None:  # type: ignore[no-untyped-def]
    client.force_login(owner)
    url = reverse("crowd_setup", args=[link.config.campaign_id])
    response = client.post(
        url,
        {
            "platform": "prolific",
            "config": link.config.pk,
            "rule": "passed",
            "return_url": "http://example.org/",
            "days": 7,
        },
    )
    assert response.status_code == 400
    assert "Enter an https URL." in response.content.decode()
    assert CrowdLink.objects.count() == 1


def test_completions_are_in_the_api_schema(client) -> None:  # type: ignore[no-untyped-def]
    schema = client.get(reverse("api_schema"), {"format": "json"}).json()
    operation = schema["paths"]["/api/campaigns/{campaign_id}/completions/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"worker", "code"}


def test_a_worker_who_left_before_seeing_the_code_gets_it_when_they_come_back(
    client, owner, link
) -> None:  # type: ignore[no-untyped-def]
    worker = crowd_worker_enter(invite=link.invite, worker_id="left-early")
    assignment = crowd_task_start(worker=worker)
    assert assignment is not None
    task_answer(assignment)
    client.force_login(owner)
    page = client.get(reverse("crowd_setup", args=[link.config.campaign_id]))
    assert "finished, code not shown yet" in page.content.decode()
    back = Client()
    study = reverse("invite", args=[invite_token(invite=link.invite)])
    done = back.post(study, {"worker_id": "left-early"})
    assert done["Location"] == reverse("crowd_completion", args=[assignment.pk])
    back.get(done["Location"])
    worker.refresh_from_db()
    assert worker.passed is True
    assert worker.code


def test_the_setup_page_sends_the_organizer_to_the_crowd_page_for_a_crowd_links_url(
    client, owner, link
) -> None:  # type: ignore[no-untyped-def]
    client.force_login(owner)
    page = client.get(reverse("annotation_setup", args=[link.config.campaign_id]))
    text = page.content.decode()
    assert "crowd link: its study URL is on the crowd page" in text
    assert invite_token(invite=link.invite) not in text


def test_an_organizer_makes_and_lists_crowd_links_through_the_api(owner, link) -> None:  # type: ignore[no-untyped-def]
    client = APIClient()
    client.force_authenticate(owner)
    url = reverse("api-campaign-crowd-links", args=[link.config.campaign_id])
    made = client.post(
        url,
        {"platform": "prolific", "config": link.config.pk, "pass_code": "C1A2B3C4"},
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["id_parameter"], body["rule"], body["pass_code"]) == (
        "PROLIFIC_PID",
        "not_failed",
        "C1A2B3C4",
    )
    assert body["study_url"].endswith("&SESSION_ID={{%SESSION_ID%}}")
    listed = client.get(url).json()["links"]
    assert [row["id"] for row in listed] == [body["id"], link.invite_id]
    refused = client.post(
        url,
        {"platform": "other", "config": link.config.pk, "return_url": "http://x.org/"},
        format="json",
    )
    assert refused.status_code == 400
    assert set(refused.json()) >= {"id_parameter", "return_url"}
    assert CrowdLink.objects.count() == 2


def test_a_crowd_link_cannot_use_another_campaigns_protocol(owner, link) -> None:  # type: ignore[no-untyped-def]
    other = crowd_study(owner)
    client = APIClient()
    client.force_authenticate(owner)
    url = reverse("api-campaign-crowd-links", args=[link.config.campaign_id])
    refused = client.post(url, {"platform": "prolific", "config": other.config.pk}, format="json")
    assert refused.status_code == 400
    assert "config" in refused.json()
