"""The error-span kinds through the whole product: tasks built with QC items, annotators marking
spans and (ESA) scoring through the API, and the analysis ranking the systems by ESA's score and
by MQM's (the negated weighted sum, worked out here by hand for each system), with every
annotator's bad references found."""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score, f1_score

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.spans import campaign_span_summaries
from annotation.models import ItemKind, ItemOutput, Judgment
from evalcore.human.spans import marked_positions
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


def answer_for(output: ItemOutput, protocol: str, *, lenient: bool = False) -> dict[str, Any]:
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
    # A lenient annotator lets nmt-base's minor error pass.
    errors = [] if lenient and system == "nmt-base" else ERRORS[system]
    for i, (severity, category) in enumerate(errors):
        span = {"start": 2 * i, "end": 2 * i + 1, "severity": severity}
        if categories:
            span["category"] = category
        spans.append(span)
    return {"spans": spans} | ({} if categories else {"score": ESA_OF[system]})


def annotate(
    client: Client, config_id: int, protocol: str, tasks: int, *, lenient: bool = False
) -> None:
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
                    "answer": {
                        str(o.pk): answer_for(o, protocol, lenient=lenient) for o in outputs
                    },
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


def expected_inter_agreement(config: Any) -> tuple[float, float]:
    """F1 and κ of every two annotators' spans on the same real output, by scikit-learn over
    the positions' labels, from the judgments' stored answers."""
    marks: dict[int, list[tuple[int, list[tuple[int, int]], int]]] = {}
    for judgment in Judgment.objects.filter(item__task__config=config):
        for output in judgment.item.outputs.filter(kind=ItemKind.REAL):
            spans = judgment.answer[str(output.pk)]["spans"]
            marking = [(s["start"], s["end"]) for s in spans]
            marks.setdefault(output.pk, []).append(
                (judgment.annotator_id, marking, len(output.text))
            )
    left, right = [], []
    for judged in marks.values():
        # The annotator with the lower id on the left, as the product pairs them (pooled κ
        # depends on the sides).
        ordered = sorted(judged, key=lambda mark: mark[0])
        for (a, first, n), (b, second, _n) in itertools.combinations(ordered, 2):
            if a != b:
                left.append(marked_positions(first, n))
                right.append(marked_positions(second, n))
    a_labels, b_labels = np.concatenate(left), np.concatenate(right)
    return f1_score(a_labels, b_labels), cohen_kappa_score(a_labels, b_labels)


@pytest.mark.parametrize("protocol", ["esa", "mqm"])
def test_span_summaries_tally_errors_agreement_and_found_bad_references(protocol: str) -> None:
    owner = make_user(f"{protocol}-tally-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotators = [make_user(f"{protocol}-tally{n}") for n in range(3)]
    campaign.annotators.add(*annotators)
    config = make_config(
        campaign,
        protocol,
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=3,
        qc_bad_reference=25,
        qc_repeat=25,
    )
    for n, annotator in enumerate(annotators):
        client = Client()
        assert client.login(username=annotator.username, password=PASSWORD)
        annotate(client, config.pk, protocol, tasks=1, lenient=n == 2)
    # Three bad references each are too few for the paired t to pass anybody (p = 0.065), and
    # spans count only from the annotators the scores include: keep everyone in.
    campaign.analysis_settings = {"include_failed": True}
    campaign.save(update_fields=["analysis_settings"])

    [summary] = campaign_span_summaries(campaign=campaign)
    assert (summary.config_id, summary.protocol) == (config.pk, protocol)
    # Every bad reference's degraded part was marked, by everybody.
    assert [(a.username, a.n_bad == a.n_found, a.n_bad > 0) for a in summary.annotators] == [
        (u.username, True, True) for u in annotators
    ]
    # Errors per system: each judged output of a system carries the system's errors (the
    # lenient annotator's nmt-base outputs none).
    real = ItemOutput.objects.filter(item__task__config=config, kind=ItemKind.REAL)
    judged_outputs = Judgment.objects.filter(item__task__config=config, item__outputs__in=real)
    for system in summary.systems:
        n = judged_outputs.filter(item__outputs__system__name=system.name).count()
        lenient = judged_outputs.filter(
            item__outputs__system__name=system.name, annotator=annotators[2]
        ).count()
        assert system.n_judged == n
        errors = ERRORS[system.name]
        expected = Counter(sev for sev, _c in errors)
        judged_with_errors = n - lenient if system.name == "nmt-base" else n
        assert system.by_severity == {k: v * judged_with_errors for k, v in expected.items()}
        if protocol == "mqm":
            assert sum(system.by_category.values()) == len(errors) * judged_with_errors
    # Agreement between annotators against scikit-learn; within one annotator (repeats) perfect.
    f1, kappa = expected_inter_agreement(config)
    assert summary.inter.n_pairs > 0
    assert summary.inter.f1 == pytest.approx(f1)
    assert summary.inter.kappa == pytest.approx(kappa)
    assert summary.inter.f1 < 1
    assert summary.intra.n_pairs > 0
    assert summary.intra.f1 == 1.0
    assert summary.intra.kappa == 1.0

    # The analysis page and the API show the same summary; the API names annotators by
    # pseudonym unless asked for usernames.
    organizer = Client()
    assert organizer.login(username=owner.username, password=PASSWORD)
    page = organizer.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    assert f'id="spans-{config.pk}"' in page
    assert "Agreement on spans" in page
    assert page.count("<rect class=") == sum(
        1 for s in summary.systems for n in s.by_severity.values() if n
    )
    body = organizer.get(reverse("api-campaign-error-spans", args=[campaign.pk])).json()
    [document] = body["protocols"]
    assert document["inter_annotator"]["f1"] == pytest.approx(f1)
    assert {a["annotator"] for a in document["bad_references"]} == {"A001", "A002", "A003"}
    named = organizer.get(
        reverse("api-campaign-error-spans", args=[campaign.pk]), {"names": "real"}
    ).json()
    assert {a["annotator"] for a in named["protocols"][0]["bad_references"]} == {
        u.username for u in annotators
    }
    # Nobody but the campaign's organizers reads it.
    stranger = Client()
    assert stranger.login(username=annotators[0].username, password=PASSWORD)
    assert stranger.get(reverse("api-campaign-error-spans", args=[campaign.pk])).status_code == 403
