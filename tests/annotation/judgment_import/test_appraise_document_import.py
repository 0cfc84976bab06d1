"""Whole-document rows of Appraise's ESA export (field 9 ``True``: the score of the whole
document the annotator saw) imported as document-level scores: a file written here by hand with
segment rows and whole-document rows of two documents, imported with document scores asked for,
stores one document judgment per annotator and document screen, lays the imported tasks out as
document screens, and gives each system the document score worked out here by hand; without
document scores the file is refused, naming the first whole-document row."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.analysis.documents import campaign_document_scores
from annotation.analysis.settings import AnalysisSettings
from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import, judgments_preview
from annotation.models import DocumentJudgment, Item, JudgmentValue, ProtocolConfig
from tests.factories import PASSWORD, imports_run_queued, make_user
from tests.support.appraise_documents import (
    ANALYSED,
    MEANS,
    ROWS,
    appraise_documents_campaign,
    line,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner() -> Any:
    return make_user("appraise-doc-importer", organizer=True)


@pytest.fixture
def campaign(owner: Any) -> Any:
    made = appraise_documents_campaign(owner, "Appraise documents")
    return made


def export(rows: list[str]) -> UploadFile:
    return UploadFile("wmt24-esa-documents.csv", ("\n".join(rows) + "\n").encode(), "")


def document_means() -> dict[str, float]:
    scores: dict[str, list[int]] = defaultdict(list)
    for system, score in DocumentJudgment.objects.values_list("system__name", "score"):
        scores[system].append(score)
    return {s: sum(v) / len(v) for s, v in scores.items()}


def test_whole_document_rows_become_document_scores_on_document_screens(campaign) -> None:  # type: ignore[no-untyped-def]
    options = ImportOptions(document_score=True)
    preview = judgments_preview(campaign=campaign, upload=export(ROWS), options=options)
    assert (preview.rows, preview.judgments, preview.document_judgments) == (9, 9, 5)
    assert not DocumentJudgment.objects.exists()

    record = judgments_import(campaign=campaign, upload=export(ROWS), user=None, options=options)
    config = record.config
    assert (config.protocol, config.screen, config.document_score) == ("esa", "document", True)
    assert record.summary["document_judgments"] == 5
    assert JudgmentValue.objects.count() == 9
    assert document_means() == pytest.approx(MEANS)
    [summary] = campaign_document_scores(campaign=campaign, settings=AnalysisSettings())
    assert {s.name: s.mean_raw for s in summary.systems} == pytest.approx(ANALYSED)

    # Each document judgment points to the first item of its screen, whose items are its
    # document's segments in order, in its system's output, consecutive in the task.
    for judgment in DocumentJudgment.objects.select_related("screen", "document"):
        screen = judgment.screen
        assert screen.screen == screen.position
        items = list(
            Item.objects.filter(task=screen.task_id, screen=screen.position).order_by("position")
        )
        assert [i.position for i in items] == list(range(screen.position, screen.position + 2))
        assert [i.segment.document.external_id for i in items] == [
            judgment.document.external_id
        ] * 2
        assert [i.segment.position for i in items] == sorted(i.segment.position for i in items)
        assert {o.system_id for i in items for o in i.outputs.all()} == {judgment.system_id}
        assert judgment.assignment.task_id == screen.task_id
        assert judgment.annotator_id == judgment.assignment.annotator_id
    bob_bad = DocumentJudgment.objects.get(system__name="bad", annotator__username__endswith="bob")
    unjudged = Item.objects.filter(task=bob_bad.screen.task_id, judgments__isnull=True)
    assert [i.segment.source for i in unjudged] == ["Es regnet."]


def test_document_rows_without_document_scores_are_refused_naming_the_row(campaign) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UploadError) as refused:
        judgments_import(campaign=campaign, upload=export(ROWS), user=None)
    [problem] = refused.value.problems
    assert problem.line == 3
    assert "whole-document item" in problem.message
    assert "document-level score" in problem.message
    assert not ProtocolConfig.objects.filter(campaign=campaign).exists()
    assert not DocumentJudgment.objects.exists()


def test_a_document_row_of_an_unknown_document_refuses_the_whole_file(campaign) -> None:  # type: ignore[no-untyped-def]
    rows = [*ROWS, line("bob", "good", 9, 50, "d9", whole=True)]
    with pytest.raises(UploadError) as refused:
        judgments_import(
            campaign=campaign,
            upload=export(rows),
            user=None,
            options=ImportOptions(document_score=True),
        )
    [problem] = refused.value.problems
    assert (problem.line, "unknown document 'd9'" in problem.message) == (len(rows), True)
    assert not ProtocolConfig.objects.filter(campaign=campaign).exists()


def test_the_command_imports_document_scores_and_refuses_without_the_option(  # type: ignore[no-untyped-def]
    campaign, tmp_path: Path
) -> None:
    path = tmp_path / "wmt24-esa-documents.csv"
    path.write_text("\n".join(ROWS) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_judgments", str(campaign.pk), str(path), stdout=io.StringIO())
    assert "line 3" in str(refused.value)
    assert "--document-score" in str(refused.value)
    out = io.StringIO()
    call_command(
        "import_judgments", str(campaign.pk), str(path), "--document-score", "--dry-run", stdout=out
    )
    assert "5 document scores. Nothing stored." in out.getvalue()
    assert not DocumentJudgment.objects.exists()
    out = io.StringIO()
    call_command(
        "import_judgments", str(campaign.pk), str(path), "--document-score", "-v", "0", stdout=out
    )
    assert "and 5 document scores as protocol" in out.getvalue()
    assert document_means() == pytest.approx(MEANS)


def test_the_page_previews_the_document_scores_then_imports_them_in_the_background(  # type: ignore[no-untyped-def]
    campaign, owner
) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    url = reverse("campaign_judgment_import", args=[campaign.pk])
    fields = {"file_format": "auto", "protocol": "esa", "line_base": "1", "document_score": "on"}
    body = "\n".join(ROWS).encode()
    preview = client.post(
        url, {**fields, "preview": "1", "file": SimpleUploadedFile("esa.csv", body)}
    )
    assert preview.status_code == 200
    assert "give 5 document-level scores" in preview.content.decode()
    assert not DocumentJudgment.objects.exists()
    done = client.post(url, {**fields, "file": SimpleUploadedFile("esa.csv", body)})
    assert done.status_code == 302
    [job] = imports_run_queued()
    assert job.status == "done", job.problems
    assert document_means() == pytest.approx(MEANS)


def test_the_api_dry_run_counts_the_document_scores_and_refuses_without_the_option(  # type: ignore[no-untyped-def]
    campaign, owner
) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    url = reverse("api-campaign-judgment-imports", args=[campaign.pk])
    body = "\n".join(ROWS).encode()
    answer = client.post(
        url,
        {"dry_run": "true", "document_score": "true", "file": SimpleUploadedFile("e.csv", body)},
    )
    assert answer.status_code == 200
    assert (answer.json()["judgments"], answer.json()["document_judgments"]) == (9, 5)
    refused = client.post(url, {"dry_run": "true", "file": SimpleUploadedFile("e.csv", body)})
    assert refused.status_code == 400
    [problem] = refused.json()["problems"]
    assert problem["line"] == 3
    assert "document-level score" in problem["message"]
    assert not DocumentJudgment.objects.exists()
