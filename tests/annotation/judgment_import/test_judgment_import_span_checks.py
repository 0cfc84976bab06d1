"""Imported error spans are checked as the submit API checks an annotator's: a span outside its
output's text, an empty one, overlapping spans of one output (except in Google's MQM TSV, whose
raters may mark several errors on the same words, one row each), a severity or category the kind
lacks, and spans on a bad reference, whose degraded text no file holds, are refused naming the
row; they used to be stored (overlaps), or to fail in the database (a span outside the text) or
with a message in another unit. Nothing is stored then."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from annotation.judgment_import import formats
from annotation.judgment_import.layout import JudgmentFormat
from annotation.judgment_import.rows import SYSTEM, ImportRow, ParsedJudgments
from annotation.models import Campaign, JudgmentSpan
from annotation.protocols.mqm import MQM
from tests.analysis_factories import make_text_campaign
from tests.support.judgment_import import ENTRY_POINTS, Entry, assert_refused

pytestmark = pytest.mark.django_db


@pytest.fixture
def texts(owner: AbstractBaseUser) -> Campaign:
    """20 segments translated by nmt and pbmt ("nmt says 1." …)."""
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=20, system_names=["nmt", "pbmt"], name="Past campaign"
    )
    return campaign


@pytest.fixture(params=list(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> Entry:
    return ENTRY_POINTS[request.param]


def appraise_row(system: str, item: int, spans: list[Any], *, kind: str = "TGT") -> str:
    """A row of Appraise's ESA export: the spans field quoted as csv.writer quotes it."""
    fields = ["w", system, str(item), kind, "deu", "eng", "50", f"doc1#{system}", "False"]
    quoted = '"' + json.dumps(spans).replace('"', '""') + '"'
    return ",".join([*fields, quoted, "1718000000.5", "1718000012.0"])


def esa_span(start: Any, end: Any, severity: str = "minor") -> dict[str, Any]:
    return {"start_i": start, "end_i": end, "severity": severity, "error_type": None}


def test_a_bad_reference_with_spans_is_refused_in_the_files_terms(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    body = "\n".join(
        [
            appraise_row("nmt", 1, [esa_span(0, 2)]),
            appraise_row("nmt", 1, [esa_span(0, 2)], kind="BAD"),
            "",
        ]
    )
    assert_refused(
        entry,
        owner,
        texts,
        "wmt24-esa.csv",
        body.encode(),
        2,
        "a BAD item (a bad reference) with error spans: its degraded text is not in the file",
    )


def test_a_bad_reference_with_only_an_omission_is_imported(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    body = "\n".join(
        [
            appraise_row("nmt", 1, [esa_span(0, 2)]),
            appraise_row("nmt", 1, [esa_span("missing", "missing")], kind="BAD"),
            "",
        ]
    )
    outcome, problems = entry(owner, texts, "wmt24-esa.csv", body.encode())
    assert (outcome, problems) == ("stored", [])


def test_a_second_row_of_the_same_output_is_refused_naming_it(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    body = "\n".join(
        [
            appraise_row("nmt", 1, [esa_span(0, 2)]),
            appraise_row("nmt", 1, [esa_span(1, 4)]),
            "",
        ]
    )
    assert_refused(
        entry, owner, texts, "wmt24-esa.csv", body.encode(), 2, "of the same output by annotator w"
    )


def test_overlapping_error_rows_of_one_output_in_googles_tsv_are_kept(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    """Two error rows of one rater's judgment of one output whose spans overlap: Google's raters
    mark several errors on the same words, so each error is a span of its own (the score counts
    both); the submit API and every other layout refuse overlapping spans."""
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
    rows = [
        ("<v>nmt says</v> 1.", "Accuracy/Mistranslation", "Major"),
        ("nmt <v>says 1</v>.", "Fluency/Grammar", "Minor"),
    ]
    body = "\n".join(
        [header]
        + [
            "\t".join(["nmt", "d1", "1", "1", "r1", "Quelle 1.", target, category, severity])
            for target, category, severity in rows
        ]
        + [""]
    )
    outcome, problems = entry(owner, texts, "mqm.tsv", body.encode())
    assert (outcome, problems) == ("stored", [])
    assert sorted(JudgmentSpan.objects.values_list("start", "end", "severity")) == [
        (0, 8, "major"),
        (4, 10, "minor"),
    ]


def spans_row(line: int, system: str, segment: str, spans: tuple[Any, ...]) -> ImportRow:
    return ImportRow(line, "w", system, segment, SYSTEM, -1.0, criterion="mqm", spans=spans)


# Rows of a test layout that gives spans in code points, as a layout that reads texts does:
# by line, the spans of nmt's output "nmt says 1." (11 characters) on segment 1 or 2.
SPAN_ROWS: dict[str, tuple[Any, ...]] = {
    "within": ((0, 3, "minor", "fluency/grammar"), (11, 12, "major", "accuracy/omission")),
    "beyond the text": ((4, 13, "minor", "fluency/grammar"),),
    "empty": ((4, 4, "minor", "fluency/grammar"),),
    "overlapping": ((0, 5, "minor", "fluency/grammar"), (3, 8, "major", "style")),
    "severity": ((0, 3, "critical", "fluency/grammar"),),
    "category": ((0, 3, "minor", "accuracy/made-up"),),
}


@pytest.fixture
def spans_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A layout "#spans" whose second line is a key of :data:`SPAN_ROWS`: a row of segment 1
    with the "within" spans, then one of segment 2 with that key's spans."""

    def parse(name: str, lines: list[str], first: int) -> ParsedJudgments:
        rows = [
            spans_row(first + 1, "nmt", "1", SPAN_ROWS["within"]),
            spans_row(first + 2, "nmt", "2", SPAN_ROWS[lines[first + 1].strip()]),
        ]
        return ParsedJudgments(name, "spans", rows, has_items=False)

    layout = JudgmentFormat(
        key="spans",
        label="Spans (a test layout)",
        looks_like=lambda _name, lines, first: lines[first] == "#spans",
        parse=parse,
        options=lambda parsed, options: (replace(options, protocol=MQM), parsed),
    )
    monkeypatch.setattr(formats, "JUDGMENT_FORMATS", (*formats.JUDGMENT_FORMATS, layout))


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("beyond the text", "characters 4–13 are not within the text of 11 characters"),
        ("empty", "characters 4–4 are not within the text of 11 characters"),
        ("overlapping", "the spans at characters 0–5 and 3–8 of one output overlap (both on this"),
        ("severity", "severity “critical” is not one of minor, major, neutral"),
        ("category", "category “accuracy/made-up” is not one of this protocol's categories"),
    ],
)
@pytest.mark.usefixtures("spans_layout")
def test_a_span_the_submit_api_refuses_is_refused_naming_its_line(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, case: str, message: str
) -> None:
    body = f"#spans\n{case}\n".encode()
    assert_refused(entry, owner, texts, "past.spans", body, 2, message)


@pytest.mark.usefixtures("spans_layout")
def test_spans_the_submit_api_takes_are_stored(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    outcome, problems = entry(owner, texts, "past.spans", b"#spans\nwithin\n")
    assert (outcome, problems) == ("stored", [])
    assert sorted(JudgmentSpan.objects.values_list("start", "end", "severity")) == [
        (0, 3, "minor"),
        (0, 3, "minor"),
        (11, 12, "major"),
        (11, 12, "major"),
    ]
