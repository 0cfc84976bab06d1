"""In a real Chromium, with a real Celery worker: an organizer uploads a judgment file on the
import page, lands on the import's own page showing it queued, and once a worker takes it the
page follows it to the end by itself: done with what was stored and a link to the analysis. A
refused file ends on its page with the problems naming file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import JudgmentImport
from tests.analysis_factories import make_text_campaign
from tests.browser.annotator_pages import log_in
from tests.factories import make_user
from tests.support.judgment_files import N_SEGMENTS, SYSTEMS, evalsite_file, make_rows

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def upload(page: Any, url: str, path: Path) -> None:
    page.goto(url)
    page.set_input_files("#id_file", str(path))
    page.click("main button.primary:has-text('Import')")
    page.wait_for_selector("#import-job")


def test_an_import_is_followed_on_its_page_from_queued_to_done(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, output_dir: Path, tmp_path: Path
) -> None:
    owner = make_user("ida", organizer=True)
    campaign, *_ = make_text_campaign(
        owner=owner, n_segments=N_SEGMENTS, system_names=SYSTEMS, name="Past campaign"
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    good = tmp_path / "past.tsv"
    good.write_bytes(evalsite_file(make_rows()))
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"annotator\tsystem\tsegment\ttype\tscore\nw\tgoogle\t1\tSYSTEM\t50\n")
    log_in(page, live_server, "ida", lands_on="**/campaigns/")
    import_url = f"{live_server.url}/campaigns/{campaign.pk}/analysis/import/"

    upload(page, import_url, good)
    assert page.inner_text("[data-job-field=status]") == "Queued"
    assert "Waiting for a worker." in page.inner_text("#import-job")
    page.screenshot(path=shots / "judgment-import-queued.png", full_page=True)

    # No worker was running: the import waited. One starts, and the page follows it.
    celery_worker_process()
    page.wait_for_function(
        "() => document.getElementById('import-job').dataset.jobStatus === 'done'",
        timeout=120_000,
    )
    page.wait_for_selector("#import-job a:has-text('Open the analysis')")
    assert "Imported 120 judgments of 3 annotators" in page.inner_text("#import-job")
    assert JudgmentImport.objects.filter(campaign=campaign).count() == 1
    page.screenshot(path=shots / "judgment-import-done.png", full_page=True)

    upload(page, import_url, bad)
    page.wait_for_selector(".problems", timeout=120_000)
    assert "bad.tsv, line 2" in page.inner_text(".problems").replace("\n", " ")
    assert "unknown system 'google'" in page.inner_text(".problems")
    assert page.inner_text("[data-job-field=status]") == "Failed"
    page.screenshot(path=shots / "judgment-import-failed.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "judgment-import-failed-390.png", full_page=True)
    # The import page lists both, newest first.
    page.goto(import_url)
    files = page.locator("#import-jobs tbody td.name").all_inner_texts()
    assert files == ["bad.tsv", "past.tsv"]
    page.screenshot(path=shots / "judgment-import-list-390.png", full_page=True)
    assert JudgmentImport.objects.filter(campaign=campaign).count() == 1
