"""WMT DA segment numbering on small hand-written files: a test set of eleven documents of
unequal sizes (doc1 … doc11, so that sorting the ids puts doc10 and doc11 before doc2); the
numbering chosen is applied, checked against the documents the workers judged, and refused (or
flagged in the summary) where it does not fit."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.background import judgment_import_state
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import
from annotation.models import Document, Judgment, Segment
from tests.analysis_factories import make_text_campaign
from tests.factories import PASSWORD, imports_run_queued

pytestmark = pytest.mark.django_db

HEADER = (
    "HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore\ttime"
)

# The segments of doc1 … doc11, in the upload's order.
SIZES = [4, 16, 7, 13, 10, 10, 9, 11, 12, 8, 10]
# Documents by id: doc1, doc10, doc11, doc2, …, doc9.
SORTED_DOCUMENTS = [1, 10, 11, *range(2, 10)]


def sorted_line(document: int, segment: int) -> int:
    """The line (from 1) of ``doc<document>``'s segment (from 1) after sorting the ids."""
    before = SORTED_DOCUMENTS[: SORTED_DOCUMENTS.index(document)]
    return sum(SIZES[d - 1] for d in before) + segment


@pytest.fixture
def campaign(owner: AbstractBaseUser) -> Any:
    made, segments, *_ = make_text_campaign(owner=owner, n_segments=110, system_names=["nmt"])
    documents = list(Document.objects.filter(campaign=made).order_by("position"))
    starts = [sum(SIZES[:d]) for d in range(len(SIZES))]
    for segment in segments:  # out of the way of the unique (document, place) and (document, id)
        segment.position_in_document = 1000 + segment.position
        segment.external_id = f"tmp{segment.position}"
    Segment.objects.bulk_update(segments, ["position_in_document", "external_id"])
    for segment in segments:
        d = max(d for d, start in enumerate(starts) if start <= segment.position)
        segment.document = documents[d]
        segment.position_in_document = segment.position - starts[d]
        segment.external_id = str(segment.position - starts[d] + 1)
    Segment.objects.bulk_update(segments, ["document", "position_in_document", "external_id"])
    return made


def wmt(sids: list[str | int], *, hit: str = "H1") -> UploadFile:
    rows = [
        f"{hit}\tw1\tde\ten\tad\t1\tnmt\t0\tSYSTEM\t{sid}\t{50 + n % 40}\t600"
        for n, sid in enumerate(sids)
    ]
    return UploadFile("ad-good-raw.csv", ("\n".join([HEADER, *rows]) + "\n").encode())


def imported(campaign: Any, upload: UploadFile, numbering: str) -> Any:
    options = ImportOptions(file_format="wmt", segment_numbering=numbering)
    return judgments_import(campaign=campaign, upload=upload, user=None, options=options)


def judged(campaign: Any) -> list[tuple[str, str]]:
    return sorted(
        Judgment.objects.filter(item__task__config__campaign=campaign).values_list(
            "item__segment__document__external_id", "item__segment__external_id"
        )
    )


# Whole documents doc10 and doc2, numbered after sorting the ids.
WHOLE = [sorted_line(10, s) for s in range(1, 9)] + [sorted_line(2, s) for s in range(1, 17)]


@pytest.mark.parametrize("numbering", ["sorted", "auto"])
def test_whole_documents_numbered_by_sorted_ids_land_on_those_documents(
    campaign: Any, numbering: str
) -> None:
    record = imported(campaign, wmt(WHOLE), numbering)
    # doc10 has 8 segments, doc2 16.
    assert judged(campaign) == sorted(
        [("doc10", str(s)) for s in range(1, 9)] + [("doc2", str(s)) for s in range(1, 17)]
    )
    report = record.summary["segment_numbering"]
    assert (report["applied"], report["warnings"]) == ("sorted", [])
    assert report["checks"] == [
        "upload: 0 rows outside the test set, 0 of 3 judged documents covered exactly",
        "sorted: 0 rows outside the test set, 2 of 2 judged documents covered exactly",
    ]


def test_the_uploaded_order_is_refused_when_the_judged_documents_say_sorted(campaign: Any) -> None:
    with pytest.raises(UploadError) as refused:
        imported(campaign, wmt(WHOLE), "upload")
    assert "the segment numbering upload does not fit the file" in str(refused.value.problems[0])
    assert "import with the segment numbering sorted" in str(refused.value.problems[0])


