"""A kind with a new answer shape, added in one module (``post_edit_kind.py``) and registered by
a fixture, runs through the product: the submit takes its post-edited texts and refuses a
malformed one, the kind scores them by HTER (checked against sacreBLEU's TER), the QC items
work (a degraded copy needs more edits), the analysis ranks the systems by HTER, and the
reports and the dashboard carry it. No module of EvalSite was edited for it."""

from __future__ import annotations

import csv
import io
import uuid
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from sacrebleu.metrics import TER

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.models import ItemKind, ItemOutput, Judgment, JudgmentValue, Reference
from annotation.protocols import PROTOCOLS, Protocol, register
from annotation.reports.stream import judgment_report_stream
from annotation.reports.systems import system_report_csv
from tests.annotation.protocols.post_edit_kind import POST_EDITING
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user


@pytest.fixture
def post_editing() -> Iterator[Protocol]:
    register(POST_EDITING)
    try:
        yield POST_EDITING
    finally:
        del PROTOCOLS[POST_EDITING.key]


def _post_edit(output: ItemOutput) -> str:
    """What the simulated post-editor makes of an output: the segment's first reference (a
    degraded copy too: the editor restores the meaning)."""
    return output.item.segment.references.order_by("index")[0].text


def _submit(client: Client, assignment: str, item: int, answer: Any) -> Any:
    return client.post(
        reverse("api-assignment-submit", args=[assignment]),
        {"item": item, "revision": 0, "submission_id": str(uuid.uuid4()), "answer": answer},
        content_type="application/json",
    )


def _post_edit_tasks(client: Client, config_id: int, tasks: int) -> None:
    for _ in range(tasks):
        taken = client.post(reverse("api-config-take", args=[config_id]))
        assert taken.status_code == 200
        assignment = taken.json()["id"]
        while (
            current := client.get(reverse("api-assignment-current", args=[assignment]))
        ).status_code != 410:
            body = current.json()
            assert body["criteria"] == []  # nothing asked on a scale
            outputs = ItemOutput.objects.select_related("item__segment").filter(
                pk__in=[o["id"] for o in body["outputs"]]
            )
            answer = {str(o.pk): {"post_edit": _post_edit(o)} for o in outputs}
            sent = _submit(client, assignment, body["item"], answer)
            assert sent.status_code == 201, sent.content


