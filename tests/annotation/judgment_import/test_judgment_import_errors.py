"""Judgment files that used to end in a server error or a wrong line number: each is refused
through the API and the import page with a message naming the file and the file's real line, and
nothing is stored; blank lines before the header are skipped; a file over the upload limit is
refused before it is read into memory."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import InMemoryUploadedFile

from annotation.models import Campaign, JudgmentImport
from tests.analysis_factories import make_text_campaign
from tests.support.judgment_import import ENTRY_POINTS, Entry, api_import, assert_refused

pytestmark = pytest.mark.django_db


HEADER = "annotator,system,segment,type,score\n"
WMT_HEADER = (
    "HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore\ttime\n"
)
# One character over the csv module's field limit (131,072).
TOO_LONG = "5" * 131_073


@pytest.fixture
def texts(owner: AbstractBaseUser) -> Campaign:
    """20 segments (lines 1–20 of the test set) translated by nmt, pbmt and rbmt."""
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=20, system_names=["nmt", "pbmt", "rbmt"], name="Past campaign"
    )
    return campaign


@pytest.fixture(params=list(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> Entry:
    return ENTRY_POINTS[request.param]


# --------------------------------------------------------------------------------------------
# Appraise times that no date-time holds


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("99999999999999", "99999999999999", "start time (field 8) '99999999999999' is out of"),
        (
            "1600000000",
            "99999999999999",
            "end time (field 9) '99999999999999' is out of range: Unix seconds from 0001-01-02 "
            "to 9999-12-30",
        ),
        ("-99999999999", "1600000000", "start time (field 8) '-99999999999' is out of range"),
        ("1e300", "1e300", "start time (field 8) '1e300' is out of range"),
    ],
    ids=["both after year 9999", "end after year 9999", "start before year 1", "overflow"],
)
def test_an_appraise_time_outside_the_years_of_a_date_is_refused_naming_line_and_field(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, start: str, end: str, message: str
) -> None:
    body = f"w,nmt,1,TGT,deu,eng,70,1600000000,1600000010\nw,nmt,2,TGT,deu,eng,70,{start},{end}\n"
    assert_refused(entry, owner, texts, "scores.csv", body.encode(), 2, message)


def test_appraise_times_of_the_last_representable_days_are_still_imported(
    owner: AbstractBaseUser, texts: Campaign
) -> None:
    # 9999-12-29 and 9999-12-30 00:00 UTC.
    body = b"w,nmt,1,TGT,deu,eng,70,253402041600,253402128000\n"
    assert api_import(owner, texts, "scores.csv", body) == ("stored", [])


# --------------------------------------------------------------------------------------------
# Segment numbers


@pytest.mark.parametrize(
    ("name", "body", "line", "message"),
    [
        ("a.csv", f"{HEADER}w,nmt,1,SYSTEM,50\nw,nmt,\u00b2,SYSTEM,50\n", 3,
         "segment '\u00b2' is neither doc_id:seg_id nor a line number"),
        ("a.csv", f"{HEADER}w,nmt,\u0661,SYSTEM,50\n", 2,
         "segment '\u0661' is neither doc_id:seg_id nor a line number"),
        ("scores.csv", "w,nmt,\u00b2,TGT,deu,eng,70,1600000000,1600000010\n", 1,
         "segment '\u00b2' is neither doc_id:seg_id nor a line number"),
        ("ad-good-raw.csv", f"{WMT_HEADER}H1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t\u00b2\t50\t600\n",
         2, "sid '\u00b2' is not a line number"),
        ("a.csv", f"{HEADER}w,nmt,{'1' * 5000},SYSTEM,50\n", 2,
         "unknown segment: line 1111"),
    ],
    ids=["superscript two", "arabic-indic one", "appraise", "wmt sid", "over int's digits"],
)  # fmt: skip
def test_a_segment_number_that_int_cannot_read_is_refused_naming_its_line(
    entry: Entry,
    owner: AbstractBaseUser,
    texts: Campaign,
    name: str,
    body: str,
    line: int,
    message: str,
) -> None:
    assert_refused(entry, owner, texts, name, body.encode(), line, message)


# --------------------------------------------------------------------------------------------
# Fields over the csv module's limit


@pytest.mark.parametrize(
    ("name", "body", "line"),
    [
        ("a.csv", f"{HEADER}w,nmt,1,SYSTEM,50\nw,nmt,2,SYSTEM,{TOO_LONG}\n", 3),
        ("a.tsv", HEADER.replace(",", "\t") + f"w\tnmt\t1\tSYSTEM\t{TOO_LONG}\n", 2),
        ("scores.csv", f"w,nmt,1,TGT,deu,eng,70,1600000000,1600000010\nw,nmt,2,TGT,deu,eng,"
         f"{TOO_LONG},1600000000,1600000010\n", 2),
        ("scores.csv", f"w,{TOO_LONG},1,TGT,deu,eng,70,1600000000,1600000010\n", 1),
        ("ad-good-raw.csv",
         f"{WMT_HEADER}H1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t1\t{TOO_LONG}\t600\n", 2),
    ],
    ids=["evalsite csv", "evalsite tsv", "appraise", "appraise first line", "wmt"],
)  # fmt: skip
def test_a_field_over_the_csv_limit_is_refused_naming_its_line(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, name: str, body: str, line: int
) -> None:
    message = "the line cannot be read: field larger than field limit (131072)"
    assert_refused(entry, owner, texts, name, body.encode(), line, message)


def test_a_quoted_field_over_two_lines_leaves_the_next_lines_their_numbers(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign
) -> None:
    body = f'{HEADER}"w\nsenior",nmt,1,SYSTEM,50\nw,google,2,SYSTEM,50\n'
    assert_refused(entry, owner, texts, "a.csv", body.encode(), 4, "unknown system 'google'")


# --------------------------------------------------------------------------------------------
# Blank lines before the header


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("a.csv", f"\n{HEADER}w,nmt,1,SYSTEM,50\n"),
        ("a.tsv", "\n \t\n" + HEADER.replace(",", "\t") + "w\tnmt\t1\tSYSTEM\t50\n"),
        ("ad-good-raw.csv", f"\n{WMT_HEADER}H1\tw\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t1\t50\t600\n"),
        ("scores.csv", "\n\nw,nmt,1,TGT,deu,eng,70,1600000000,1600000010\n"),
    ],
    ids=["evalsite csv", "evalsite tsv after a line of spaces", "wmt", "appraise"],
)
def test_blank_lines_before_the_header_are_skipped(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, name: str, body: str
) -> None:
    outcome, problems = entry(owner, texts, name, body.encode())
    assert outcome == "stored", problems
    assert JudgmentImport.objects.get(campaign=texts).summary["judgments"] == 1


@pytest.mark.parametrize(
    ("name", "body", "line", "message"),
    [
        ("a.csv", f"\n\n{HEADER}w,nmt,1,SYSTEM,50\nw,google,2,SYSTEM,50\n", 5,
         "unknown system 'google'"),
        ("a.csv", f"\n{HEADER.strip()},colour\nw,nmt,1,SYSTEM,50,x\n", 2,
         "unknown column(s) colour"),
        ("a.csv", f"\n{HEADER}w,nmt,1,SYSTEM\n", 3, "4 fields, the header has 5"),
        ("ad-good-raw.csv", "\nHITId\tWorkerId\tsys_id\ttype\tscore\n", 2,
         "the WMT header lacks the column(s) sid"),
        ("notes.txt", "\n\nhello world\n", 3, "unknown judgments format"),
    ],
    ids=["row", "header", "field count", "wmt header", "unknown layout"],
)  # fmt: skip
def test_a_problem_after_blank_leading_lines_names_the_files_real_line(
    entry: Entry,
    owner: AbstractBaseUser,
    texts: Campaign,
    name: str,
    body: str,
    line: int,
    message: str,
) -> None:
    assert_refused(entry, owner, texts, name, body.encode(), line, message)


# --------------------------------------------------------------------------------------------
# The size limit


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the uploaded files that a view read into memory."""
    names: list[str] = []

    def read(self: InMemoryUploadedFile, *args: Any) -> bytes:
        names.append(str(self.name))
        content: bytes = self.file.read(*args)
        return content

    monkeypatch.setattr(InMemoryUploadedFile, "read", read, raising=False)
    return names


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    entry: Entry, owner: AbstractBaseUser, texts: Campaign, reads: list[str], settings: Any
) -> None:
    settings.EVALSITE_UPLOAD_MAX_BYTES = 100
    small = f"{HEADER}w,nmt,1,SYSTEM,50\n".encode()
    big = small + b"w,nmt,2,SYSTEM,50\n" * 5
    assert len(small) <= 100 < len(big)
    message = f"the file is {len(big)} bytes; the limit is 100 bytes"
    assert_refused(entry, owner, texts, "big.csv", big, None, message)
    assert reads == []
    assert entry(owner, texts, "small.csv", small) == ("stored", [])
    assert reads == ["small.csv"]
