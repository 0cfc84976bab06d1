"""Judgment files that used to fail without naming their file or line: empty files (the form's
own message named no file) and Appraise spans of JSON nested too deeply or of another shape (a
RecursionError, a TypeError). Each is refused through the API and the import page naming the
file and line, and nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Campaign, Translation
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
