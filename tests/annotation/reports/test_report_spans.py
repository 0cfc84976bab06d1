"""The judgment report's spans: per row of an error-span kind (ESA, MQM) its output's spans, a
list with the marked text in JSONL and one compact cell in CSV and TSV (the same text from the
database's writer and Python's), empty or null for other kinds; read in one query per chunk."""

from __future__ import annotations

import csv
import io
import json
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.judging.screens import annotation_screen
from annotation.judging.services import judgment_record
from annotation.models import ItemOutput, JudgmentSpan
from annotation.reports.span_cells import span_cell
from annotation.reports.stream import judgment_report_stream
from annotation.tasking.services import task_assign_next
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = pytest.mark.django_db

MISTRANSLATION = {"severity": "major", "category": "accuracy/mistranslation"}
PUNCTUATION = {"severity": "minor", "category": "fluency/punctuation"}


def judge(config: Any, rater: Any, answers: list[Any]) -> list[ItemOutput]:
    """The rater's first screens of ``config``, answered by ``answers`` (each a function of
    the shown output); the outputs judged, in order."""
    assignment = task_assign_next(config=config, annotator=rater)
    assert assignment is not None
    judged = []
    for answer in answers:
        screen = annotation_screen(assignment_id=assignment.pk, annotator=rater)
        (output,) = screen.outputs
        judgment_record(
            assignment_id=assignment.pk,
            annotator=rater,
            item_id=screen.item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer={str(output.pk): answer(output)},
        )
        judged.append(output)
    return judged


@pytest.fixture
def judged() -> dict[str, list[ItemOutput]]:
    """ESA: an output with a major error over characters 0–3 and an omission (the marker),
    then one without errors; MQM: a minor punctuation error over 0–2 and a major
    mistranslation over 4–6, then none; direct assessment: one score."""
    owner = make_user("report-spans-owner", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Spans")
    rater = make_user("report-spans-rater")
    campaign.annotators.add(rater)
    esa = make_config(campaign, "esa", outputs_per_screen=1, items_per_task=3)
    mqm = make_config(campaign, "mqm", outputs_per_screen=1, items_per_task=3)
    da = make_config(campaign, "direct_assessment", items_per_task=3)
    n = len
    return {
        "esa": judge(
            esa,
            rater,
            [
                lambda o: {
                    "score": 40,
                    "spans": [
                        {"start": 0, "end": 3, "severity": "major"},
                        {"start": n(o.text), "end": n(o.text) + 1, "severity": "minor"},
                    ],
                },
                lambda o: {"score": 90, "spans": []},
            ],
        ),
        "mqm": judge(
            mqm,
            rater,
            [
                lambda o: {
                    "spans": [
                        {"start": 4, "end": 6, **MISTRANSLATION},
                        {"start": 0, "end": 2, **PUNCTUATION},
                    ]
                },
                lambda o: {"spans": []},
            ],
        ),
        "direct_assessment": judge(da, rater, [lambda o: {"score": 70}]),
    }


def report(fmt: str, **options: Any) -> bytes:
    from annotation.models import Campaign

    campaign = Campaign.objects.get(name="Spans")
    return b"".join(judgment_report_stream(campaign=campaign, file_format=fmt, **options))


def test_jsonl_rows_carry_their_outputs_spans_with_the_marked_text(judged) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in report("jsonl").decode().splitlines()]
    assert [(r["protocol_type"], r["criterion"], r["raw"]) for r in rows] == [
        ("esa", "score", 40.0),
        ("esa", "score", 90.0),
        ("mqm", "mqm", -5.1),  # 5 + 0.1 by hand
        ("mqm", "mqm", 0.0),
        ("direct_assessment", "score", 70.0),
    ]
    first, _clean = judged["esa"]
    words, _ = judged["mqm"]
    assert rows[0]["spans"] == [
        {"start": 0, "end": 3, "severity": "major", "category": "", "text": first.text[:3]},
        {
            "start": len(first.text),
            "end": len(first.text) + 1,
            "severity": "minor",
            "category": "",
            "text": "[missing]",
        },
    ]
    assert rows[1]["spans"] == []
    # In order of their start, whatever order they were sent in.
    assert rows[2]["spans"] == [
        {"start": 0, "end": 2, **PUNCTUATION, "text": words.text[0:2]},
        {"start": 4, "end": 6, **MISTRANSLATION, "text": words.text[4:6]},
    ]
    assert rows[3]["spans"] == []
    assert rows[4]["spans"] is None


@pytest.mark.parametrize(("fmt", "delimiter"), [("csv", ","), ("tsv", "\t")])
def test_csv_and_tsv_rows_carry_a_compact_span_cell(judged, fmt: str, delimiter: str) -> None:  # type: ignore[no-untyped-def]
    content = report(fmt)
    assert content == report(fmt, python_text=True)
    rows = list(csv.DictReader(io.StringIO(content.decode()), delimiter=delimiter))
    length = len(judged["esa"][0].text)
    assert [r["spans"] for r in rows] == [
        f"0-3:major;{length}-{length + 1}:minor",
        "",
        "0-2:minor/fluency/punctuation;4-6:major/accuracy/mistranslation",
        "",
        "",
    ]
    assert list(rows[0])[-2:] == ["spans", "answer"]
    # The built-in kinds' answers hold nothing beyond their numbers and spans.
    assert {r["answer"] for r in rows} == {""}


def test_spans_are_read_once_per_chunk_and_not_for_a_chunk_without_span_kinds(judged) -> None:  # type: ignore[no-untyped-def]
    table = JudgmentSpan._meta.db_table
    for fmt in ("csv", "jsonl"):
        # Rows in order: ESA, ESA | MQM, MQM | direct assessment.
        with CaptureQueriesContext(connection) as queries:
            report(fmt, chunk_size=2)
        assert sum(table in q["sql"] for q in queries.captured_queries) == 2
        with CaptureQueriesContext(connection) as queries:
            report(fmt, chunk_size=1000)
        assert sum(table in q["sql"] for q in queries.captured_queries) == 1


def test_the_compact_cell() -> None:
    assert span_cell(None) == span_cell([]) == ""
    assert (
        span_cell(
            [
                {"start": 0, "end": 3, "severity": "major", "category": ""},
                {"start": 7, "end": 8, "severity": "minor", "category": "non-translation"},
            ]
        )
        == "0-3:major;7-8:minor/non-translation"
    )
