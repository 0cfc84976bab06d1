"""An annotator's way through a tutorial over the API: the real items stay closed until the
rule lets them through; feedback after each answer; pass, continue, retry and stop; answers
stored apart from judgments; the attention check that explains itself."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.tables import criterion_table_load
from annotation.models import (
    Assignment,
    CrowdWorker,
    Item,
    Judgment,
    TutorialAnswer,
    TutorialItem,
    TutorialRun,
)
from annotation.tasking.invites import invite_token
from annotation.tutorial.items import tutorial_item_remove, tutorial_items_add, tutorial_rule_save
from tests.crowd_factories import crowd_study
from tests.factories import PASSWORD, full_answer, make_config
from tests.tutorial_factories import GOOD, holding, tutorial_answer, tutorial_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(annotator) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.login(username=annotator.username, password=PASSWORD)
    return client


def real_submit(client: Client, assignment: Assignment):  # type: ignore[no-untyped-def]
    item = Item.objects.get(task=assignment.task, position=0)
    body = {
        "item": item.pk,
        "revision": 0,
        "submission_id": str(uuid.uuid4()),
        "answer": full_answer(item, 50),
    }
    return client.post(
        reverse("api-assignment-submit", args=[assignment.pk]),
        json.dumps(body),
        content_type="application/json",
    )


def test_the_real_items_wait_for_the_tutorial_and_each_answer_gets_feedback(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, pass_at_least=1)
    assignment = holding(config, annotator)
    current = client.get(reverse("api-assignment-current", args=[assignment.pk]))
    assert current.status_code == 409
    assert current.json()["code"] == "tutorial"
    assert real_submit(client, assignment).status_code == 409
    page = client.get(reverse("annotate", args=[assignment.pk]))
    assert page["Location"] == reverse("tutorial", args=[assignment.pk])

    first = client.get(reverse("api-assignment-tutorial", args=[assignment.pk])).json()
    assert (first["position"], first["total"], first["source"]) == (1, 2, "Das Haus ist klein.")
    assert first["outputs"] == [{"id": 1, "text": "The house is small."}]
    # 90 is within the expected 70–100.
    met = tutorial_answer(client, assignment, 90).json()
    assert (met["met"], met["notes"], met["status"]) == (True, [], "active")
    assert met["feedback"] == "A faithful translation: it should score high."
    assert met["next_url"] == reverse("tutorial", args=[assignment.pk])
    # 80 is above the expected 0–40: missed, and the rule (1 of 2) still passes.
    missed = tutorial_answer(client, assignment, 80).json()
    assert missed["met"] is False
    assert missed["notes"] == ["Translation 1: score 80, expected 0–40."]
    assert missed["feedback"] == "This translation drops a clause — it should score low."
    assert (missed["status"], missed["next_url"]) == (
        "passed",
        reverse("annotate", args=[assignment.pk]),
    )
    assert missed["summary"] == "You passed the tutorial: 1 of 2 as expected."

    assert client.get(reverse("api-assignment-current", args=[assignment.pk])).status_code == 200
    assert real_submit(client, assignment).status_code == 201
    # Tutorial answers are rows of their own: the one judgment is the real item's, and the
    # analysis's table of the protocol's scores holds it alone.
    assert Judgment.objects.count() == 1
    table = criterion_table_load(config=config, criterion="score")
    assert table.judgments.score.tolist() == [50.0]
    assert list(TutorialAnswer.objects.values_list("met", flat=True)) == [True, False]


def test_an_invalid_or_stale_tutorial_answer_is_refused_and_a_resend_is_stored_once(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    assignment = holding(tutorial_config(campaign), annotator)
    url = reverse("api-assignment-tutorial-submit", args=[assignment.pk])
    item = TutorialItem.objects.get(config=assignment.task.config, position=0)
    body = {"item": item.pk, "submission_id": str(uuid.uuid4()), "answer": {"1": {"score": 101}}}
    refused = client.post(url, json.dumps(body), content_type="application/json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "Output 1: score must be a whole number from 0 to 100."
    body["answer"] = {"1": {"score": 75}}
    first = client.post(url, json.dumps(body), content_type="application/json")
    again = client.post(url, json.dumps(body), content_type="application/json")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert TutorialAnswer.objects.count() == 1
    body["submission_id"] = str(uuid.uuid4())
    stale = client.post(url, json.dumps(body), content_type="application/json")
    assert (stale.status_code, stale.json()["code"]) == (409, "not_current")


def test_a_failing_annotator_continues_when_the_rule_lets_them(campaign, annotator, client) -> None:  # type: ignore[no-untyped-def]
    assignment = holding(tutorial_config(campaign, on_fail="continue"), annotator)
    tutorial_answer(client, assignment, 10)  # expected 70–100: missed
    last = tutorial_answer(client, assignment, 90).json()  # expected 0–40: missed
    assert last["status"] == "continued"
    assert last["summary"].startswith("You answered 0 of 2 tutorial items as expected (2 needed).")
    assert real_submit(client, assignment).status_code == 201


def test_a_failing_annotator_who_may_not_continue_is_stopped_and_gets_no_real_item(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, on_fail="stop", stop_message="Thank you; no more items.")
    assignment = holding(config, annotator)
    tutorial_answer(client, assignment, 90)
    last = tutorial_answer(client, assignment, 90).json()
    assert (last["status"], last["summary"]) == ("stopped", "Thank you; no more items.")
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED
    assignment.task.refresh_from_db()
    assert assignment.task.slots_taken == 0
    refused = real_submit(client, assignment)
    assert refused.status_code == 409
    # The page of the task says why.
    page = client.get(reverse("annotate", args=[assignment.pk]))
    assert page["Location"] == reverse("tutorial", args=[assignment.pk])
    stopped = client.get(page["Location"])
    assert b"Thank you; no more items." in stopped.content
    # Taking another task of the protocol gives nothing to annotate either.
    again = holding(config, annotator)
    assert client.get(reverse("api-assignment-current", args=[again.pk])).json()["code"] == (
        "tutorial_stopped"
    )
    assert client.get(reverse("tutorial", args=[again.pk])).status_code == 200
    again.refresh_from_db()
    assert again.status == Assignment.Status.RELEASED


def test_retry_starts_the_tutorial_again_and_stops_after_the_last_attempt(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    assignment = holding(tutorial_config(campaign, on_fail="retry", attempts=2), annotator)
    tutorial_answer(client, assignment, 90)
    retry = tutorial_answer(client, assignment, 90).json()
    assert retry["status"] == "retry"
    assert retry["summary"] == (
        "You did not answer enough tutorial items as expected. The tutorial starts again "
        "(attempt 2 of 2)."
    )
    current = client.get(reverse("api-assignment-tutorial", args=[assignment.pk])).json()
    assert (current["position"], current["attempt"]) == (1, 2)
    tutorial_answer(client, assignment, 90)
    assert tutorial_answer(client, assignment, 20).json()["status"] == "passed"
    run = TutorialRun.objects.get()
    assert (run.attempt, run.items_met, run.status) == (2, 2, "passed")
    assert list(TutorialAnswer.objects.values_list("attempt", "met")) == [
        (1, True),
        (1, False),
        (2, True),
        (2, True),
    ]


def test_a_failed_attention_check_in_the_tutorial_names_the_damaged_part(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, attention_check=True, pass_at_least=0)
    check = TutorialItem.objects.get(config=config, original__isnull=False)
    original = check.original
    assert (original.position, check.position) == (0, 2)
    start, end = check.expectation["check"]["1"]
    damaged = check.outputs[0]
    assert damaged != original.outputs[0]
    assert damaged[:4] == "The "
    assignment = holding(config, annotator)
    tutorial_answer(client, assignment, 90)
    tutorial_answer(client, assignment, 20)
    # The damaged copy of item 1 scored 95, above the 90 of item 1 itself.
    failed = tutorial_answer(client, assignment, 95).json()
    assert failed["met"] is False
    assert failed["notes"] == [
        f"Translation 1 was damaged on purpose: “{damaged[start:end]}” (characters "
        f"{start}–{end}) was put in from another text.",
        "It should be judged worse than the same translation without the damage (an earlier "
        "item): you gave 95 here and 90 there.",
    ]
    assert failed["status"] == "passed"


def test_the_attention_check_goes_when_the_switch_is_off(campaign) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, attention_check=True)
    assert TutorialItem.objects.filter(config=config).count() == 3
    tutorial_rule_save(config=config, attention_check=False)
    assert TutorialItem.objects.filter(config=config).count() == 2


def test_a_protocol_without_a_tutorial_is_untouched(campaign, annotator, client) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign)
    TutorialItem.objects.filter(config=config).delete()
    config.has_tutorial = False
    config.save()
    assignment = holding(config, annotator)
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 200
    assert client.get(reverse("tutorial", args=[assignment.pk]))["Location"] == reverse(
        "annotate", args=[assignment.pk]
    )


def submit_tutorial(client: Client, assignment: Assignment, answer: dict):  # type: ignore[no-untyped-def,type-arg]
    current = client.get(reverse("api-assignment-tutorial", args=[assignment.pk])).json()
    body = {"item": current["item"], "submission_id": str(uuid.uuid4()), "answer": answer}
    return client.post(
        reverse("api-assignment-tutorial-submit", args=[assignment.pk]),
        json.dumps(body),
        content_type="application/json",
    )


def test_an_esa_tutorial_checks_spans_with_the_kinds_own_validation(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    config = make_config(campaign, "esa", outputs_per_screen=1, items_per_task=4)
    text = "The house is big."  # "big" is characters 13–16
    tutorial_items_add(
        config=config,
        items=[
            {
                "source": "Das Haus ist klein.",
                "outputs": [text],
                "expectation": {
                    "spans": {"1": [{"start": 13, "end": 16, "severity": "major"}]},
                    "scores": {"1": {"score": [0, 60]}},
                },
                "feedback": "“big” says the opposite of “klein”: a major error.",
            }
        ],
    )
    config.refresh_from_db()
    assignment = holding(config, annotator)
    # A span beyond the text is the kind's own 400, naming the span.
    refused = submit_tutorial(
        client,
        assignment,
        {"1": {"score": 30, "spans": [{"start": 13, "end": 40, "severity": "major"}]}},
    )
    assert refused.status_code == 400
    assert refused.json()["detail"].startswith("Output 1, span 1: characters 13–40")
    # A minor span over "big": the right place, the wrong severity.
    minor = submit_tutorial(
        client,
        assignment,
        {"1": {"score": 30, "spans": [{"start": 13, "end": 16, "severity": "minor"}]}},
    ).json()
    assert minor["met"] is False
    assert minor["notes"] == [
        "Translation 1: an error should be marked over “big” (characters 13–16) (severity "
        "major); none of your marks covers it."
    ]
    stored = TutorialAnswer.objects.get()
    assert stored.answer == {
        "1": {"score": 30.0, "spans": [{"start": 13, "end": 16, "severity": "minor"}]}
    }
    assert not Judgment.objects.exists()


def test_a_ranking_tutorial_expects_an_order(campaign, annotator, client) -> None:  # type: ignore[no-untyped-def]
    config = make_config(campaign, "ranking", outputs_per_screen=3, items_per_task=4)
    tutorial_items_add(
        config=config,
        items=[
            {
                "source": "Das Haus ist klein.",
                "outputs": ["House small.", "The house is small.", "The home is little."],
                "expectation": {"order": [2, 3, 1]},
                "feedback": "2 is right, 3 is awkward, 1 is not English.",
            }
        ],
    )
    config.refresh_from_db()
    assignment = holding(config, annotator)
    ranks = {"1": {"rank": 3}, "2": {"rank": 1}, "3": {"rank": 2}}
    met = submit_tutorial(client, assignment, ranks).json()
    assert (met["met"], met["status"]) == (True, "passed")


def test_a_crowd_worker_stopped_by_the_tutorial_gets_the_fail_code(owner) -> None:  # type: ignore[no-untyped-def]
    link = crowd_study(owner)
    tutorial_items_add(config=link.config, items=[GOOD])
    tutorial_rule_save(config=link.config, on_fail="stop")
    client = Client()
    token = invite_token(invite=link.invite)
    start = client.post(reverse("invite", args=[token]), {"worker_id": "5f1e2d3c4b5a697887766554"})
    task = start["Location"]
    assert client.get(task)["Location"].endswith("/tutorial/")
    assignment = Assignment.objects.get()
    assert tutorial_answer(client, assignment, 10).json()["status"] == "stopped"
    page = client.get(reverse("tutorial", args=[assignment.pk])).content.decode()
    assert "C2FAIL" in page
    worker = CrowdWorker.objects.get()
    assert (worker.passed, worker.code) == (False, "C2FAIL")
    # Coming back through the study URL shows the same code, nothing decided twice.
    again = client.post(reverse("invite", args=[token]), {"worker_id": worker.worker_id})
    follow = client.get(client.get(again["Location"])["Location"])
    assert "C2FAIL" in follow.content.decode()


def test_a_run_past_the_items_left_after_a_removal_ends_on_what_it_has(
    campaign, annotator, client
) -> None:  # type: ignore[no-untyped-def]
    config = tutorial_config(campaign, pass_at_least=1)
    assignment = holding(config, annotator)
    tutorial_answer(client, assignment, 90)  # item 1 met
    tutorial_item_remove(item=TutorialItem.objects.get(config=config, position=1))
    # The page finds the tutorial done (1 of 1 met) and leads to the real items.
    page = client.get(reverse("tutorial", args=[assignment.pk]))
    assert page["Location"] == reverse("annotate", args=[assignment.pk])
    assert TutorialRun.objects.get().status == TutorialRun.Status.PASSED
    assert real_submit(client, assignment).status_code == 201
