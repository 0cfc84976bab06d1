"""Appraise's batches written here by hand, small enough to check by eye: the rows land on the
items of the one batch that holds them all (an item id counts within its batch), tutorial,
duplicate and earlier resubmitted rows are left out and counted, a BAD item's spans sit on its
degraded copy, a whole-document item becomes a document score; a batch that several fit alike,
an item id in no batch, a row that is not its item and a text that two items give two ways are
refused, naming the row (or the two items)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from annotation.campaigns.services import campaign_parsed_store
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.appraise_batches import appraise_batch_texts
from annotation.judgment_import.formats import judgments_parse
from annotation.judgment_import.services import judgments_import_parsed
from annotation.models import DocumentJudgment, JudgmentImport, JudgmentSpan, JudgmentValue
from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db

SOURCES = {1: "Ein Haus.", 2: "Zwei 🚗 Autos."}
TARGETS = {
    ("A", 1): "A house.",
    ("A", 2): "Two 🚗 cars.",
    ("B", 1): "One house.",
    ("B", 2): "Two cars.",
}
DEGRADED = "A mouse house."  # the BAD copy of A's first segment


def item(item_id: int, system: str, segment: int, **more: Any) -> dict[str, Any]:
    """A batch item of document d1 as WMT's batches write it."""
    return {
        "itemID": item_id,
        "itemType": more.get("kind", "TGT"),
        "documentID": f"d1#{system}{more.get('suffix', '')}",
        "sourceID": "test",
        "targetID": system,
        "sourceText": SOURCES[segment],
        "targetText": more.get("target", TARGETS[(system, segment)]),
        "isCompleteDocument": more.get("whole", False),
        "mqm": "[]",
        "_item": f"{system} | {segment} | d1",
    }


TUTORIAL = {
    "itemID": 1,
    "itemType": "TGT",
    "documentID": "tutorial",
    "sourceID": "tutorial",
    "targetID": "tutorial",
    "sourceText": "Der Hund.",
    "targetText": "The dog.",
    "isCompleteDocument": False,
    "mqm": "{'tutorial': {'instruction': 'Mark nothing.'}}",
}
BATCH_1 = [
    TUTORIAL,
    item(2, "A", 1),
    item(3, "A", 2),
    item(4, "B", 1),
    item(5, "B", 2),
    item(6, "A", 1, kind="BAD", suffix="#bad1", target=DEGRADED),
    item(7, "A", 1, suffix="#duplicate1"),
]
BATCH_2 = [TUTORIAL, item(2, "B", 1), item(3, "B", 2), item(4, "A", 1), item(5, "A", 2)]


def batches(*tasks: list[dict[str, Any]]) -> UploadFile:
    data = [
        {"task": {"batchNo": n, "requiredAnnotations": 1}, "items": items}
        for n, items in enumerate(tasks, start=1)
    ]
    return UploadFile("batches.json", json.dumps(data).encode())


def span(start: Any, end: Any, severity: str = "minor") -> dict[str, Any]:
    return {"start_i": start, "end_i": end, "severity": severity, "error_type": None}


def row(user: str, system: str, item_id: int, score: int, **more: Any) -> str:
    """A row of Appraise's ESA export; ``end`` its end time."""
    document = more.get("document", f"d1#{system}{more.get('suffix', '')}")
    spans = '"' + json.dumps(more.get("spans", [])).replace('"', '""') + '"'
    end = more.get("end", 1718000100 + item_id)
    fields = [user, system, str(item_id), more.get("kind", "TGT"), "deu", "eng", str(score)]
    fields += [document, more.get("whole", "False"), spans, str(end - 10), str(end)]
    return ",".join(fields)


ROWS = [
    row("alice", "tutorial", 1, 100, document="tutorial"),
    row("alice", "A", 2, 80),
    row("alice", "A", 3, 60, end=1718000200),
    row("alice", "B", 4, 50),
    row("alice", "B", 5, 40),
    row("alice", "A", 6, 20, kind="BAD", suffix="#bad1", spans=[span(2, 6, "major")]),
    row("alice", "A", 7, 90, suffix="#duplicate1"),
    # Item 3 again, later: this answer is kept.
    row("alice", "A", 3, 70, end=1718000300, spans=[span(7, 10)]),
    row("bob", "B", 2, 30),
    row("bob", "A", 4, 100),
]


