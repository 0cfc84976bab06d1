"""MQM's weights through EvalSite's own Appraise export: a campaign whose MQM config has weights
of its own writes them into its batches (``_mqmWeights``), and the CSV with those batches builds
a campaign whose imported config has the same weights and whose every judgment has the same
score; batches that carry two sets of weights for one import are refused."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections import Counter
from typing import Any

import pytest

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.release import campaign_from_release
from annotation.models import Campaign, JudgmentValue
from annotation.protocols import MQM
from annotation.reports.appraise import appraise_esa_csv
from annotation.reports.appraise_batches import appraise_batches_json
from tests.factories import make_config, make_user
from tests.support.appraise_documents import appraise_documents_campaign
from tests.support.mqm_weights import CUSTOM
from tests.support.screens import answer_every_screen

pytestmark = pytest.mark.django_db

SPANS = [
    {"start": 0, "end": 1, "severity": "major", "category": "accuracy/mistranslation"},
    {"start": 2, "end": 3, "severity": "minor", "category": "fluency/punctuation"},
    {"start": 4, "end": 5, "severity": "neutral", "category": "style"},
    {"start": 6, "end": 7, "severity": "minor", "category": "non-translation"},
]


def judged_campaign() -> tuple[Campaign, dict[int, str]]:
    """An MQM config with CUSTOM weights, one rater's task answered: every other screen with
    SPANS, the others without errors."""
    owner = make_user("weights-exporter", organizer=True)
    # One run per system: the layout has no runs (rows of later runs are not written).
    campaign = appraise_documents_campaign(owner, "MQM weights")
    rater = make_user("weights-exporter-rater")
    campaign.annotators.add(rater)
    config = make_config(
        campaign, MQM, outputs_per_screen=1, items_per_task=8, settings={"weights": CUSTOM}
    )
    screens = itertools.count()  # one output a screen: every other one from the first
    answer_every_screen(
        config, rater, lambda _output: {"spans": SPANS if next(screens) % 2 == 0 else []}
    )
    return campaign, {rater.pk: "R1"}


def scores(campaign: Campaign) -> Counter[tuple[Any, ...]]:
    return Counter(
        JudgmentValue.objects.filter(
            judgment__item__task__config__campaign=campaign, criterion="mqm"
        ).values_list("output__system__name", "judgment__item__segment__source", "value")
    )


def test_custom_weights_travel_in_the_batches_and_every_score_reads_back() -> None:
    campaign, labels = judged_campaign()
    first = scores(campaign)
    # 3 + 0.2 + 0.25 + 10 by hand, on every other screen from the first.
    values = sorted(value for _s, _t, value in first.elements())
    with_errors = (len(values) + 1) // 2
    assert values == pytest.approx([-13.45] * with_errors + [0.0] * (len(values) - with_errors))
    written = appraise_esa_csv(campaign=campaign, labels=labels)
    batches = appraise_batches_json(campaign=campaign, labels=labels)
    assert {json.dumps(b["task"].get("_mqmWeights")) for b in json.loads(batches)} >= {
        json.dumps(CUSTOM)
    }
    owner = make_user("weights-reader", organizer=True)
    again = campaign_from_release(
        owner=owner,
        name="Weights again",
        files=[UploadFile("export.appraise.csv", written.encode())],
        companions=[UploadFile("export.appraise-batches.json", batches.encode())],
    )
    assert again.config.protocol == MQM
    assert again.config.settings["weights"] == CUSTOM
    assert scores(again.campaign) == first


def test_batches_with_two_sets_of_weights_are_refused() -> None:
    campaign, labels = judged_campaign()
    rows = list(csv.reader(io.StringIO(appraise_esa_csv(campaign=campaign, labels=labels))))
    batches = json.loads(appraise_batches_json(campaign=campaign, labels=labels))
    used = {row[12] for row in rows}
    # The same answers by a second rater on copies of the batches with other weights: one
    # imported config cannot hold both.
    copies = [
        {
            "task": {
                **b["task"],
                "batchNo": 1000 + b["task"]["batchNo"],
                "_mqmWeights": {**CUSTOM, "major": 7.0},
            },
            "items": b["items"],
        }
        for b in batches
        if str(b["task"]["batchNo"]) in used
    ]
    rows += [[f"{row[0]}-2", *row[1:12], str(1000 + int(row[12])), *row[13:]] for row in rows]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    owner = make_user("weights-refused", organizer=True)
    with pytest.raises(UploadError) as refused:
        campaign_from_release(
            owner=owner,
            name="Two weights",
            files=[UploadFile("two.csv", buffer.getvalue().encode())],
            companions=[UploadFile("two.json", json.dumps([*batches, *copies]).encode())],
        )
    assert "different MQM weights" in refused.value.problems[0].message
    assert not Campaign.objects.filter(name="Two weights").exists()
