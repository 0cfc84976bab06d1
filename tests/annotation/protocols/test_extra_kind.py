"""A protocol kind registered by the test suite alone runs through the whole product: tasks
are built for it, annotators answer it through the API, the analysis ranks the systems by it,
and the reports carry it. No module of EvalSite names it: a new kind is one object behind the
kinds' interface (``annotation.protocols.base.Protocol``) and a ``register`` call."""

from __future__ import annotations

import csv
import dataclasses
import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.template import Template
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.models import ItemKind, ItemOutput, Judgment, ProtocolConfig, Task
from annotation.protocols import PROTOCOLS, SOURCE_BASED, Criterion, Protocol, register
from annotation.reports.stream import judgment_report_stream
from annotation.reports.systems import system_report_csv
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

QUALITY = Criterion("quality", "Overall quality", 1, 7, {1: "Useless", 7: "Perfect"})
TOY = Protocol(
    "toy_quality",
    "Overall quality, 1 to 7",
    (QUALITY,),
    (SOURCE_BASED,),
    single_output=True,
    instructions="Rate the translation from 1 (useless) to 7 (perfect).",
)
# A screen of the kind's own: a template part (here compiled in the test) in place of the
# scales, with the widget contract annotate.js needs (annotation/screens/scales.html says it).
TOY_SCREEN = Template(
    "{% for output in screen.outputs %}"
    '<article class="output card toy-screen" data-output="{{ output.pk }}">'
    '<p class="text">{{ output.text }}</p>'
    '<fieldset class="criterion" data-criterion="quality" data-output="{{ output.pk }}" '
    'data-widget="choices">{% for value, label in criteria_view.0.choices %}'
    '<label><input type="radio" name="q{{ output.pk }}" value="{{ value }}">{{ value }}</label>'
    "{% endfor %}</fieldset></article>{% endfor %}"
)
TOY_KEYS = Template(
    "<li class='toy-keys'><kbd>1</kbd>–<kbd>7</kbd> {{ screen.protocol.digit_hint }}</li>"
)

# What the annotators give each system's outputs: a clear order for the analysis to find.
SYSTEM_SCORE = {"nmt-large": 7, "nmt-base": 5, "smt-phrase": 3, "rbmt-toy": 1}


@pytest.fixture
def toy_kind() -> Iterator[Protocol]:
    register(TOY)
    try:
        yield TOY
    finally:
        del PROTOCOLS[TOY.key]


@pytest.fixture
def toy_screen_kind() -> Iterator[Protocol]:
    kind = dataclasses.replace(
        TOY,
        key="toy_screen",
        screen_template=TOY_SCREEN,
        keys_template=TOY_KEYS,
        digit_hint="rate the focused toy",
    )
    register(kind)
    try:
        yield kind
    finally:
        del PROTOCOLS[kind.key]


def _value(output: ItemOutput) -> int:
    """The system's score; a degraded copy (a bad reference) well below its original, by an
    amount that varies (so that the annotators' QC test has a spread to work with)."""
    if output.kind == ItemKind.BAD_REFERENCE:
        original = output.original
        assert original is not None
        return max(1, _value(original) - 3 - output.pk % 2)
    if output.kind == ItemKind.REFERENCE:
        return 7
    assert output.translation is not None
    return SYSTEM_SCORE[output.translation.run.system.name]


def _annotate_tasks(client: Client, config_id: int, tasks: int) -> int:
    """Take ``tasks`` tasks of the config through the API and answer every item of each; the
    judgments made."""
    made = 0
    for _ in range(tasks):
        taken = client.post(reverse("api-config-take", args=[config_id]))
        assert taken.status_code == 200
        assignment = taken.json()["id"]
        while True:
            current = client.get(reverse("api-assignment-current", args=[assignment]))
            if current.status_code == 410:
                break
            body = current.json()
            assert [c["key"] for c in body["criteria"]] == ["quality"]
            assert body["source"] is not None
            outputs = ItemOutput.objects.select_related("translation__run__system").filter(
                pk__in=[o["id"] for o in body["outputs"]]
            )
            answer: dict[str, Any] = {str(o.pk): {"quality": _value(o)} for o in outputs}
            sent = client.post(
                reverse("api-assignment-submit", args=[assignment]),
                {
                    "item": body["item"],
                    "revision": 0,
                    "submission_id": str(uuid.uuid4()),
                    "answer": answer,
                },
                content_type="application/json",
            )
            assert sent.status_code == 201, sent.content
            made += 1
    return made


