"""In a real Chromium, with a real Celery worker: an organizer previews an Appraise ESA export
with whole-document rows on the import page with "Document-level score" ticked, sees how many
document scores it gives, imports it, and the worker stores them as document judgments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import DocumentJudgment
from tests.browser.annotator_pages import log_in
from tests.factories import lines, make_campaign, make_user
from tests.support.appraise_documents import DOC_IDS, OUTPUTS, ROWS, SOURCE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_document_scores_are_previewed_and_imported_from_the_page(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, output_dir: Path, tmp_path: Path
) -> None:
    owner = make_user("dora", organizer=True)
    campaign: Any = make_campaign(owner=owner, name="Appraise documents")
    files = [
        UploadFile("src.de", lines(SOURCE), "source"),
        UploadFile("docs.txt", lines(DOC_IDS), "doc_ids"),
    ] + [UploadFile(f"{system}.txt", lines(texts), "systems") for system, texts in OUTPUTS.items()]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    path = tmp_path / "wmt24-esa.csv"
    path.write_text("\n".join(ROWS) + "\n", encoding="utf-8")
    log_in(page, live_server, "dora", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/analysis/import/")
    page.select_option("#id_protocol", "esa")
    page.check("#id_document_score")
    page.set_input_files("#id_file", str(path))
    page.click("main button:has-text('Preview')")
    page.wait_for_selector("#import-preview")
    assert "give 5 document-level scores" in page.inner_text("#import-preview")
    page.screenshot(path=shots / "document-score-import-preview.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "document-score-import-preview-390.png", full_page=True)

    page.set_input_files("#id_file", str(path))
    page.check("#id_document_score")
    page.click("main button.primary:has-text('Import')")
    page.wait_for_selector("#import-job")
    celery_worker_process()
    page.wait_for_function(
        "() => document.getElementById('import-job').dataset.jobStatus === 'done'",
        timeout=120_000,
    )
    assert DocumentJudgment.objects.filter(screen__task__config__campaign=campaign).count() == 5
