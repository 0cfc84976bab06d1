"""In a real Chromium: an organizer opens the analysis page of a judged campaign, reads the QC
table and the ranking, excludes an annotator with a reason, and downloads a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import AnnotatorDecision
from evalcore.human import synthetic_scores
from tests.analysis_factories import build_judged_campaign
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_organizer_reads_the_analysis_excludes_an_annotator_and_downloads_a_report(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("olivia", organizer=True)
    table = synthetic_scores(
        n_annotators=5, n_systems=4, n_segments=30, tasks_per_annotator=2, careless=[4], seed=12
    ).judgments
    built = build_judged_campaign(
        owner=owner,
        judgments=table,
        system_names=["online-B", "uedin-nmt", "<em>jhu-pbmt</em>", "rbmt"],
        campaign_name="WMT-style de-en",
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{built.campaign.pk}/")
    page.click("text=Analysis: QC, rankings, agreement")
    page.wait_for_selector("table.systems")
    page.screenshot(path=shots / "analysis.png", full_page=True)

    systems = page.locator("table.systems tbody tr")
    assert systems.count() == 4
    assert "<em>jhu-pbmt</em>" in page.inner_text("table.systems")  # shown as text
    failed = page.locator("table.annotators tr", has=page.locator(".qc-failed"))
    assert failed.count() == 1
    assert "judge04" in failed.inner_text()

    row = page.locator("table.annotators tbody tr").first
    row.locator("input[name=reason]").fill("second language speaker")
    row.locator("button[value=exclude]").click()
    page.wait_for_selector(".messages")
    assert "Annotator excluded." in page.inner_text(".messages")
    decision = AnnotatorDecision.objects.get(campaign=built.campaign)
    assert not decision.included
    assert decision.reason == "second language speaker"
    page.screenshot(path=shots / "analysis-after-decision.png", full_page=True)

    page.click("summary:has-text('Settings')")
    page.select_option("#id_test", "bootstrap")
    page.fill("#id_resamples", "200")
    page.screenshot(path=shots / "analysis-settings.png", full_page=False)
    page.click("#analysis-settings button[type=submit]")
    page.wait_for_url("**test=bootstrap**")
    assert "clusters by the one-sided paired bootstrap" in page.inner_text("section.criterion")

    with page.expect_download() as download_info:
        page.locator("#downloads a", has_text="LaTeX").click()
    download = download_info.value
    assert download.suggested_filename == "wmt-style-de-en-systems.tex"
    assert r"\begin{tabular}" in Path(download.path()).read_text()
