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
from annotation.judging.services import judgment_record
from annotation.models import Item, ItemOutput, ItemOutputCredit
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
