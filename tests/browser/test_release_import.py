"""In a real Chromium: an organizer turns a Google MQM TSV release into a campaign from the
campaigns list — previews it (the judged segments with their texts, the checks, the human
system marked; nothing kept), then creates it and lands on its analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import Campaign, JudgmentValue
from tests.browser.annotator_pages import log_in
from tests.factories import make_user
from tests.support.google_mqm_release import tsv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_previews_then_creates_a_campaign_from_a_release(  # type: ignore[no-untyped-def]
    page: Any, live_server, tmp_path: Path, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    make_user("release-browser", organizer=True)
    release = tmp_path / "mqm_ted_ende.tsv"
    release.write_bytes(tsv().content)
    log_in(page, live_server, "release-browser", lands_on="**/campaigns/")
    page.get_by_role("link", name="New campaign from a release").click()
    page.fill("#id_campaign_name", "TED en-de")
    page.set_input_files("#id_file", str(release))
    page.click("main button[name=preview]")
    page.wait_for_selector("#release-preview")
    preview = page.inner_text("#release-preview")
    assert "ref-A · human" in preview
    assert page.locator("#release-preview .import-sample").count() == 3
    assert page.locator("#import-checks li").count() >= 3
    page.screenshot(path=shots / "release-preview.png", full_page=True)
    assert not Campaign.objects.exists()
    page.set_input_files("#id_file", str(release))
    page.click("main button.primary")
    page.wait_for_url("**/analysis/**")
    campaign = Campaign.objects.get()
    assert campaign.name == "TED en-de"
    assert JudgmentValue.objects.filter(judgment__item__task__config__campaign=campaign).count()
    page.screenshot(path=shots / "release-analysis.png", full_page=True)
