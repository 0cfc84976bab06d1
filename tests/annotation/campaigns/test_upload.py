"""Upload: each malformed input fails with a message naming file and line and leaves the database
as it was; the three good forms store the same data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.models import Run, Segment, System
from tests.factories import (
    REF_A,
    REF_B,
    SOURCE,
    SYSTEMS,
    lines,
    make_campaign,
    make_user,
    plain_files,
)
from tests.support.uploads import (
    GOOD_FORMS,
    campaign_dump,
    database_snapshot,
    jsonl,
    jsonl_lines,
    tsv,
    tsv_rows,
    xml,
    xml_dataset,
)

pytestmark = pytest.mark.django_db


def replace_line(data: bytes, number: int, new: bytes) -> bytes:
    items = data.split(b"\n")
    items[number - 1] = new
    return b"\n".join(items)


def plain_with(name: str, change: Callable[[bytes], bytes]) -> list[UploadFile]:
    return [
        UploadFile(f.name, change(f.content) if f.name == name else f.content, f.role)
        for f in plain_files()
    ]


@dataclass(frozen=True)
class Bad:
    files: Callable[[], list[UploadFile]]
    message: str
    file: str
    line: int | None
    existing_data: bool = False


BAD_UPLOADS: dict[str, Bad] = {
    "invalid UTF-8 in the source": Bad(
        lambda: plain_with("src.de", lambda b: replace_line(b, 3, b"Wir fahren \xff nach Berlin.")),
        "not valid UTF-8",
        "src.de",
        3,
    ),
    "invalid UTF-8 in a system file": Bad(
        lambda: plain_with("bad.opt1.txt", lambda b: replace_line(b, 2, b"\xc3\x28")),
        "not valid UTF-8",
        "bad.opt1.txt",
        2,
    ),
    "a reference one line short": Bad(
        lambda: plain_with("ref.B.en", lambda b: lines(REF_B[:3])),
        "line counts differ",
        "ref.B.en",
        4,
    ),
    "a system one line long": Bad(
        lambda: plain_with("good.opt1.txt", lambda b: b + b"extra line\n"),
        "line counts differ",
        "good.opt1.txt",
        5,
    ),
    "an empty source line": Bad(
        lambda: plain_with("src.de", lambda b: replace_line(b, 2, b"   ")),
        "empty source line",
        "src.de",
        2,
    ),
    "an empty reference line": Bad(
        lambda: plain_with("ref.A.en", lambda b: replace_line(b, 4, b"")),
        "empty reference line",
        "ref.A.en",
        4,
    ),
    "a NUL character": Bad(
        lambda: plain_with("ref.A.en", lambda b: replace_line(b, 2, b"The dog\x00 barks.")),
        "NUL character",
        "ref.A.en",
        2,
    ),
    "a system file name with two runs": Bad(
        lambda: [*plain_files(), UploadFile("good.opt0.final.txt", lines(REF_A), "systems")],
        "unknown system/run",
        "good.opt0.final.txt",
        None,
    ),
    "a system file that is not .txt": Bad(
        lambda: [*plain_files(), UploadFile("mt-output.out", lines(REF_A), "systems")],
        "unknown system/run",
        "mt-output.out",
        None,
    ),
    "the same system/run twice": Bad(
        lambda: [*plain_files(), UploadFile("good.opt0.txt", lines(REF_A), "systems")],
        "duplicate system/run good/opt0",
        "good.opt0.txt",
        None,
    ),
    "a system both with and without runs": Bad(
        lambda: [*plain_files(), UploadFile("good.txt", lines(REF_A), "systems")],
        "both with and without a run",
        "good.txt",
        None,
    ),
    "documents that are not contiguous": Bad(
        lambda: plain_with("docs.txt", lambda b: lines(["d1", "d2", "d1", "d2"])),
        "starts again",
        "docs.txt",
        3,
    ),
    "references without a source": Bad(
        lambda: [f for f in plain_files() if f.role != "source"],
        "need a source file",
        "upload",
        None,
    ),
    "mixed plain text and TSV": Bad(
        lambda: [*plain_files(), UploadFile("all.tsv", tsv(tsv_rows()), "data")],
        "mixed forms",
        "upload",
        None,
    ),
    "mixed TSV and XML": Bad(
        lambda: [UploadFile("a.tsv", tsv(tsv_rows()), "data"), *xml(xml_dataset())],
        "mixed forms",
        "upload",
        None,
    ),
    "an unknown data file type": Bad(
        lambda: [UploadFile("data.csv", b"a,b\n", "data")],
        "unknown data file type",
        "data.csv",
        None,
    ),
    "TSV without a source column": Bad(
        lambda: [UploadFile("t.tsv", tsv([["d1", "1", "x"]], "doc_id\tseg_id\treference"), "data")],
        "lacks the column 'source'",
        "t.tsv",
        1,
    ),
    "TSV with an unknown column": Bad(
        lambda: [
            UploadFile(
                "t.tsv", tsv([["d1", "1", "x", "y"]], "doc_id\tseg_id\tsource\tscore"), "data"
            )
        ],
        "unknown column 'score'",
        "t.tsv",
        1,
    ),
    "TSV row with a missing field": Bad(
        lambda: [
            UploadFile(
                "t.tsv",
                tsv(tsv_rows()).replace(b"\tgood\topt0\tThe dog barks loud.", b"\tgood\topt0"),
                "data",
            )
        ],
        "7 fields where the header has 8",
        "t.tsv",
        3,
    ),
    "TSV with an empty source": Bad(
        lambda: [
            UploadFile(
                "t.tsv",
                tsv([r if i != 3 else [*r[:2], "", *r[3:]] for i, r in enumerate(tsv_rows())]),
                "data",
            )
        ],
        "empty source",
        "t.tsv",
        5,
    ),
    "TSV with a translation given twice": Bad(
        lambda: [UploadFile("t.tsv", tsv([*tsv_rows(), tsv_rows()[1]]), "data")],
        "duplicate system/run good/opt0",
        "t.tsv",
        18,
    ),
    "TSV whose source differs between rows": Bad(
        lambda: [
            UploadFile(
                "t.tsv",
                tsv(
                    [r if i != 5 else [*r[:2], "Anders.", *r[3:]] for i, r in enumerate(tsv_rows())]
                ),
                "data",
            )
        ],
        "different source or reference than at line 3",
        "t.tsv",
        7,
    ),
    "TSV where a system misses a segment": Bad(
        lambda: [UploadFile("t.tsv", tsv(tsv_rows()[:-1]), "data")],
        "has no translation for doc d2 seg 2",
        "t.tsv",
        None,
    ),
    "JSONL that is not JSON": Bad(
        lambda: [UploadFile("t.jsonl", b'{"doc_id": "d1"}\n{"doc_id": \n', "data")],
        "malformed JSONL",
        "t.jsonl",
        2,
    ),
    "JSONL with a list instead of an object": Bad(
        lambda: [UploadFile("t.jsonl", jsonl([*jsonl_lines()[:2], ["d1", "1"]]), "data")],
        "must be a JSON object",
        "t.jsonl",
        3,
    ),
    "JSONL with a number for the source": Bad(
        lambda: [UploadFile("t.jsonl", jsonl([{**jsonl_lines()[0], "source": 3.5}]), "data")],
        "'source' must be a string",
        "t.jsonl",
        1,
    ),
    "XML that is not well-formed": Bad(
        lambda: xml(xml_dataset().replace("</src>", "", 1)),
        "malformed XML",
        "test.xml",
        33,
    ),
    "XML with a foreign root element": Bad(
        lambda: xml("<html><body/></html>"),
        "root element is <html>",
        "test.xml",
        1,
    ),
    "XML hyp without a system": Bad(
        lambda: xml(xml_dataset().replace('system="bad" run="opt1"', 'run="opt1"', 1)),
        "unknown system",
        "test.xml",
        29,
    ),
    "XML seg without an id": Bad(
        lambda: xml(xml_dataset().replace('<seg id="2">Der Hund', "<seg>Der Hund", 1)),
        "<seg> without an id",
        "test.xml",
        7,
    ),
    "XML reference lacking a segment": Bad(
        lambda: xml(xml_dataset().replace('<seg id="2">The dog is barking loudly.</seg>\n', "", 1)),
        "reference B of doc d1 lacks seg 2",
        "test.xml",
        13,
    ),
    "XML hypothesis for a segment the source lacks": Bad(
        lambda: xml(
            xml_dataset().replace(
                '<hyp system="bad" run="opt1" lang="en"><p>\n<seg id="1">',
                '<hyp system="bad" run="opt1" lang="en"><p>\n<seg id="9">',
                1,
            )
        ),
        "translates doc d1 seg 9",
        "test.xml",
        30,
    ),
    "only systems for a campaign without source text": Bad(
        lambda: [f for f in plain_files() if f.role == "systems"],
        "no source text yet",
        "good.opt0.txt",
        None,
    ),
    "a new system with too few lines for the existing source": Bad(
        lambda: [UploadFile("new.txt", lines(REF_A[:2]), "systems")],
        "line counts differ",
        "new.txt",
        3,
        existing_data=True,
    ),
    "a system the campaign already has, without replace": Bad(
        lambda: [UploadFile("good.opt0.txt", lines(REF_A), "systems")],
        "already has system(s) good",
        "good.opt0.txt",
        None,
        existing_data=True,
    ),
    "TSV rows for a segment the campaign lacks": Bad(
        lambda: [
            UploadFile(
                "t.tsv",
                tsv(
                    [["d9", "1", "Neu.", "new", "x"]],
                    "doc_id\tseg_id\tsource\tsystem\ttranslation",
                ),
                "data",
            )
        ],
        "a campaign's source text cannot change",
        "t.tsv",
        None,
        existing_data=True,
    ),
    "a different source for a campaign with data": Bad(
        lambda: plain_with("src.de", lambda b: replace_line(b, 2, "Die Katze schläft.".encode())),
        "this line differs",
        "src.de",
        2,
        existing_data=True,
    ),
}


@pytest.mark.parametrize("case", list(BAD_UPLOADS), ids=list(BAD_UPLOADS))
def test_malformed_upload_names_file_and_line_and_stores_nothing(case: str) -> None:
    bad = BAD_UPLOADS[case]
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner, with_data=bad.existing_data)
    before = database_snapshot()
    with pytest.raises(UploadError) as caught:
        campaign_data_import(campaign=campaign, files=bad.files(), user=owner)
    problem = caught.value.problems[0]
    assert bad.message in problem.message, str(problem)
    assert problem.file == bad.file, str(problem)
    assert problem.line == bad.line, str(problem)
    assert database_snapshot() == before


def test_there_are_at_least_twenty_malformed_cases() -> None:
    assert len(BAD_UPLOADS) >= 20


def test_an_oversized_file_is_refused_with_the_limit_named(settings) -> None:  # type: ignore[no-untyped-def]
    settings.EVALSITE_UPLOAD_MAX_BYTES = 40
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    before = database_snapshot()
    with pytest.raises(UploadError) as caught:
        campaign_data_import(campaign=campaign, files=plain_files(), user=owner)
    problem = caught.value.problems[0]
    assert problem.file == "src.de"
    assert "the limit is 40 bytes" in problem.message
    assert database_snapshot() == before


def test_a_failure_late_in_the_import_rolls_back_segments_already_written(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    before = database_snapshot()

    def fail_after_segments(*args: object, **kwargs: object) -> None:
        # Fault injection: by now documents, segments and references are written.
        assert Segment.objects.filter(campaign=campaign).count() == 4
        raise UploadError([])

    monkeypatch.setattr("annotation.campaigns.services._store_outputs", fail_after_segments)
    with pytest.raises(UploadError):
        campaign_data_import(campaign=campaign, files=plain_files(), user=owner)
    assert database_snapshot() == before


def test_names_longer_than_the_database_allows_are_refused() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    long_name = "x" * 201 + ".txt"
    files = [*plain_files(), UploadFile(long_name, lines(REF_A), "systems")]
    with pytest.raises(UploadError) as caught:
        campaign_data_import(campaign=campaign, files=files, user=owner)
    assert "longer than 200 characters" in caught.value.problems[0].message


def test_the_good_forms_store_the_same_data() -> None:
    owner = make_user("owner", organizer=True)
    dumps = {}
    for n, (form, files) in enumerate(GOOD_FORMS.items()):
        campaign = make_campaign(owner=owner, name=f"form {n}")
        upload = campaign_data_import(campaign=campaign, files=files(), user=owner)
        assert upload.summary["segments_added"] == 4, form
        dumps[form] = campaign_dump(campaign)
    expected = dumps["plain text"]
    assert expected["segments"][2] == ("d2", "1", 2, SOURCE[2], [REF_A[2], REF_B[2]])
    assert expected["outputs"]["bad/opt1"] == SYSTEMS[("bad", "opt1")]
    for form, dump in dumps.items():
        assert dump == expected, form


def test_later_uploads_add_systems_to_the_existing_segments() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner, with_data=True)
    upload = campaign_data_import(
        campaign=campaign, files=[UploadFile("third.txt", lines(REF_B), "systems")], user=owner
    )
    assert upload.summary["systems_added"] == ["third"]
    run = Run.objects.get(system__campaign=campaign, system__name="third")
    assert run.name == "main"
    assert campaign_dump(campaign)["outputs"]["third/main"] == REF_B
    assert Segment.objects.filter(campaign=campaign).count() == 4


def test_replacing_a_system_needs_explicit_confirmation_and_then_replaces_it() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner, with_data=True)
    new = [UploadFile("good.opt0.txt", lines(REF_A), "systems")]
    with pytest.raises(UploadError):
        campaign_data_import(campaign=campaign, files=new, user=owner)
    upload = campaign_data_import(campaign=campaign, files=new, user=owner, replace_systems=True)
    assert upload.summary["systems_replaced"] == ["good"]
    system = System.objects.get(campaign=campaign, name="good")
    assert [r.name for r in system.runs.all()] == ["opt0"]
    assert campaign_dump(campaign)["outputs"]["good/opt0"] == REF_A


def test_the_upload_page_takes_a_data_file_replaces_on_request_and_names_an_oversized_file(
    settings,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    client = Client()
    client.force_login(owner)
    url = reverse("campaign_upload", args=[campaign.id])

    stored = client.post(url, {"data": [SimpleUploadedFile("all.tsv", tsv(tsv_rows()))]})
    assert stored.status_code == 302
    assert campaign_dump(campaign)["outputs"]["bad/opt1"] == SYSTEMS[("bad", "opt1")]

    before = database_snapshot()
    again = client.post(url, {"systems": [SimpleUploadedFile("good.opt0.txt", lines(REF_A))]})
    assert again.status_code == 400
    assert "replace" in again.content.decode()
    assert database_snapshot() == before
    replaced = client.post(
        url, {"systems": [SimpleUploadedFile("good.opt0.txt", lines(REF_A))], "replace": "on"}
    )
    assert replaced.status_code == 302
    assert campaign_dump(campaign)["outputs"]["good/opt0"] == REF_A

    settings.EVALSITE_UPLOAD_MAX_BYTES = 40
    before = database_snapshot()
    big = client.post(url, {"systems": [SimpleUploadedFile("huge.txt", lines(REF_B))]})
    assert big.status_code == 400
    page = big.content.decode()
    assert "huge.txt" in page
    assert "the limit is 40 bytes" in page
    assert database_snapshot() == before


def test_the_upload_page_names_an_empty_file_among_several() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    client = Client()
    client.force_login(owner)
    url = reverse("campaign_upload", args=[campaign.id])
    before = database_snapshot()
    refused = client.post(
        url,
        {
            "systems": [
                SimpleUploadedFile("good.opt0.txt", lines(REF_A)),
                SimpleUploadedFile("blank.opt0.txt", b""),
            ]
        },
    )
    assert refused.status_code == 400
    page = refused.content.decode()
    # Among several files, "The submitted file is empty." did not say which.
    assert "blank.opt0.txt: The submitted file is empty." in page
    assert "Choose at least one file" not in page  # one was chosen, and refused
    assert "good.opt0.txt:" not in page
    assert database_snapshot() == before


def test_the_upload_page_asks_for_a_file_when_none_was_chosen() -> None:
    owner = make_user("owner", organizer=True)
    campaign = make_campaign(owner=owner)
    client = Client()
    client.force_login(owner)
    # As a browser sends the form with no file chosen: its other fields only.
    refused = client.post(reverse("campaign_upload", args=[campaign.id]), {"replace": ""})
    assert refused.status_code == 400
    assert "Choose at least one file to upload." in refused.content.decode()
