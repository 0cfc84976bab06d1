"""The error-span kinds through the whole product: tasks built with QC items, annotators marking
spans and (ESA) scoring through the API, and the analysis ranking the systems by ESA's score and
by MQM's (the negated weighted sum, worked out here by hand for each system), with every
annotator's bad references found."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.models import ItemKind, ItemOutput, Judgment
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db

# Per system: its errors (severity, category) and its ESA score.
ERRORS = {
    "nmt-large": [],
    "nmt-base": [("minor", "style")],
    "smt-phrase": [("major", "accuracy/mistranslation")],
    "rbmt-toy": [
        ("major", "accuracy/omission"),
        ("minor", "fluency/grammar"),
        ("minor", "fluency/punctuation"),
    ],
}
MQM_OF = {"nmt-large": 0.0, "nmt-base": -1.0, "smt-phrase": -5.0, "rbmt-toy": -6.1}
ESA_OF = {"nmt-large": 90, "nmt-base": 75, "smt-phrase": 50, "rbmt-toy": 20}


def degraded_range(output: ItemOutput) -> tuple[int, int]:
    """Where a bad reference differs from its original (code points of the shown text)."""
    original = output.original.text  # type: ignore[union-attr]
    text = output.text
    prefix = 0
    while prefix < min(len(text), len(original)) and text[prefix] == original[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(text), len(original)) - prefix
        and text[-1 - suffix] == original[-1 - suffix]
    ):
        suffix += 1
    return prefix, len(text) - suffix


def answer_for(output: ItemOutput, protocol: str) -> dict[str, Any]:
    """Spans at the start of the text, one character each; a bad reference gets a major span
    over its degraded part and one on the missing-content marker (MQM −10, below every
    system's) and a low score."""
    categories = protocol == "mqm"
    if output.kind == ItemKind.BAD_REFERENCE:
        start, end = degraded_range(output)
        n = len(output.text)
        spans = [
            {"start": start, "end": end, "severity": "major"},
            {"start": n, "end": n + 1, "severity": "major"},  # and content missing
        ]
        if categories:
            spans[0]["category"] = "accuracy/mistranslation"
            spans[1]["category"] = "accuracy/omission"
        return {"spans": spans} | ({} if categories else {"score": 5})
    if output.kind == ItemKind.REFERENCE:
        return {"spans": []} | ({} if categories else {"score": 100})
    system = output.translation.run.system.name  # type: ignore[union-attr]
    spans = []
    for i, (severity, category) in enumerate(ERRORS[system]):
        span = {"start": 2 * i, "end": 2 * i + 1, "severity": severity}
        if categories:
            span["category"] = category
        spans.append(span)
    return {"spans": spans} | ({} if categories else {"score": ESA_OF[system]})


def annotate(client: Client, config_id: int, protocol: str, tasks: int) -> None:
    for _ in range(tasks):
        taken = client.post(reverse("api-config-take", args=[config_id]))
        assert taken.status_code == 200
        assignment = taken.json()["id"]
        while True:
            current = client.get(reverse("api-assignment-current", args=[assignment]))
            if current.status_code == 410:
                break
            body = current.json()
            outputs = ItemOutput.objects.select_related(
                "translation__run__system", "original"
            ).filter(pk__in=[o["id"] for o in body["outputs"]])
            sent = client.post(
                reverse("api-assignment-submit", args=[assignment]),
                {
                    "item": body["item"],
                    "revision": 0,
                    "submission_id": str(uuid.uuid4()),
                    "answer": {str(o.pk): answer_for(o, protocol) for o in outputs},
                },
                content_type="application/json",
            )
            assert sent.status_code == 201, sent.content


@pytest.mark.parametrize(("protocol", "expected"), [("esa", ESA_OF), ("mqm", MQM_OF)])
def test_span_kinds_rank_the_systems(protocol: str, expected: dict[str, float]) -> None:
    owner = make_user(f"{protocol}-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotators = [make_user(f"{protocol}-rater{n}") for n in range(3)]
    campaign.annotators.add(*annotators)
    config = make_config(
        campaign,
        protocol,
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=3,
        qc_bad_reference=25,
    )
    for annotator in annotators:
        client = Client()
        assert client.login(username=annotator.username, password=PASSWORD)
        annotate(client, config.pk, protocol, tasks=2)
    assert Judgment.objects.filter(item__task__config=config).count() == 72
    assert Judgment.objects.filter(spans__isnull=False).exists()

    analysis = campaign_analysis_compute(campaign=campaign)
    [criterion] = analysis.criteria
    assert criterion.criterion == ("score" if protocol == "esa" else "mqm")
    assert [(a.qc_status, a.qc_n) for a in criterion.annotators] == [("passed", 6)] * 3
    ranked = sorted(criterion.ranked_systems, key=lambda s: s.position)
    assert [s.name for s in ranked] == sorted(expected, key=lambda name: -expected[name])
    assert [s.mean_raw for s in ranked] == pytest.approx(sorted(expected.values(), reverse=True))
