"""The ESA study's second round (WMT23 en-de, Appraise) imported with its batches into a new
campaign: every judgment sits on the text its annotator's batch showed (a BAD item's degraded
copy included, with its spans), tutorial, ``#duplicate`` and earlier resubmitted rows are left
out and counted, and each system's ESA and MQM mean is the one worked out here straight from
the CSV and the batches, with the same policy (the last answer by end time).

The data is read from shared/data/esa-wmt23-rc6/ (never copied into the repository), found as
tests/support/shared_data.py says."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import Counter, defaultdict
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from annotation.campaigns.services import campaign_parsed_store
from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.formats import judgment_format, judgments_parse
from annotation.judgment_import.services import judgments_import_parsed
from annotation.models import JudgmentImport, JudgmentSpan, JudgmentValue
from tests.factories import make_campaign, make_user
from tests.support.shared_data import shared_data_or_skip

pytestmark = pytest.mark.django_db

DATA: Path = shared_data_or_skip("esa-wmt23-rc6")
KINDS = {"TGT": "real", "BAD": "bad_ref"}


def release_import(scores: str, batches: str) -> JudgmentImport:
    """The scores file with its batches, as a new campaign: texts, then judgments."""
    upload = UploadFile(scores, gzip.decompress((DATA / f"{scores}.gz").read_bytes()))
    parsed = judgments_parse(upload, max_bytes=10**8)
    layout = judgment_format(parsed.file_format)
    assert layout is not None
    assert layout.texts is not None
    texts, placed = layout.texts(parsed, [UploadFile(batches, (DATA / batches).read_bytes())])
    owner = make_user("release-importer", organizer=True)
    campaign = make_campaign(owner=owner, name=scores, source_language="en", target_language="de")
    campaign_parsed_store(campaign=campaign, parsed=texts, user=owner)
    return judgments_import_parsed(campaign=campaign, parsed=placed, user=owner)


class Expected:
    """What the import should hold, worked out from the CSV and the batches alone."""

    def __init__(self, scores: str, batches: str) -> None:
        text = gzip.decompress((DATA / f"{scores}.gz").read_bytes()).decode()
        rows = list(csv.reader(io.StringIO(text)))
        tasks = json.loads(gzip.decompress((DATA / batches).read_bytes()))
        by_annotator: dict[str, list[int]] = defaultdict(list)
        for n, row in enumerate(rows):
            by_annotator[row[0]].append(n)
        self.counts: Counter[str] = Counter()
        last: dict[tuple[str, str, str], tuple[float, int, dict[str, Any]]] = {}
        for annotator, numbers in by_annotator.items():
            # The annotator's batch: the one where each row's item id is the row's item.
            fitting = [
                {str(item["itemID"]): item for item in task["items"]}
                for task in tasks
                if all(self._same_item(rows[n], task["items"]) for n in numbers)
            ]
            assert len(fitting) == 1, annotator
            for n in numbers:
                row, item = rows[n], fitting[0][rows[n][2]]
                if str(item["mqm"]).startswith("{'tutorial'"):
                    self.counts["tutorial_rows"] += 1
                elif "#duplicate" in item["documentID"]:
                    self.counts["duplicate_rows"] += 1
                else:
                    key = (annotator, row[2], row[1])
                    self.counts["resubmitted_rows"] += key in last
                    answer = (float(row[11]), n, item)
                    last[key] = max(last.get(key, answer), answer, key=lambda a: a[:2])
        self.kept = [(rows[n], item) for _, n, item in sorted(last.values(), key=lambda a: a[1])]

    @staticmethod
    def _same_item(row: list[str], items: list[dict[str, Any]]) -> bool:
        number = int(row[2]) - 1  # the items of a batch are numbered 1, 2, … in order
        return (
            0 <= number < len(items)
            and str(items[number]["itemID"]) == row[2]
            and items[number]["documentID"] == row[7]
            and items[number]["targetID"] == row[1]
            and items[number]["itemType"] == row[3]
        )

    def values(self, score: Any) -> Counter[tuple[str, str, str, float]]:
        """(annotator, text shown, kind, value) of every answer kept."""
        return Counter(
            (row[0], item["targetText"], KINDS[row[3]], round(score(row), 6))
            for row, item in self.kept
        )

    def spans(self) -> Counter[tuple[str, str, str, str]]:
        """(annotator, text shown, characters marked, severity) of every span on the text;
        Appraise counts UTF-16 units of the trimmed text, the end inclusive."""
        found: Counter[tuple[str, str, str, str]] = Counter()
        for row, item in self.kept:
            units = item["targetText"].strip().encode("utf-16-le")
            for span in json.loads(row[9]):
                if span["severity"] == "undecided" or span["start_i"] == "missing":
                    continue
                marked = units[2 * span["start_i"] : 2 * (span["end_i"] + 1)]
                chars = marked.decode("utf-16-le", errors="ignore")
                found[(row[0], item["targetText"], chars, span["severity"])] += 1
        return found

    def system_means(self, score: Any) -> dict[str, float]:
        by_system: dict[str, list[float]] = defaultdict(list)
        for row, _ in self.kept:
            if row[3] == "TGT":
                by_system[row[1]].append(score(row))
        return {system: fmean(values) for system, values in by_system.items()}


def esa_score(row: list[str]) -> float:
    return float(row[6])


def mqm_score(row: list[str]) -> float:
    """Google's weights: major 5, minor 1 (a minor punctuation error 0.1), neutral 0."""
    total = 0.0
    for span in json.loads(row[9]):
        path = span.get("error_type") or []
        if span["severity"] == "major":
            total += 5
        elif span["severity"] == "minor":
            total += 0.1 if path[:2] == ["Linguistic conventions", "Punctuation"] else 1
    return -total


