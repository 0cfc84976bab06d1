"""Before anything is stored, an import shows a few judged segments with the texts their
annotators saw (spans as the characters marked) and says which checks of alignment ran; the
stored import records the same checks. On the page, the API's dry run and the command."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.judgment_import.formats import judgment_file_text
from annotation.judgment_import.services import judgments_import, judgments_preview
from annotation.models import JudgmentImport, Segment, Translation
from tests.factories import PASSWORD, make_campaign, plain_files
from tests.support.mqm_tsv import mqm_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(owner: Any) -> Any:
    made = make_campaign(owner=owner)
    campaign_data_import(campaign=made, files=plain_files(), user=owner)
    return made


def test_a_file_with_texts_previews_its_screens_and_the_text_checks(campaign: Any) -> None:
    preview = judgments_preview(campaign=campaign, upload=mqm_file())
    assert [sample.annotator for sample in preview.samples] == ["rater1", "rater1", "rater2"]
    # Each sample is the campaign's segment and the system's very text, with its spans.
    for sample in preview.samples:
        doc, seg = sample.segment.split(":")
        segment = Segment.objects.get(campaign=campaign, document__external_id=doc, external_id=seg)
        assert sample.source == segment.source
        for output in sample.outputs:
            texts = set(
                Translation.objects.filter(
                    segment=segment, run__system__name=output.system
                ).values_list("text", flat=True)
            )
            assert output.text in texts
            for marked, severity, _ in output.spans:
                assert marked in output.text or marked == "(omission)"
                assert severity in {"minor", "major", "critical", "no-error"}
    last = preview.samples[-1]
    assert last.outputs[0].spans == [("Dog the barks.", "major", "non-translation")]
    assert preview.checks[1:3] == [
        f"the source text of {preview.rows} rows is the campaign's segment",
        f"the shown output of {preview.rows} rows is the campaign's text",
    ]
    assert "carries no texts" not in " ".join(preview.checks)
    record = judgments_import(campaign=campaign, upload=mqm_file(), user=None)
    assert record.summary["checks"] == preview.checks


def _no_texts() -> UploadFile:
    rows = [
        {"annotator": "w1", "system": system, "segment": str(n), "type": "SYSTEM", "score": "60"}
        for system in ("good", "bad")
        for n in (1, 2)
    ]
    return UploadFile("plain.tsv", judgment_file_text(rows))


def test_a_file_without_texts_says_what_it_could_check(campaign: Any) -> None:
    preview = judgments_preview(campaign=campaign, upload=_no_texts())
    assert "the file carries no texts" in preview.checks[-1]
    assert not any("source text of" in check for check in preview.checks)
    segments = {f"{s.document.external_id}:{s.external_id}": s for s in Segment.objects.all()}
    first = preview.samples[0]
    assert first.source == segments[first.segment].source
    assert first.outputs[0].values == {"score": 60.0}


def test_the_page_the_api_and_the_command_show_the_samples(
    campaign: Any, owner: Any, tmp_path: Path
) -> None:
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    page = client.post(
        reverse("campaign_judgment_import", args=[campaign.pk]),
        {
            "file_format": "auto",
            "protocol": "direct_assessment",
            "line_base": "1",
            "preview": "1",
            "file": SimpleUploadedFile("m.tsv", mqm_file().content),
        },
    )
    html = page.content.decode()
    assert page.status_code == 200, html[:3000]
    assert 'id="import-checks"' in html
    assert "Dog the barks." in html
    assert html.count('class="import-sample"') == 3
    api = client.post(
        reverse("api-campaign-judgment-imports", args=[campaign.pk]),
        {"file": SimpleUploadedFile("m.tsv", mqm_file().content), "dry_run": "true"},
    )
    assert api.status_code == 200, api.content[:2000]
    body = api.json()
    assert len(body["samples"]) == 3
    assert body["samples"][2]["outputs"][0]["spans"][0]["text"] == "Dog the barks."
    assert body["checks"] == judgments_preview(campaign=campaign, upload=mqm_file()).checks
    path = tmp_path / "m.tsv"
    path.write_bytes(mqm_file().content)
    out = StringIO()
    call_command("import_judgments", str(campaign.pk), str(path), "--dry-run", stdout=out)
    printed = out.getvalue()
    assert "Checks of alignment:" in printed
    assert "'Dog the barks.' major non-translation" in printed
    assert not JudgmentImport.objects.exists()