def read(rows: list[str], companions: UploadFile) -> Any:
    parsed = judgments_parse(
        UploadFile("esa.csv", ("\n".join(rows) + "\n").encode()), max_bytes=10**6
    )
    return appraise_batch_texts(parsed, [companions])


def stored(rows: list[str], companions: UploadFile) -> JudgmentImport:
    texts, placed = read(rows, companions)
    owner = make_user("release-importer", organizer=True)
    campaign = make_campaign(owner=owner, name="Appraise release")
    campaign_parsed_store(campaign=campaign, parsed=texts, user=owner)
    return judgments_import_parsed(campaign=campaign, parsed=placed, user=owner)


def test_rows_land_on_the_items_of_their_batch_with_skips_counted() -> None:
    record = stored(ROWS, batches(BATCH_1, BATCH_2))
    release = record.summary["release"]
    assert release["batch_of_annotator"] == {"alice": ["batch 1"], "bob": ["batch 2"]}
    assert (release["tutorial_rows"], release["duplicate_rows"], release["resubmitted_rows"]) == (
        1,
        1,
        1,
    )
    values = {
        (v.judgment.annotator.username.split("-")[-1], v.output.text, v.value)
        for v in JudgmentValue.objects.select_related("judgment__annotator", "output")
    }
    assert values == {
        ("alice", "A house.", 80),
        ("alice", "Two 🚗 cars.", 70),
        ("alice", "One house.", 50),
        ("alice", "Two cars.", 40),
        ("alice", DEGRADED, 20),
        ("bob", "One house.", 30),
        ("bob", "A house.", 100),
    }
    marked = {
        (s.output.kind, s.output.text[s.start : s.end], s.severity)
        for s in JudgmentSpan.objects.select_related("output")
    }
    assert marked == {("bad_ref", "mouse", "major"), ("real", "cars", "minor")}


def test_a_whole_document_item_becomes_a_document_score() -> None:
    whole = item(8, "A", 2, whole=True, target="A house. Two 🚗 cars.")
    rows = [*ROWS[:3], row("alice", "A", 8, 65, whole="True")]
    record = stored(rows, batches([*BATCH_1, whole], BATCH_2))
    assert record.config.document_score
    [judgment] = DocumentJudgment.objects.select_related("document", "system")
    assert (judgment.document.external_id, judgment.system.name, judgment.score) == ("d1", "A", 65)


@pytest.mark.parametrize(
    ("rows", "tasks", "line", "message"),
    [
        # Item 2 of both batches is A's first segment: either could be alice's.
        (
            [row("alice", "A", 2, 80)],
            [BATCH_1, [TUTORIAL, item(2, "A", 1)]],
            1,
            "fit several batches alike (batch 1, batch 2)",
        ),
        ([ROWS[1], row("alice", "A", 9, 80)], [BATCH_1, BATCH_2], 2, "item id 9 is in no batch"),
        (
            [ROWS[1], ROWS[2], row("alice", "B", 3, 80)],
            [BATCH_1, BATCH_2],
            3,
            "this row says document d1#B, system B, TGT; batch 1, which holds most of their "
            "rows, holds document d1#A, system A, TGT as item 3",
        ),
    ],
)
def test_a_row_that_no_single_batch_explains_is_refused_naming_it(
    rows: list[str], tasks: list[list[dict[str, Any]]], line: int, message: str
) -> None:
    with pytest.raises(UploadError) as refused:
        read(rows, batches(*tasks))
    [problem] = refused.value.problems
    assert (problem.file, problem.line) == ("esa.csv", line)
    assert message in problem.message


def test_a_text_two_batch_items_give_two_ways_is_refused_naming_both() -> None:
    changed = [TUTORIAL, item(2, "B", 1), item(4, "A", 1, target="A home.")]
    with pytest.raises(UploadError) as refused:
        read(ROWS, batches(BATCH_1, changed))
    [problem] = refused.value.problems
    assert problem.file == "batches.json"
    assert (
        "batch 2 item 4 gives A of segment 1 of d1 as 'A home.', batch 1 item 2 as 'A house.'"
        in problem.message
    )
