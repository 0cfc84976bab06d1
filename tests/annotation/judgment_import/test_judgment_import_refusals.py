"""Judgment files that used to fail without naming their file or line, or be stored wrongly:
empty files (the form's own message named no file), Appraise spans of JSON nested too deeply or
of another shape (a RecursionError, a TypeError), and TSV fields quoted as the ``excel-tab``
dialect (and EvalSite's own TSV downloads) quote them, once read with their quotes. Each is
refused through the API and the import page naming the file and line, and nothing is stored;
a well-quoted TSV field is read without its quotes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Campaign, JudgmentImport, Translation
from annotation.reports.stream import _tsv_field
from tests.analysis_factories import make_text_campaign
from tests.support.judgment_import import ENTRY_POINTS, Entry, assert_refused

pytestmark = pytest.mark.django_db

HEADER = "annotator\tsystem\tsegment\ttype\tscore"
QUOTED = 'He said "yes", then "no".'


@pytest.fixture
def texts(owner: AbstractBaseUser) -> Campaign:
    """20 segments translated by nmt and pbmt ("nmt says 1." …); nmt's third translation holds
    quotes."""
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=20, system_names=["nmt", "pbmt"], name="Past campaign"
    )
    Translation.objects.filter(run__system__name="nmt", segment__position=2).update(text=QUOTED)
    return campaign


@pytest.fixture(params=list(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> Entry:
    return ENTRY_POINTS[request.param]


def appraise_row(system: str, item: int, spans: Any, *, kind: str = "TGT") -> str:
    """A row of Appraise's ESA export: the spans field quoted as csv.writer quotes it."""
    cell = spans if isinstance(spans, str) else json.dumps(spans)
    fields = ["w", system, str(item), kind, "deu", "eng", "50", f"doc1#{system}", "False"]
    quoted = '"' + cell.replace('"', '""') + '"'
    return ",".join([*fields, quoted, "1718000000.5", "1718000012.0"])


def esa_span(start: Any, end: Any, severity: str = "minor") -> dict[str, Any]:
    return {"start_i": start, "end_i": end, "severity": severity, "error_type": None}


# --------------------------------------------------------------------------------------------
# Empty files


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("empty.tsv", b""),
        ("blank.csv", b"\n \n\t\n"),
        ("bom.csv", b"\xef\xbb\xbf"),
        ("header.tsv", f"{HEADER}\n".encode()),
        ("header.csv", b"annotator,system,segment,type,score\n\n"),
        ("ad-good-raw.csv", b"HITId\tWorkerId\tsys_id\ttype\tsid\tscore\n"),
    ],
    ids=["0 bytes", "blank lines", "a byte-order mark", "tsv header", "csv header", "wmt header"],
)
def test_an_empty_file_is_refused_naming_the_file(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, name: str, body: bytes
) -> None:
    assert_refused(entry, owner, texts, name, body, None, "the file is empty")


# --------------------------------------------------------------------------------------------
# JSON of the wrong depth or shape (Appraise's spans field)


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ("[" * 5000 + "]" * 5000, "the spans (field 10) are nested too deeply"),
        (
            '[{"start_i": 0, "end_i": 1, "severity": "minor", "error_type": '
            + "[" * 5000
            + "]" * 5000
            + "}]",
            "the spans (field 10) are nested too deeply",
        ),
        (
            [{"start_i": 0, "end_i": 1, "severity": "minor", "error_type": 5}],
            "span 1: error_type 5 is not a text or a list of texts",
        ),
        (
            [{"start_i": 0, "end_i": 1, "severity": "minor", "error_type": {"a": ["b"]}}],
            "span 1: error_type {'a': ['b']} is not a text or a list of texts",
        ),
        (
            [{"start_i": 0, "end_i": 1, "severity": "minor", "error_type": [[[["x"]]]]}],
            "span 1: error_type [[[['x']]]] is not a text or a list of texts",
        ),
        ({"start_i": 0}, "the spans (field 10) are not a JSON list"),
        ([{"start_i": 0, "end_i": 1, "severity": [[[["minor"]]]]}], "span 1: severity [[[["),
    ],
    ids=["deep list", "deep error type", "number", "object", "nested list", "no list", "severity"],
)
def test_spans_json_of_another_depth_or_shape_is_refused_naming_its_line(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, spans: Any, message: str
) -> None:
    body = "\n".join([appraise_row("nmt", 1, []), appraise_row("nmt", 2, spans), ""])
    assert_refused(entry, owner, texts, "wmt24-esa.csv", body.encode(), 2, message)


# --------------------------------------------------------------------------------------------
# TSV fields quoted as the excel-tab dialect writes them


def test_a_tsv_written_with_excel_tab_quoting_is_read_without_its_quotes(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    """Fields written as EvalSite's own TSV downloads write them (quoted when they hold a
    quote, quotes doubled) read back as they were: the output text matches the campaign's."""
    annotator = 'Ann "the rater"'
    header = f"{HEADER}\toutput"
    fields = [annotator, "nmt", "3", "SYSTEM", "70", QUOTED]
    row = "\t".join(_tsv_field(f) for f in fields)
    plain = "\t".join(["5'10\" Bob", "nmt", "1", "SYSTEM", "60", "nmt says 1."])
    outcome, problems = entry(owner, texts, "quoted.tsv", f"{header}\n{row}\n{plain}\n".encode())
    assert (outcome, problems) == ("stored", [])
    summary = JudgmentImport.objects.get(campaign=texts).summary
    assert set(summary["annotators"]) == {annotator, "5'10\" Bob"}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            'w\t"nmt" x\t1\tSYSTEM\t50',
            "field 2 begins with a double quote, so it is a quoted field, but text follows "
            "its closing quote",
        ),
        ('w\tnmt\t1\tSYSTEM\t"50', "field 5 begins with a double quote that is not closed"),
    ],
    ids=["text after the closing quote", "unclosed"],
)
def test_a_tsv_field_quoted_wrongly_is_refused_naming_its_line(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, row: str, message: str
) -> None:
    body = f"{HEADER}\nw\tnmt\t2\tSYSTEM\t50\n{row}\n".encode()
    assert_refused(entry, owner, texts, "quoted.tsv", body, 3, message)


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        (
            'annotator,system,segment,type,score\nw,nmt,2,SYSTEM,50\nw,"nmt" x,1,SYSTEM,50\n',
            3,
            "the line cannot be read: ',' expected after '\"' (a field that begins with a "
            "double quote ends with one",
        ),
        (
            'annotator,system,segment,type,score\nw,"nmt,1,SYSTEM,50\nw,nmt,2,SYSTEM,50\n',
            2,
            "the row that begins here (to line 3): the line cannot be read: unexpected end of data",
        ),
        (
            'w,nmt,1,TGT,deu,eng,70,1600000000,1600000010\nw,"nmt" x,2,TGT,deu,eng,70,'
            "1600000000,1600000010\n",
            2,
            "',' expected after '\"'",
        ),
    ],
    ids=["csv: text after the closing quote", "csv: unclosed", "appraise"],
)
def test_a_csv_field_quoted_wrongly_is_refused_not_read_without_its_quotes(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, body: str, line: int, message: str
) -> None:
    assert_refused(entry, owner, texts, "quoted.csv", body.encode(), line, message)
