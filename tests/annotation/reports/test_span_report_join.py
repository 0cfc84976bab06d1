"""The span download joins to the judgment download: a span names its output by the judgment
report's columns (protocol, task, item, output, annotator, system, run, item type, merged), so
every span finds its judgment's row; a span of a merged identical output is listed under every
system credited with it, as the judgment report lists the answer."""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ItemOutput, JudgmentSpan
from annotation.protocols import ESA
from tests.factories import PASSWORD, make_config, make_user
from tests.merge_factories import MERGE_SYSTEMS, make_merge_campaign
from tests.support.screens import answer_every_screen

pytestmark = pytest.mark.django_db

JOIN = ("protocol", "task", "item", "output", "annotator", "system", "run", "item_type", "merged")


def answer_for(output: ItemOutput, rater: int) -> dict[str, Any]:
    """A score from the text, a major error on the first three characters of every output
    rater 0 sees and of every other output rater 1 sees, and a minor one on the last
    character of merged outputs."""
    spans = []
    if (rater == 0 or output.position % 2 == 0) and len(output.text) >= 3:
        spans.append({"start": 0, "end": 3, "severity": "major"})
    if output.credits.exists():
        spans.append({"start": len(output.text) - 1, "end": len(output.text), "severity": "minor"})
    return {"score": float(len(output.text) % 101), "spans": spans}


def judged_esa_campaign(owner: Any) -> Any:
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign,
        ESA,
        merge_identical=True,
        items_per_task=100,
        outputs_per_screen=3,
        annotations_per_task=2,
        qc_bad_reference=20,
        qc_repeat=20,
    )
    raters = [make_user(f"esa-rater{n}") for n in range(2)]
    campaign.annotators.add(*raters)
    for n, rater in enumerate(raters):
        answer_every_screen(config, rater, lambda o, n=n: answer_for(o, n))
    return campaign


def download(owner: Any, campaign: Any, report: str) -> list[dict[str, str]]:
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    response = client.get(reverse(f"campaign_report_{report}", args=[campaign.pk, "csv"]))
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response).decode())))


def test_every_span_finds_its_judgment_under_every_credited_system(owner: Any) -> None:
    campaign = judged_esa_campaign(owner)
    judgments = download(owner, campaign, "judgments")
    spans = download(owner, campaign, "spans")
    keys = Counter(tuple(row[c] for c in JOIN) for row in judgments)
    # One judgment row per key (ESA has one criterion): the join is one to one.
    assert set(keys.values()) == {1}
    for span in spans:
        assert keys[tuple(span[c] for c in JOIN)] == 1, span
    # Each judgment row's spans (its compact cell) are the span rows under its key.
    by_key = Counter(tuple(row[c] for c in JOIN) for row in spans)
    for row in judgments:
        cell = row["spans"]
        assert by_key[tuple(row[c] for c in JOIN)] == (len(cell.split(";")) if cell else 0)
    # QC copies are among them, named as the judgment report names them.
    assert {s["item_type"] for s in spans} >= {"SYSTEM", "REPEAT", "BAD_REF"}

    # A merged output's spans: one row per credited system, marked with the shown output.
    merged = [s for s in spans if s["merged"]]
    assert merged
    credited = {
        str(o.pk): {o.system.name, *o.credits.values_list("system__name", flat=True)}
        for o in ItemOutput.objects.filter(credits__isnull=False).distinct()
    }
    groups: dict[tuple[str, ...], set[str]] = {}
    for s in merged:
        groups.setdefault((s["merged"], s["annotator"], s["start"]), set()).add(s["system"])
    for (output, _annotator, _start), systems in groups.items():
        assert systems == credited[output]
    # Every stored span once per system credited with its output; other rows unmarked.
    stored = sum(
        1 + ItemOutput.objects.get(pk=output).credits.count() if kind == "real" else 1
        for output, kind in JudgmentSpan.objects.values_list("output_id", "output__kind")
    )
    assert len(spans) == stored
    assert {s["system"] for s in spans if s["item_type"] == "SYSTEM"} == set(MERGE_SYSTEMS)
