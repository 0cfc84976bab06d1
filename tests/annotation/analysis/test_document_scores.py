"""The analysis of document-level scores in the app: per protocol, per system the mean raw and z
score over the windows shown (hand-computed here from the stored rows), the annotators the
segment-level analysis includes, QC windows left out; the analysis page, the dashboard, the API
and the
judgment report's document-level rows (after every segment row, never in the segment-level
analysis)."""

from __future__ import annotations

import csv
import io
import json
import statistics
import uuid
from collections import defaultdict
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.analysis.documents import campaign_document_scores
from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.models import (
    AnnotatorDecision,
    Campaign,
    DocumentJudgment,
    Item,
    ItemKind,
    ProtocolConfig,
)
from annotation.reports.stream import judgment_report_stream
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db


def scored_campaign(owner: Any, annotator: Any) -> tuple[Campaign, list[DocumentJudgment]]:
    """An ESA campaign of document screens whose first task two annotators scored: the first
    20 + (7i mod 75) on its i-th screen, the second 95 − (5i mod 80) (real screens and one
    bad reference)."""
    campaign = make_rich_campaign(owner=owner)
    second = make_user("second")
    campaign.annotators.add(annotator, second)
    config = make_config(
        campaign,
        "esa",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=4,
        document_score=True,
        items_per_task=60,
        annotations_per_task=2,
    )
    rows = []
    for who, value in (
        (annotator, lambda i: 20 + (7 * i) % 75),
        (second, lambda i: 95 - (5 * i) % 80),
    ):
        assignment = task_assign_next(config=config, annotator=who)
        assert assignment is not None
        assert assignment.task.position == 0
        firsts = [
            i
            for i in Item.objects.filter(task=assignment.task).order_by("position")
            if i.screen == i.position and i.kind in (ItemKind.REAL, ItemKind.BAD_REFERENCE)
        ]
        assert any(i.kind == ItemKind.BAD_REFERENCE for i in firsts)
        for n, item in enumerate(firsts):
            output = item.outputs.get()
            rows.append(
                DocumentJudgment.objects.create(
                    annotator=who,
                    screen=item,
                    assignment=assignment,
                    document=item.segment.document,
                    system=output.system,
                    run=output.run,
                    kind=item.kind,
                    score=value(n),
                    submission_id=uuid.uuid4(),
                    submitted_at=timezone.now(),
                )
            )
    return campaign, rows


def hand_z(rows: list[DocumentJudgment]) -> dict[int, float]:
    """z of every row: (x − mean) / sample SD over the annotator's real rows."""
    real: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        if r.kind == ItemKind.REAL:
            real[r.annotator_id].append(r.score)
    return {
        r.pk: (r.score - statistics.mean(real[r.annotator_id]))
        / statistics.stdev(real[r.annotator_id])
        for r in rows
    }


def hand_means(rows: list[DocumentJudgment], values: dict[int, float]) -> dict[str, float]:
    """Per system: the mean over its windows of the mean of the window's real rows."""
    windows: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.kind == ItemKind.REAL:
            windows[r.system.name][r.screen.segment_id].append(values[r.pk])
    return {
        system: statistics.mean(statistics.mean(v) for v in by_window.values())
        for system, by_window in windows.items()
    }


def test_system_document_scores_are_the_hand_computed_means(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign, rows = scored_campaign(owner, annotator)
    (summary,) = campaign_document_scores(campaign=campaign, settings=AnalysisSettings())
    raw = hand_means(rows, {r.pk: float(r.score) for r in rows})
    z = hand_means(rows, hand_z(rows))
    assert summary.n_scores == len(rows)
    assert summary.n_annotators == summary.n_included == 2
    by_name = {s.name: s for s in summary.systems}
    assert set(by_name) == set(raw)
    for name, system in by_name.items():
        assert system.mean_raw == pytest.approx(raw[name])
        assert system.mean_z == pytest.approx(z[name])
        assert system.raw_low <= system.mean_raw <= system.raw_high
    # Ranked by mean z, best first.
    assert [s.mean_z for s in summary.systems] == pytest.approx(sorted(z.values(), reverse=True))
    assert [s.position for s in summary.systems] == list(range(1, len(raw) + 1))


def test_an_excluded_annotators_document_scores_do_not_enter(owner, annotator) -> None:  # type: ignore[no-untyped-def]
    campaign, rows = scored_campaign(owner, annotator)
    AnnotatorDecision.objects.create(
        campaign=campaign, annotator=rows[-1].annotator, included=False, reason="test"
    )
    (summary,) = campaign_document_scores(campaign=campaign, settings=AnalysisSettings())
    mine = [r for r in rows if r.annotator_id == annotator.pk]
    raw = hand_means(mine, {r.pk: float(r.score) for r in mine})
    assert summary.n_included == 1
    assert {s.name: s.mean_raw for s in summary.systems} == pytest.approx(raw)


def test_the_report_ends_with_document_rows_and_the_analysis_has_no_document_criterion(  # type: ignore[no-untyped-def]
    owner, annotator
) -> None:
    campaign, rows = scored_campaign(owner, annotator)
    z = hand_z(rows)
    text = b"".join(judgment_report_stream(campaign=campaign, file_format="csv")).decode()
    table = list(csv.DictReader(io.StringIO(text)))
    documents = [r for r in table if r["criterion"] == "document"]
    assert len(documents) == len(rows)
    assert table[-len(rows) :] == documents
    expected = sorted((r.score, round(z[r.pk], 9)) for r in rows)
    assert sorted((int(float(r["raw"])), round(float(r["z"]), 9)) for r in documents) == expected
    assert {r["output"] for r in documents} == {""}
    assert {r["segment"] for r in documents} == {""}
    assert {r["item_type"] for r in documents} == {"SYSTEM", "BAD_REF"}
    lines = b"".join(judgment_report_stream(campaign=campaign, file_format="jsonl")).decode()
    parsed = [json.loads(line) for line in lines.splitlines()]
    assert [p["output"] for p in parsed if p["criterion"] == "document"] == [None] * len(rows)
    assert all(
        c.criterion != "document" for c in campaign_analysis_compute(campaign=campaign).criteria
    )


def test_the_analysis_page_the_dashboard_and_the_api_show_the_document_scores(
    owner, annotator
) -> None:  # type: ignore[no-untyped-def]
    campaign, _rows = scored_campaign(owner, annotator)
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    html = client.get(reverse("campaign_analysis", args=[campaign.pk])).content.decode()
    assert "Document-level scores" in html
    assert 'class="data document-systems"' in html
    dashboard = client.get(reverse("campaign_dashboard", args=[campaign.pk])).content.decode()
    assert 'class="data document-systems"' in dashboard
    body = client.get(reverse("api-campaign-document-scores", args=[campaign.pk])).json()
    (protocol,) = body["protocols"]
    assert protocol["n_scores"] == 2 * protocol["n_scores"] // 2
    assert {s["name"] for s in protocol["systems"]}
