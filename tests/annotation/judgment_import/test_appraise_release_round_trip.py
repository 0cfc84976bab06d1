"""Appraise's releases of the ESA study's second round (shared/data/esa-wmt23-rc6/) read back
from EvalSite's own export: the scores with their batches build a campaign, the campaign's
Appraise CSV and batches (the span report's ``appraise.csv`` and ``appraise-batches.json``)
build a second one, and every judgment (annotator, system, document, segment, item type,
score) and every span (the characters it marks on the very text shown, a bad reference's
degraded copy included, its severity and category) are the first campaign's, as is every
system's mean."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter, defaultdict
from pathlib import Path
from statistics import fmean

import pytest
from django.test import Client
from django.urls import reverse

from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.release import campaign_from_release
from annotation.models import Campaign, JudgmentImport, JudgmentSpan, JudgmentValue
from annotation.reports.appraise import appraise_esa_csv
from evalsite.formatting import FORMULA_STARTS
from tests.factories import PASSWORD, make_user
from tests.support.shared_data import shared_data_or_skip

pytestmark = pytest.mark.django_db

DATA: Path = shared_data_or_skip("esa-wmt23-rc6")


def release(name: str, scores: UploadFile, batches: UploadFile) -> JudgmentImport:
    owner = make_user(f"organizer-{name}", organizer=True)
    return campaign_from_release(owner=owner, name=name, files=[scores], companions=[batches])


def names(record: JudgmentImport) -> dict[int, str]:
    """Each imported annotator's account by the name the release gives them."""
    username = record.summary["annotators"]
    accounts = dict(record.campaign.annotators.values_list("username", "pk"))
    return {accounts[user]: name for name, user in username.items()}


def judgments(record: JudgmentImport) -> Counter[tuple[object, ...]]:
    """(annotator, system, document, segment, item type, criterion, value) of every answer."""
    name = names(record)
    return Counter(
        (name[user], system, document, segment, kind, criterion, round(value, 9))
        for user, system, document, segment, kind, criterion, value in JudgmentValue.objects.filter(
            judgment__item__task__config__campaign=record.campaign
        ).values_list(
            "judgment__annotator_id",
            "output__system__name",
            "judgment__item__segment__document__external_id",
            "judgment__item__segment__external_id",
            "output__kind",
            "criterion",
            "value",
        )
    )


def spans(record: JudgmentImport) -> Counter[tuple[object, ...]]:
    """(annotator, system, segment, item type, text shown, characters marked, where, severity,
    category) of every span."""
    name = names(record)
    return Counter(
        (
            name[s.judgment.annotator_id],
            s.output.system.name if s.output.system else None,
            s.output.item.segment.external_id,
            s.output.kind,
            s.output.text,
            s.output.text[s.start : s.end],
            (s.start, s.end),
            s.severity,
            s.category,
        )
        for s in JudgmentSpan.objects.filter(
            judgment__item__task__config__campaign=record.campaign
        ).select_related("judgment", "output__system", "output__item__segment")
    )


def system_means(campaign: Campaign, criterion: str) -> dict[str, float]:
    by_system: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(
        judgment__item__task__config__campaign=campaign, output__kind="real", criterion=criterion
    ).values_list("output__system__name", "value"):
        by_system[system].append(value)
    return {system: fmean(values) for system, values in by_system.items()}


@pytest.mark.parametrize(
    ("scores", "batches", "criterion"),
    [
        ("240520rc6ESA.scores.csv", "batches_wmt23_en-de_esa.json.gz", "score"),
        ("240521rc6MQM.scores.csv", "batches_wmt23_en-de_mqm.json.gz", "mqm"),
    ],
)
def test_the_campaigns_appraise_csv_and_batches_read_back_every_judgment_and_span(
    scores: str, batches: str, criterion: str
) -> None:
    first = release(
        "rc6",
        UploadFile(scores, gzip.decompress((DATA / f"{scores}.gz").read_bytes())),
        UploadFile(batches, (DATA / batches).read_bytes()),
    )
    labels = names(first)
    written = appraise_esa_csv(campaign=first.campaign, labels=labels)
    rows = list(csv.reader(io.StringIO(written)))
    assert {len(row) for row in rows} == {14}
    assert not [c for row in rows for c in (row[0], row[1], row[7]) if c.startswith(FORMULA_STARTS)]
    client = Client()
    assert client.login(username=first.campaign.owner.username, password=PASSWORD)
    download = client.get(
        reverse("campaign_report_spans", args=[first.campaign.pk, "appraise-batches.json"])
    )
    assert download.status_code == 200
    assert download["Content-Type"].startswith("application/json")
    shown = download.content.decode()
    # Every row's batch holds its item: the row's item id, type, document and system.
    items = {
        (str(task["task"]["batchNo"]), str(item["itemID"]), item["itemType"], item["documentID"])
        for task in json.loads(shown)
        for item in task["items"]
    }
    assert {(row[12], row[2], row[3], row[7]) for row in rows} <= items

    again = release(
        "rc6 again",
        UploadFile("export.appraise.csv", written.encode()),
        UploadFile("export.appraise-batches.json", shown.encode()),
    )
    assert again.config.protocol == first.config.protocol
    assert again.summary["rows"] == first.summary["rows"] == len(rows)
    assert judgments(again) == judgments(first)
    assert spans(again) == spans(first)
    bad_spans = [key for key, n in spans(first).items() if key[3] == "bad_ref"]
    assert len(bad_spans) > 200
    means = system_means(first.campaign, criterion)
    assert len(means) > 5
    assert system_means(again.campaign, criterion) == pytest.approx(means, abs=1e-12)
