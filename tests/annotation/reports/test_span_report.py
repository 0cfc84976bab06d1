"""The error-span report: one row per stored span in CSV, TSV and JSONL, and Google's MQM TSV,
whose rows — read back with Google's weights — give each system the MQM the judgments hold."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ItemKind, ItemOutput, JudgmentSpan, JudgmentValue
from annotation.reports.spans import MQM_TSV_COLUMNS, SPAN_COLUMNS, google_category
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user
from tests.support.screens import answer_every_screen

pytestmark = pytest.mark.django_db

# Google's weights as its MQM files are scored (Freitag et al., 2021).
GOOGLE_WEIGHT = {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0}


def spans_for(output: ItemOutput) -> list[dict[str, Any]]:
    """nmt-large: none; every other system a major mistranslation of its first word; rbmt-toy
    also a minor punctuation error on its last character, an omission (the marker) and a
    non-translation of its second word."""
    text = output.text
    system = output.system.name if output.system else ""
    if output.kind == ItemKind.REFERENCE or system == "nmt-large":
        return []
    first = re.match(r"\S+", text)
    assert first is not None
    spans = [
        {"start": 0, "end": first.end(), "severity": "major", "category": "accuracy/mistranslation"}
    ]
    if system == "rbmt-toy":
        second = list(re.finditer(r"\S+", text))[1]
        spans += [
            {
                "start": second.start(),
                "end": second.end(),
                "severity": "minor",
                "category": "non-translation",
            },
            {
                "start": len(text) - 1,
                "end": len(text),
                "severity": "minor",
                "category": "fluency/punctuation",
            },
            {
                "start": len(text),
                "end": len(text) + 1,
                "severity": "major",
                "category": "accuracy/omission",
            },
        ]
    return spans


def judged_mqm_campaign():  # type: ignore[no-untyped-def]
    owner = make_user("span-reporter", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    raters = [make_user(f"span-rater{n}") for n in range(2)]
    campaign.annotators.add(*raters)
    config = make_config(
        campaign, "mqm", outputs_per_screen=1, items_per_task=8, annotations_per_task=2
    )
    for rater in raters:
        answer_every_screen(config, rater, lambda o: {"spans": spans_for(o)})
    return owner, campaign


def download(owner, campaign, fmt: str) -> str:  # type: ignore[no-untyped-def]
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    response = client.get(reverse("campaign_report_spans", args=[campaign.pk, fmt]))
    assert response.status_code == 200
    assert "spans" in response["Content-Disposition"]
    return response.content.decode()


def test_the_span_rows_are_the_stored_spans_with_their_text() -> None:
    owner, campaign = judged_mqm_campaign()
    stored = JudgmentSpan.objects.count()
    assert stored > 0
    rows = list(csv.DictReader(io.StringIO(download(owner, campaign, "csv"))))
    assert tuple(rows[0]) == SPAN_COLUMNS
    assert len(rows) == stored
    # An output named as the judgment report names it: task, item and slot of a protocol.
    texts = {
        (config, str(task + 1), str(item + 1), str(slot + 1)): text
        for config, task, item, slot, text in ItemOutput.objects.values_list(
            "item__task__config__name", "item__task__position", "item__position", "position", "text"
        )
    }
    for row in rows:
        start, end = int(row["start"]), int(row["end"])
        text = texts[(row["protocol"], row["task"], row["item"], row["output"])]
        assert row["text"] == ("[missing]" if start == len(text) else text[start:end])
        assert row["annotator"] in {"A001", "A002"}
    as_json = [json.loads(line) for line in download(owner, campaign, "jsonl").splitlines()]
    assert [(r["output"], r["start"], r["category"]) for r in as_json] == [
        (int(r["output"]), int(r["start"]), r["category"]) for r in rows
    ]
    tsv = download(owner, campaign, "tsv").splitlines()
    assert tsv[0].split("\t") == list(SPAN_COLUMNS)
    assert len(tsv) == stored + 1


def test_googles_mqm_tsv_gives_each_system_the_mqm_of_its_judgments() -> None:
    owner, campaign = judged_mqm_campaign()
    lines = download(owner, campaign, "mqm.tsv").splitlines()
    assert lines[0].split("\t") == list(MQM_TSV_COLUMNS)
    per_output: dict[tuple[str, str, str], float] = defaultdict(float)
    for line in lines[1:]:
        system, _doc, _doc_id, seg_id, rater, _source, target, category, severity = line.split("\t")
        key = (system, seg_id, rater)
        if category == "No-error":
            assert "<v>" not in target
            per_output[key] += 0.0
            continue
        if category == "Non-translation!":
            weight = 25.0
        elif category == "Fluency/Punctuation" and severity == "Minor":
            weight = 0.1
        else:
            weight = GOOGLE_WEIGHT[severity]
        per_output[key] += weight
        if category != "Accuracy/Omission":
            assert target.count("<v>") == target.count("</v>") == 1
    by_system: dict[str, list[float]] = defaultdict(list)
    for (system, _seg, _rater), score in per_output.items():
        by_system[system].append(score)
    stored: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(
        criterion="mqm", output__kind=ItemKind.REAL
    ).values_list("output__system__name", "value"):
        stored[system].append(-value)
    assert set(by_system) == set(stored) == {"nmt-large", "nmt-base", "smt-phrase", "rbmt-toy"}
    for system, scores in by_system.items():
        assert sum(scores) / len(scores) == pytest.approx(sum(stored[system]) / len(stored[system]))
    assert sum(by_system["nmt-large"]) == 0.0
    assert set(by_system["rbmt-toy"]) == {5 + 25 + 0.1 + 5}


def test_google_category_names() -> None:
    assert google_category("accuracy/mistranslation") == "Accuracy/Mistranslation"
    assert google_category("fluency/character-encoding") == "Fluency/Character encoding"
    assert google_category("non-translation") == "Non-translation!"
    assert google_category("locale-convention") == "Locale convention"


def test_the_api_serves_the_same_report_and_refuses_unknown_formats() -> None:
    owner, campaign = judged_mqm_campaign()
    client = Client()
    assert client.login(username=owner.username, password=PASSWORD)
    api = client.get(reverse("api-campaign-report-spans", args=[campaign.pk, "csv"]))
    assert api.status_code == 200
    assert api.content.decode() == download(owner, campaign, "csv")
    assert (
        client.get(reverse("api-campaign-report-spans", args=[campaign.pk, "xlsx"])).status_code
        == 404
    )
