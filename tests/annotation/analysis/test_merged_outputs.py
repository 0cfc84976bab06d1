"""Answers about merged outputs in the analysis and the judgment report: one answer, credited
to every system that produced the text, in the system scores and as one report row each."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest

from annotation.analysis.selectors import campaign_analysis_compute
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.spans import campaign_span_summaries
from annotation.judging.services import judgment_record
from annotation.models import Item, ItemOutput, ItemOutputCredit
from annotation.reports.spans import mqm_tsv
from annotation.reports.stream import judgment_report_stream
from annotation.tasking.merging import normalised_text
from annotation.tasking.services import task_assign_next
from tests.factories import make_config, make_user
from tests.merge_factories import MERGE_OUTPUTS, MERGE_SYSTEMS, make_merge_campaign

pytestmark = pytest.mark.django_db

NO_QC = {"qc_bad_reference": 0, "qc_repeat": 0, "qc_reference": 0}


def _value(text: str) -> int:
    """The score every annotator gives a text: its length once normalised (identical texts
    get the same score, whoever is shown)."""
    return len(normalised_text(text))


@pytest.fixture
def judged(owner):  # type: ignore[no-untyped-def]
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign, "direct_assessment", merge_identical=True, items_per_task=100, **NO_QC
    )
    annotator = make_user("rater")
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    for item in Item.objects.filter(task=assignment.task).order_by("position"):
        [output] = item.outputs.all()
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer={str(output.pk): {"score": _value(output.text)}},
        )
    return campaign, config


def test_every_credited_system_gets_the_answer_in_its_scores(judged) -> None:  # type: ignore[no-untyped-def]
    campaign, _config = judged
    analysis = campaign_analysis_compute(
        campaign=campaign, settings=AnalysisSettings(exclude_untested=False)
    )
    [criterion] = analysis.criteria
    by_name = {s.name: s for s in criterion.systems}
    # 22 answers, yet each of the five systems has a score on each of the six segments.
    assert set(by_name) == set(MERGE_SYSTEMS)
    for index, name in enumerate(MERGE_SYSTEMS):
        texts = [segment[index] for segment in MERGE_OUTPUTS]
        expected = sum(_value(t) for t in texts) / len(texts)
        assert by_name[name].n_judgments == 6
        assert by_name[name].mean_raw == pytest.approx(expected)


def test_the_report_has_a_row_per_credited_system_marked_merged(judged) -> None:  # type: ignore[no-untyped-def]
    campaign, config = judged
    text = b"".join(
        judgment_report_stream(campaign=campaign, file_format="csv", python_text=True)
    ).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    # 22 answers and 30 rows: one per system on each of the six segments.
    assert len(rows) == 30
    assert {(r["line"], r["system"]) for r in rows} == {
        (str(s + 1), name) for s in range(6) for name in MERGE_SYSTEMS
    }
    shown = (
        ItemOutput.objects.filter(
            item__task__config=config, item__segment__position=0, credits__isnull=False
        )
        .distinct()
        .get()
    )
    first = [r for r in rows if r["line"] == "1" and r["merged"]]
    assert sorted(r["system"] for r in first) == ["alpha", "bravo", "charlie"]
    assert {r["merged"] for r in first} == {str(shown.pk)}
    assert {r["raw"] for r in first} == {str(_value(MERGE_OUTPUTS[0][0]))}
    # Rows of outputs nobody else produced are not marked.
    assert {r["merged"] for r in rows if r["line"] == "2"} == {""}
    # The answer's z is credited unchanged.
    assert len({r["z"] for r in first}) == 1
    # PostgreSQL writes the same text itself.
    assert text == b"".join(judgment_report_stream(campaign=campaign, file_format="csv")).decode()
    jsonl = b"".join(judgment_report_stream(campaign=campaign, file_format="jsonl")).decode()
    records = [json.loads(line) for line in jsonl.splitlines()]
    assert len(records) == 30
    assert sorted(r["system"] for r in records if r["merged"] == shown.pk) == [
        "alpha",
        "bravo",
        "charlie",
    ]
    assert ItemOutputCredit.objects.filter(output=shown).count() == 2


def test_errors_marked_in_a_merged_output_count_for_every_system_that_produced_it(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign, "mqm", merge_identical=True, items_per_task=100, outputs_per_screen=1, **NO_QC
    )
    annotator = make_user("mqm-rater")
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    for item in Item.objects.filter(task=assignment.task).order_by("position"):
        [output] = item.outputs.all()
        # One major error in segment 1's "The house is small." (alpha, bravo and charlie).
        major = {"start": 0, "end": 3, "severity": "major", "category": "accuracy/mistranslation"}
        spans = [major] if item.segment.position == 0 and output.credits.exists() else []
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer={str(output.pk): {"spans": spans}},
        )
    [summary] = campaign_span_summaries(campaign=campaign)
    errors = {s.name: (s.n_judged, s.by_severity.get("major", 0)) for s in summary.systems}
    assert errors == {
        "alpha": (6, 1),
        "bravo": (6, 1),
        "charlie": (6, 1),
        "delta": (6, 0),
        "echo": (6, 0),
    }
    analysis = campaign_analysis_compute(
        campaign=campaign, settings=AnalysisSettings(exclude_untested=False)
    )
    [criterion] = analysis.criteria
    # MQM is analysed negated: −5 on one of six segments, a mean of −5/6.
    means = {s.name: s.mean_raw for s in criterion.systems}
    assert means == pytest.approx(
        {"alpha": -5 / 6, "bravo": -5 / 6, "charlie": -5 / 6, "delta": 0.0, "echo": 0.0}
    )


def test_googles_mqm_tsv_writes_a_merged_outputs_errors_for_every_system(owner) -> None:  # type: ignore[no-untyped-def]
    campaign = make_merge_campaign(owner=owner)
    config = make_config(
        campaign, "mqm", merge_identical=True, items_per_task=100, outputs_per_screen=5, **NO_QC
    )
    annotator = make_user("mqm-tsv")
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    major = {"start": 0, "end": 3, "severity": "major", "category": "accuracy/mistranslation"}
    for item in Item.objects.filter(task=assignment.task).order_by("position"):
        answer = {
            str(o.pk): {"spans": [major] if o.credits.exists() else []} for o in item.outputs.all()
        }
        judgment_record(
            assignment_id=assignment.pk,
            annotator=annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            answer=answer,
        )
    lines = "".join(mqm_tsv(campaign=campaign, labels={})).splitlines()
    rows = [line.split("\t") for line in lines[1:]]
    # One row per system and segment (30): the merged outputs' error under each of their
    # systems, the others "No-error".
    assert len(rows) == 30
    errors = sorted((r[3], r[0]) for r in rows if r[8] == "Major")
    assert errors == [
        ("1", "alpha"),
        ("1", "bravo"),
        ("1", "charlie"),
        ("3", "alpha"),
        ("3", "bravo"),
        ("4", "alpha"),
        ("4", "bravo"),
        ("4", "charlie"),
        ("4", "delta"),
        ("4", "echo"),
        ("6", "delta"),
        ("6", "echo"),
    ]