def test_scattered_segments_leave_auto_undecided_and_flag_a_chosen_numbering(campaign: Any) -> None:
    scattered = [5, 17, 33, 48, 61, 99]  # a few segments of five documents
    with pytest.raises(UploadError) as refused:
        imported(campaign, wmt(scattered), "auto")
    assert "choose the segment numbering" in str(refused.value.problems[0])
    record = imported(campaign, wmt(scattered), "upload")
    report = record.summary["segment_numbering"]
    assert report["applied"] == "upload"
    assert report["warnings"][0].startswith("NOT CONFIRMED")
    assert judged(campaign) == sorted(
        [("doc2", "1"), ("doc2", "13"), ("doc4", "6"), ("doc5", "8"), ("doc7", "1"), ("doc10", "7")]
    )


def test_a_line_beyond_the_test_set_is_refused_under_any_numbering(campaign: Any) -> None:
    for numbering in ("upload", "sorted", "auto"):
        with pytest.raises(UploadError) as refused:
            imported(campaign, wmt([*WHOLE, 111]), numbering)
        problem = refused.value.problems[0]
        assert problem.line == 26
        assert "sid 111 is outside the campaign's test set" in problem.message


def test_an_unknown_numbering_is_refused(campaign: Any) -> None:
    with pytest.raises(UploadError, match="unknown segment numbering 'line'; use auto, upload"):
        imported(campaign, wmt(WHOLE), "line")


def test_a_structured_sid_beyond_its_document_is_refused(campaign: Any) -> None:
    sids = [f"de-en-0-3-{1000000 + n}.{n}_{n}" for n in range(1, 12)]  # eleven of doc11's ten
    with pytest.raises(UploadError) as refused:
        imported(campaign, wmt(sids), "sorted")
    assert refused.value.problems[0].line == 12
    assert "sid de-en-0-3-1000011.11_11 is outside" in refused.value.problems[0].message


def test_structured_sids_count_the_documents_by_sorted_id(campaign: Any) -> None:
    sids = [f"de-en-0-2-{1000000 + n}.{n}_{n}" for n in range(1, 9)]  # the second id: doc10
    record = imported(campaign, wmt(sids), "auto")
    assert judged(campaign) == sorted(("doc10", str(n)) for n in range(1, 9))
    assert record.summary["segment_numbering"]["applied"] == "sorted"


def test_a_test_set_in_id_order_reads_the_same_under_both(owner: AbstractBaseUser) -> None:
    made, *_ = make_text_campaign(owner=owner, n_segments=20, system_names=["nmt"])
    record = imported(made, wmt([3, 14]), "auto")
    report = record.summary["segment_numbering"]
    assert report["applied"] == "upload"
    assert "both conventions name the same segment for every row" in report["checks"]
    assert report["warnings"] == []


def test_the_page_api_and_command_take_the_numbering(
    campaign: Any, owner: AbstractBaseUser, tmp_path: Path
) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    page = reverse("campaign_judgment_import", args=[campaign.pk])
    fields = {"file_format": "wmt", "protocol": "direct_assessment", "line_base": "1"}
    upload = wmt(WHOLE)
    posted = client.post(
        page,
        {
            **fields,
            "segment_numbering": "sorted",
            "file": SimpleUploadedFile("a.tsv", upload.content),
        },
    )
    assert posted.status_code == 302
    [job] = imports_run_queued()
    assert job.status == "done", job.problems
    assert job.result.options["segment_numbering"] == "sorted"
    assert "Segment ids read as: Position after sorting" in judgment_import_state(job)["message"]

    api = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    body = {"segment_numbering": "upload", "dry_run": "true"}
    refused = client.post(api, {**body, "file": SimpleUploadedFile("a.tsv", upload.content)})
    assert refused.status_code == 400
    assert "does not fit the file" in str(refused.json())

    path = tmp_path / "ad-good-raw.csv"
    path.write_bytes(upload.content)
    with pytest.raises(CommandError, match="import with the segment numbering sorted"):
        call_command(
            "import_judgments", str(campaign.pk), str(path), "--segment-numbering", "upload"
        )
    out = StringIO()
    call_command(
        "import_judgments", str(campaign.pk), str(path), "--segment-numbering", "sorted", stdout=out
    )
    assert "Segment ids read as: Position after sorting the documents by id" in out.getvalue()