def _post_editing_campaign(kind: Protocol) -> tuple[Any, Any, list[Any]]:
    """A campaign with a config of the kind (degraded copies among its items, no repeats or
    references shown), its owner and three annotators."""
    owner = make_user("pe-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotators = [make_user(f"pe-rater{n}") for n in range(3)]
    campaign.annotators.add(*annotators)
    config = make_config(
        campaign,
        kind.key,
        items_per_task=12,
        outputs_per_screen=1,
        annotations_per_task=3,
        qc_bad_reference=25,
        qc_repeat=0,
        qc_reference=0,
    )
    return config, owner, annotators


@pytest.mark.django_db
def test_a_post_edit_that_is_no_text_is_refused(post_editing: Protocol) -> None:
    """A post-edit that is not a text (the API's part check), or is empty (the kind's own
    check), is refused, naming what is wrong; nothing is stored."""
    config, _owner, annotators = _post_editing_campaign(post_editing)
    client = Client()
    assert client.login(username=annotators[0].username, password=PASSWORD)
    taken = client.post(reverse("api-config-take", args=[config.pk])).json()["id"]
    body = client.get(reverse("api-assignment-current", args=[taken])).json()
    output = str(body["outputs"][0]["id"])
    wrong = _submit(client, taken, body["item"], {output: {"post_edit": 3}})
    assert wrong.status_code == 400
    assert wrong.json()["errors"] == {
        "answer": {output: {"post_edit": ["A post-edited text is required."]}}
    }
    empty = _submit(client, taken, body["item"], {output: {"post_edit": " "}})
    assert empty.status_code == 400
    assert empty.json()["detail"] == "Output 1: give the post-edited translation."
    assert not Judgment.objects.exists()


def _stored_hter(judgments: Any) -> dict[str, list[float]]:
    """Checks each stored judgment against sacreBLEU's TER of its shown output against the
    post-edit, and that every degraded copy needed more edits than its original; the HTER
    of the real outputs by system."""
    ter = TER()
    hter_by_system: dict[str, list[float]] = defaultdict(list)
    bad_above_original = []
    for value in JudgmentValue.objects.select_related(
        "judgment", "output__item__segment", "output__system", "output__original"
    ).filter(judgment__in=judgments):
        shown = value.output
        edited = _post_edit(shown)
        assert value.criterion == "hter"
        assert value.judgment.answer[str(shown.pk)] == {"hter": value.value, "post_edit": edited}
        expected = ter.sentence_score(shown.text, [edited]).score
        assert value.value == pytest.approx(expected, abs=1e-12)
        if shown.kind == ItemKind.REAL:
            hter_by_system[shown.system.name].append(expected)
        else:
            assert shown.kind == ItemKind.BAD_REFERENCE
            assert shown.original is not None
            original = ter.sentence_score(shown.original.text, [edited]).score
            bad_above_original.append(expected > original)
    assert bad_above_original
    assert all(bad_above_original)
    return hter_by_system


@pytest.mark.django_db
def test_a_post_editing_kind_runs_from_submit_to_dashboard(post_editing: Protocol) -> None:
    config, owner, annotators = _post_editing_campaign(post_editing)
    campaign = config.campaign
    for annotator in annotators:
        client = Client()
        assert client.login(username=annotator.username, password=PASSWORD)
        _post_edit_tasks(client, config.pk, tasks=2)
    judgments = Judgment.objects.filter(item__task__config=config)
    assert judgments.count() == 72

    # Stored: the post-edit in the answer, HTER as sacreBLEU's TER of the shown output
    # against it, per output.
    hter_by_system = _stored_hter(judgments)

    # Analysis: QC passes (degraded copies need more edits), systems ranked by HTER, lowest
    # first, each system's mean the plain mean of its outputs' HTER.
    analysis = campaign_analysis_compute(campaign=campaign)
    [criterion] = analysis.criteria
    assert (criterion.protocol, criterion.criterion, criterion.kind) == (
        post_editing.key,
        "hter",
        "scores",
    )
    assert {a.qc_status for a in criterion.annotators} == {"passed"}
    means = {name: float(np.mean(values)) for name, values in hter_by_system.items()}
    ranked = sorted(criterion.ranked_systems, key=lambda s: s.position)
    assert [s.name for s in ranked] == sorted(means, key=means.__getitem__)
    for system in ranked:
        assert system.mean_raw == pytest.approx(means[system.name], abs=1e-9)

    # Reports: the system report by HTER, the judgment report with each post-edit.
    systems = list(csv.DictReader(io.StringIO(system_report_csv(analysis))))
    assert {row["criterion"] for row in systems} == {"hter"}
    assert [row["system"] for row in systems] == [s.name for s in ranked]
    report = b"".join(judgment_report_stream(campaign=campaign, file_format="csv")).decode()
    rows = list(csv.DictReader(io.StringIO(report)))
    assert len(rows) == 72
    first_references = {
        (r.segment.document.external_id, r.segment.external_id): r.text
        for r in Reference.objects.filter(
            segment__document__campaign=campaign, index=0
        ).select_related("segment__document")
    }
    for row in rows:
        # The post-edit the annotator gave is the segment's first reference here.
        assert row["answer"] == first_references[(row["document"], row["segment"])]
        assert row["criterion"] == "hter"

    # The analysis page and the dashboard show the criterion.
    organizer = Client()
    assert organizer.login(username=owner.username, password=PASSWORD)
    page = organizer.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    assert "HTER" in page
    analysis_run_sync(campaign=campaign, user=owner)
    dashboard = organizer.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert "HTER" in dashboard
    for system in ranked:
        assert system.name in dashboard