@pytest.mark.django_db
def test_a_kind_registered_by_a_test_runs_from_build_to_reports(toy_kind: Protocol) -> None:
    owner = make_user("toy-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotators = [make_user(f"toy-rater{n}") for n in range(3)]
    campaign.annotators.add(*annotators)
    config = make_config(
        campaign,
        toy_kind.key,
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=3,
        qc_bad_reference=25,
    )

    # Build: single-output screens of the kind, QC items among them.
    assert Task.objects.filter(config=config).exists()
    assert all(item.outputs.count() == 1 for t in config.tasks.all() for item in t.items.all())

    # Annotate through the API, each annotator two tasks.
    for annotator in annotators:
        client = Client()
        assert client.login(username=annotator.username, password=PASSWORD)
        assert _annotate_tasks(client, config.pk, tasks=2) == 24
    assert Judgment.objects.filter(item__task__config=config).count() == 72

    # Analysis: the systems in the annotators' order, by the kind's one criterion.
    analysis = campaign_analysis_compute(campaign=campaign)
    [criterion] = analysis.criteria
    assert (criterion.protocol, criterion.criterion, criterion.scale) == (
        "toy_quality",
        "quality",
        (1, 7),
    )
    # The kind's QC items work as any kind's: every annotator's bad references scored lower.
    assert [(a.qc_status, a.qc_n) for a in criterion.annotators] == [("passed", 6)] * 3
    ranked = [s.name for s in sorted(criterion.ranked_systems, key=lambda s: s.position)]
    assert ranked == sorted(SYSTEM_SCORE, key=lambda name: -SYSTEM_SCORE[name])
    assert [s.mean_raw for s in sorted(criterion.ranked_systems, key=lambda s: s.position)] == [
        7.0,
        5.0,
        3.0,
        1.0,
    ]

    # Reports: the system report and the judgment report carry the kind's criterion.
    systems = list(csv.DictReader(io.StringIO(system_report_csv(analysis))))
    assert {row["criterion"] for row in systems} == {"quality"}
    assert {row["system"] for row in systems} == set(SYSTEM_SCORE)
    judgments = b"".join(judgment_report_stream(campaign=campaign, file_format="csv")).decode()
    rows = list(csv.DictReader(io.StringIO(judgments)))
    assert {row["protocol"] for row in rows} == {"toy_quality"}
    assert {row["criterion"] for row in rows} == {"quality"}

    # The organizer's analysis page shows it.
    organizer = Client()
    assert organizer.login(username=owner.username, password=PASSWORD)
    page = organizer.get(reverse("campaign_analysis", args=[campaign.pk]))
    assert page.status_code == 200
    assert "Overall quality" in page.content.decode()


@pytest.mark.django_db
def test_the_annotation_page_shows_the_kinds_own_screen(
    toy_kind: Protocol, toy_screen_kind: Protocol
) -> None:
    """The page draws a kind's questions with the kind's template parts and loads its script:
    the default scales for a kind that keeps them, the kind's own part for one that brings it."""
    owner = make_user("screen-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user("screen-rater")
    campaign.annotators.add(annotator)
    client = Client()
    assert client.login(username=annotator.username, password=PASSWORD)
    pages = {}
    for kind in (toy_kind, toy_screen_kind):
        config = make_config(campaign, kind.key, items_per_task=4, outputs_per_screen=1)
        taken = client.post(reverse("api-config-take", args=[config.pk]))
        assert taken.status_code == 200
        page = client.get(reverse("annotate", args=[taken.json()["id"]]))
        assert page.status_code == 200
        pages[kind.key] = page.content.decode()

    scales = pages["toy_quality"]
    # The scales part: one choices question of seven points, and the scales' script.
    assert 'data-widget="choices"' in scales
    assert scales.count('type="radio" name="o') == 7
    assert "set the focused score" in scales
    assert "toy-screen" not in scales
    own = pages["toy_screen"]
    assert own.count("toy-screen") == 1
    assert own.count('type="radio" name="q') == 7
    assert "toy-keys" in own
    assert "rate the focused toy" in own
    assert 'name="o' not in own
    # Whatever the screen, the page's own script follows the kind's script.
    for html in (scales, own):
        assert html.index("annotation/screens/scales.js") < html.index("annotation/annotate.js")


@pytest.mark.django_db
def test_a_new_kind_needs_no_migration(toy_kind: Protocol) -> None:
    """The kinds are the choices of ``ProtocolConfig.protocol`` as the registry lists them
    when asked: with one more registered, the models still match their migrations."""
    out = io.StringIO()
    call_command("makemigrations", "annotation", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
    assert (toy_kind.key, toy_kind.name) in ProtocolConfig._meta.get_field("protocol").choices


@pytest.mark.django_db
def test_a_config_names_a_registered_kind(toy_kind: Protocol) -> None:
    """A config of the registered kind passes the model's checks; one naming no registered
    kind is refused with the name (the forms and the API offer only registered kinds)."""
    campaign = make_rich_campaign(owner=make_user("kind-owner", organizer=True))
    config = make_config(campaign, toy_kind.key, items_per_task=4, outputs_per_screen=1)
    config.full_clean()
    assert config.get_protocol_display() == toy_kind.name
    config.protocol = "no_such_kind"
    with pytest.raises(ValidationError) as refused:
        config.full_clean()
    assert "no_such_kind" in str(refused.value.message_dict["protocol"])