def stored_values(record: JudgmentImport) -> Counter[tuple[str, str, str, float]]:
    annotator = {username: name for name, username in record.summary["annotators"].items()}
    return Counter(
        (annotator[user], text, kind, round(value, 6))
        for user, text, kind, value in JudgmentValue.objects.filter(
            judgment__item__task__config=record.config
        ).values_list("judgment__annotator__username", "output__text", "output__kind", "value")
    )


def stored_spans(record: JudgmentImport) -> Counter[tuple[str, str, str, str]]:
    annotator = {username: name for name, username in record.summary["annotators"].items()}
    return Counter(
        (
            annotator[s.judgment.annotator.username],
            s.output.text,
            s.output.text[s.start : s.end],
            s.severity,
        )
        for s in JudgmentSpan.objects.select_related("judgment__annotator", "output")
        if s.start < len(s.output.text)  # the missing-content marker marks no characters
    )


def stored_means(record: JudgmentImport, criterion: str) -> dict[str, float]:
    by_system: dict[str, list[float]] = defaultdict(list)
    for system, value in JudgmentValue.objects.filter(
        judgment__item__task__config=record.config, output__kind="real", criterion=criterion
    ).values_list("output__system__name", "value"):
        by_system[system].append(value)
    return {system: fmean(values) for system, values in by_system.items()}


@pytest.mark.parametrize(
    ("scores", "batches", "protocol", "criterion", "score"),
    [
        ("240520rc6ESA.scores.csv", "batches_wmt23_en-de_esa.json.gz", "esa", "score", esa_score),
        ("240521rc6ESA.scores.csv", "batches_wmt23_en-de_esa.json.gz", "esa", "score", esa_score),
        ("240521rc6MQM.scores.csv", "batches_wmt23_en-de_mqm.json.gz", "mqm", "mqm", mqm_score),
    ],
)
def test_every_judgment_sits_on_the_text_its_annotators_batch_showed(
    scores: str, batches: str, protocol: str, criterion: str, score: Any
) -> None:
    expected = Expected(scores, batches)
    record = release_import(scores, batches)
    assert record.config.protocol == protocol
    release = record.summary["release"]
    counted = ("tutorial_rows", "duplicate_rows", "resubmitted_rows")
    assert {k: release[k] for k in counted} == {k: expected.counts[k] for k in counted}
    assert release["tutorial_rows"] > 0
    assert release["resubmissions_kept"] == "last"
    assert stored_values(record) == expected.values(score)
    assert stored_spans(record) == expected.spans()
    assert stored_means(record, criterion) == pytest.approx(expected.system_means(score))
    # Each BAD answer with spans keeps them, on its degraded copy (compared above).
    marked = [
        row
        for row, _ in expected.kept
        if row[3] == "BAD" and any(s["severity"] != "undecided" for s in json.loads(row[9]))
    ]
    stored = JudgmentSpan.objects.filter(output__kind="bad_ref").values("judgment").distinct()
    assert len(marked) > 100
    assert stored.count() == len(marked)
