"""MQM's weights, configurable per protocol: the setup form asks for them (non-negative numbers
up to 25, with clear errors), the config stores them, a submit's score is computed with them
(worked out here by hand), every judgment keeps them, and the span report and the error-span
summary show them — also after the config's weights were changed behind the page's back."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.campaigns.forms import ProtocolConfigForm
from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import Judgment, JudgmentValue, ProtocolConfig
from annotation.protocols import MQM, PROTOCOLS
from annotation.protocols.mqm import Weights
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user
from tests.support.mqm_weights import CUSTOM

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    with translation.override("en"):
        yield


def form(**changes: Any) -> ProtocolConfigForm:
    data: dict[str, Any] = {
        "name": "MQM",
        "protocol": "mqm",
        "mode": "source",
        "outputs_per_screen": 1,
        "items_per_task": 100,
        "annotations_per_task": 1,
        "qc_bad_reference": 10,
        "qc_repeat": 5,
        "qc_reference": 5,
        "context_segments": 1,
        "hold_minutes": 120,
        "seed": 12345,
        "instructions": "",
    }
    data.update(changes)
    return ProtocolConfigForm(data=data)


def test_the_form_stores_the_weights_given_and_googles_for_the_rest() -> None:
    bound = form(mqm_major="3", mqm_minor="0.5", mqm_neutral="")
    assert bound.is_valid(), bound.errors
    assert bound.instance.settings == {
        "weights": {
            "major": 3.0,
            "minor": 0.5,
            "neutral": 0.0,
            "minor_punctuation": 0.1,
            "non_translation": 25.0,
        }
    }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("mqm_major", "-1", "Ensure this value is greater than or equal to 0."),
        ("mqm_minor_punctuation", "25.5", "Ensure this value is less than or equal to 25.0."),
        ("mqm_non_translation", "heavy", "Enter a number."),
        ("mqm_neutral", "nan", "Enter a number."),
    ],
)
def test_the_form_refuses_a_bad_weight_naming_it(field: str, value: str, message: str) -> None:
    bound = form(**{field: value})
    assert not bound.is_valid()
    assert bound.errors == {field: [message]}


def test_another_kinds_form_ignores_the_hidden_weights_and_stores_no_settings() -> None:
    bound = form(protocol="esa", mqm_major="-1")
    assert bound.is_valid(), bound.errors
    assert bound.instance.settings == {}


def test_the_setup_page_adds_an_mqm_protocol_with_its_weights_and_shows_them() -> None:
    owner = make_user("weights-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    url = reverse("annotation_setup", args=[campaign.pk])
    data = dict(form().data)
    refused = client.post(url, {**data, "mqm_minor": "-0.5"})
    assert refused.status_code == 400
    assert "Ensure this value is greater than or equal to 0." in refused.content.decode()
    added = client.post(url, {**data, **{f"mqm_{k}": str(v) for k, v in CUSTOM.items()}})
    assert added.status_code == 302
    config = ProtocolConfig.objects.get(campaign=campaign, name="MQM")
    assert config.settings == {"weights": CUSTOM}
    page = client.get(url).content.decode()
    assert "Weight of a major error: 3;" in page
    assert "Weight of a minor punctuation error: 0.2;" in page


def judged(weights: dict[str, float]) -> tuple[Any, ProtocolConfig, Judgment]:
    """One MQM judgment of the first screen of a config with ``weights``: in its one output a
    major mistranslation, a minor punctuation error, a neutral style error, a minor grammar
    error and a (minor) non-translation."""
    owner = make_user("weights-reporter", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    rater = make_user("weights-rater")
    campaign.annotators.add(rater)
    config = make_config(
        campaign, MQM, outputs_per_screen=1, items_per_task=4, settings={"weights": weights}
    )
    assignment = task_assign_next(config=config, annotator=rater)
    assert assignment is not None
    screen = annotation_screen(assignment_id=assignment.pk, annotator=rater)
    (output,) = screen.outputs
    assert len(output.text) >= 10
    spans = [
        {"start": 0, "end": 1, "severity": "major", "category": "accuracy/mistranslation"},
        {"start": 2, "end": 3, "severity": "minor", "category": "fluency/punctuation"},
        {"start": 4, "end": 5, "severity": "neutral", "category": "style"},
        {"start": 6, "end": 7, "severity": "minor", "category": "fluency/grammar"},
        {"start": 8, "end": 9, "severity": "minor", "category": "non-translation"},
    ]
    judgment_record(
        assignment_id=assignment.pk,
        annotator=rater,
        item_id=screen.item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer={str(output.pk): {"spans": spans}},
    )
    return owner, config, Judgment.objects.get(item=screen.item, annotator=rater)


def test_a_submit_is_scored_with_the_configs_weights_and_keeps_them() -> None:
    _owner, _config, judgment = judged(CUSTOM)
    # 3 + 0.2 + 0.25 + 0.5 + 10 by hand.
    (value,) = JudgmentValue.objects.filter(judgment=judgment, criterion="mqm")
    assert value.value == pytest.approx(-13.95, abs=1e-12)
    (stored,) = judgment.answer.values()
    assert stored["mqm"] == pytest.approx(-13.95, abs=1e-12)
    assert stored["weights"] == CUSTOM
    # Google's weights give 5 + 0.1 + 0 + 1 + 25 for the same spans.
    assert PROTOCOLS[MQM].derived_values(stored["spans"]) == {"mqm": pytest.approx(-31.1)}


def test_the_span_report_and_the_summary_show_the_weights_the_judgment_stored() -> None:
    owner, config, _judgment = judged(CUSTOM)
    # Weights changed behind the page's back (the page offers no way): the judgment keeps its.
    ProtocolConfig.objects.filter(pk=config.pk).update(settings={"weights": {"major": 7.0}})
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    report = client.get(reverse("campaign_report_spans", args=[config.campaign.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(report.content.decode())))
    assert [(r["severity"], r["category"], r["weight"]) for r in rows] == [
        ("major", "accuracy/mistranslation", "3"),
        ("minor", "fluency/punctuation", "0.2"),
        ("neutral", "style", "0.25"),
        ("minor", "fluency/grammar", "0.5"),
        ("minor", "non-translation", "10"),
    ]
    summary = client.get(reverse("api-campaign-error-spans", args=[config.campaign.pk])).json()
    (protocol,) = summary["protocols"]
    # The summary names the config's current weights (the page and API of the analysis).
    assert protocol["settings"] == {"weights": {**Weights().as_json(), "major": 7.0}}


def test_a_judgment_stored_without_weights_reads_the_configs() -> None:
    kind = PROTOCOLS[MQM].configured({"weights": CUSTOM})
    assert kind.span_weight({}, "minor", "fluency/punctuation") == 0.2
    assert kind.span_weight({"weights": {"major": 9.0}}, "major", "style") == 9.0
    assert PROTOCOLS["esa"].span_weight({}, "major", "") is None
