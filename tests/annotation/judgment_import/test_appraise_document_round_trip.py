"""Document scores through EvalSite's own Appraise export: an ESA campaign with document scores
(Appraise's whole-document rows of ``tests/support/appraise_documents.py`` imported) writes one
whole-document row per document score and its item in the batches, and the CSV with its
batches builds a campaign whose document scores, segment scores and system means are the
first campaign's."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from typing import Any

import pytest

from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.release import campaign_from_release
from annotation.judgment_import.services import judgments_import
from annotation.models import Campaign, DocumentJudgment, JudgmentValue
from annotation.reports.appraise import appraise_esa_csv
from annotation.reports.appraise_batches import appraise_batches_json
from tests.factories import make_user
from tests.support.appraise_documents import (
    MEANS,
    ROWS,
    SOURCE,
    appraise_documents_campaign,
)

pytestmark = pytest.mark.django_db


def first_campaign() -> tuple[Campaign, dict[int, str]]:
    owner = make_user("appraise-doc-exporter", organizer=True)
    made = appraise_documents_campaign(owner, "Appraise documents")
    upload = UploadFile("wmt24-esa-documents.csv", ("\n".join(ROWS) + "\n").encode(), "")
    record = judgments_import(
        campaign=made, upload=upload, user=None, options=ImportOptions(document_score=True)
    )
    return made, names(record.campaign, record.summary)


def names(campaign: Campaign, summary: dict[str, Any]) -> dict[int, str]:
    """Each imported annotator's account by the name the file gives them."""
    accounts = dict(campaign.annotators.values_list("username", "pk"))
    return {accounts[user]: name for name, user in summary["annotators"].items()}


def document_scores(campaign: Campaign, labels: dict[int, str]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (labels[annotator], system, document, kind, score)
        for annotator, system, document, kind, score in DocumentJudgment.objects.filter(
            document__campaign=campaign
        ).values_list("annotator_id", "system__name", "document__external_id", "kind", "score")
    )


def segment_scores(campaign: Campaign, labels: dict[int, str]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (labels[annotator], system, segment, value)
        for annotator, system, segment, value in JudgmentValue.objects.filter(
            judgment__item__task__config__campaign=campaign
        ).values_list(
            "judgment__annotator_id",
            "output__system__name",
            "judgment__item__segment__source",
            "value",
        )
    )


def test_document_scores_are_exported_as_whole_document_rows_and_read_back() -> None:
    campaign, labels = first_campaign()
    written = appraise_esa_csv(campaign=campaign, labels=labels)
    rows = list(csv.reader(io.StringIO(written)))
    whole = [row for row in rows if row[8] == "True"]
    assert len(whole) == DocumentJudgment.objects.count() == 5
    # Each whole-document row: its score, no spans, an item id no segment's line takes, and an
    # item of its batch marked as a complete document.
    given = [r.split(",") for r in ROWS if ",True," in r]
    assert sorted((r[0], r[1], r[7], r[6]) for r in whole) == sorted(
        (r[0], r[1], r[7], r[6]) for r in given
    )
    assert {r[9] for r in whole} == {"[]"}
    assert {int(r[2]) for r in whole} == {len(SOURCE) + 1, len(SOURCE) + 2}
    batches = json.loads(appraise_batches_json(campaign=campaign, labels=labels))
    complete = {
        (str(b["task"]["batchNo"]), str(i["itemID"]), i["documentID"])
        for b in batches
        for i in b["items"]
        if i["isCompleteDocument"]
    }
    assert {(r[12], r[2], r[7]) for r in whole} <= complete

    owner = make_user("appraise-doc-reader", organizer=True)
    again = campaign_from_release(
        owner=owner,
        name="Appraise documents again",
        files=[UploadFile("export.appraise.csv", written.encode())],
        companions=[
            UploadFile(
                "export.appraise-batches.json",
                appraise_batches_json(campaign=campaign, labels=labels).encode(),
            )
        ],
    )
    assert again.config.document_score
    labels_again = names(again.campaign, again.summary)
    assert document_scores(again.campaign, labels_again) == document_scores(campaign, labels)
    assert segment_scores(again.campaign, labels_again) == segment_scores(campaign, labels)
    means: dict[str, list[int]] = {}
    for system, score in DocumentJudgment.objects.filter(
        document__campaign=again.campaign
    ).values_list("system__name", "score"):
        means.setdefault(system, []).append(score)
    assert {s: sum(v) / len(v) for s, v in means.items()} == pytest.approx(MEANS)
