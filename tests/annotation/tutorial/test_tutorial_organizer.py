"""The organizer's side of tutorials: items through the API, the page's form and a file;
the rule; who passed or failed; and who may do it."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import TutorialItem, TutorialRule
from tests.factories import make_config
from tests.tutorial_factories import BAD, GOOD, holding, tutorial_answer, tutorial_config

pytestmark = pytest.mark.django_db


def api_url(config) -> str:  # type: ignore[no-untyped-def]
    return reverse("api-config-tutorial", args=[config.campaign_id, config.pk])


def page_url(config) -> str:  # type: ignore[no-untyped-def]
    return reverse("config_tutorial", args=[config.campaign_id, config.pk])


@pytest.fixture
def da(campaign):  # type: ignore[no-untyped-def]
    return make_config(campaign, "direct_assessment", outputs_per_screen=1, items_per_task=4)


def test_items_and_the_rule_are_set_through_the_api(as_role, da) -> None:  # type: ignore[no-untyped-def]
    owner = as_role("owner")
    added = owner.post(api_url(da), {"items": [GOOD, BAD]}, content_type="application/json")
    assert added.status_code == 201, added.content
    body = added.json()
    assert [i["feedback"] for i in body["items"]] == [GOOD["feedback"], BAD["feedback"]]
    assert body["rule"]["needed"] == 2
    rule = owner.put(
        api_url(da),
        {"pass_at_least": 1, "on_fail": "stop", "stop_message": "Sorry.", "attention_check": True},
        content_type="application/json",
    )
    assert rule.status_code == 200, rule.content
    assert rule.json()["rule"]["on_fail"] == "stop"
    # The attention check comes last, a copy of the first item.
    assert [i["attention_check"] for i in rule.json()["items"]] == [False, False, True]
    da.refresh_from_db()
    assert da.has_tutorial


def test_items_are_refused_all_together_naming_each_problem(as_role, da) -> None:  # type: ignore[no-untyped-def]
    wrong = {**BAD, "expectation": {"scores": {"1": {"adequacy": [1, 2]}}}}
    two_outputs = {**GOOD, "outputs": ["a", "b"]}
    refused = as_role("owner").post(
        api_url(da), {"items": [GOOD, wrong, two_outputs]}, content_type="application/json"
    )
    assert refused.status_code == 400
    assert refused.json()["items"] == [
        "Item 2: “scores”: unknown criterion adequacy.",
        "Item 3: This protocol shows one output per screen.",
    ]
    assert not TutorialItem.objects.exists()


def test_the_api_tells_the_organizer_who_passed(as_role, annotator, campaign) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, pass_at_least=2, on_fail="continue")
    assignment = holding(config, annotator)
    client = as_role("annotator")
    tutorial_answer(client, assignment, 90)
    tutorial_answer(client, assignment, 90)
    runs = as_role("co_organizer").get(api_url(config)).json()["runs"]
    assert [(r["annotator"], r["status"], r["items_met"]) for r in runs] == [
        ("annotator", "continued", 1)
    ]
    assert [a["met"] for a in runs[0]["answers"]] == [True, False]
    assert runs[0]["answers"][1]["notes"] == ["Translation 1: score 90, expected 0–40."]


@pytest.mark.parametrize(
    ("role", "status"), [("annotator", 403), ("other_organizer", 404), ("anonymous", 401)]
)
def test_only_the_campaigns_organizers_see_its_tutorial(as_role, da, role, status) -> None:  # type: ignore[no-untyped-def]
    assert as_role(role).get(api_url(da)).status_code == status


def test_the_page_adds_an_item_from_its_form(as_role, da) -> None:  # type: ignore[no-untyped-def]
    owner = as_role("owner")
    response = owner.post(
        page_url(da),
        {
            "action": "add",
            "source": "Das Haus ist klein, aber es hat einen Garten.",
            "outputs": "The house is small.",
            "criterion": "score",
            "low": "0",
            "high": "40",
            "feedback": "It drops a clause.",
        },
    )
    assert response.status_code == 302
    item = TutorialItem.objects.get()
    assert item.expectation == {"scores": {"1": {"score": [0.0, 40.0]}}}
    page = owner.get(page_url(da))
    assert b"It drops a clause." in page.content
    # A range without its ends is refused with the form.
    refused = owner.post(
        page_url(da), {"action": "add", "source": "x", "outputs": "y", "criterion": "score"}
    )
    assert refused.status_code == 400


def test_the_page_adds_span_expectations_for_esa(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    esa = make_config(campaign, "esa", outputs_per_screen=1, items_per_task=4)
    response = as_role("owner").post(
        page_url(esa),
        {
            "action": "add",
            "source": "Das Haus ist klein.",
            "outputs": "The house is big.",
            "spans": "1: 13-16 major",
            "feedback": "“big” is a mistranslation of “klein”.",
        },
    )
    assert response.status_code == 302
    assert TutorialItem.objects.get().expectation == {
        "spans": {"1": [{"start": 13, "end": 16, "severity": "major"}]},
        "only_spans": False,
    }


def test_the_page_takes_a_csv_or_json_file_of_items(as_role, da) -> None:  # type: ignore[no-untyped-def]
    owner = as_role("owner")
    csv_text = (
        "source,output,feedback,expectation\n"
        "Das Haus ist klein.,The house is small.,Good.,"
        '"{""scores"": {""1"": {""score"": [70, 100]}}}"\n'
    )
    upload = SimpleUploadedFile("items.csv", csv_text.encode())
    assert owner.post(page_url(da), {"action": "upload", "file": upload}).status_code == 302
    json_file = SimpleUploadedFile("items.json", json.dumps([GOOD, BAD]).encode())
    response = owner.post(page_url(da), {"action": "upload", "file": json_file, "replace": "on"})
    assert response.status_code == 302
    assert list(TutorialItem.objects.values_list("feedback", flat=True)) == [
        GOOD["feedback"],
        BAD["feedback"],
    ]
    broken = SimpleUploadedFile("items.json", b'[{"outputs": []}]')
    refused = owner.post(page_url(da), {"action": "upload", "file": broken})
    assert refused.status_code == 400
    assert "Item 1: Give at least one output text." in refused.content.decode()


def test_the_page_saves_the_rule_and_removes_an_item(as_role, campaign) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign)
    owner = as_role("owner")
    saved = owner.post(
        page_url(config),
        {"action": "rule", "pass_at_least": "1", "on_fail": "retry", "attempts": "3"},
    )
    assert saved.status_code == 302
    rule = TutorialRule.objects.get(config=config)
    assert (rule.pass_at_least, rule.on_fail, rule.attempts) == (1, "retry", 3)
    first = TutorialItem.objects.get(config=config, position=0)
    url = reverse("tutorial_item_delete", args=[config.campaign_id, first.pk])
    assert owner.post(url).status_code == 302
    assert list(TutorialItem.objects.values_list("position", "feedback")) == [(0, BAD["feedback"])]
