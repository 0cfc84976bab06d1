"""In a real Chromium: an organizer logs in, creates a campaign, uploads plain-text files and sees
the counts; a broken upload shows an error naming file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import Campaign, Segment
from tests.factories import PASSWORD, SYSTEMS, builds_run_queued, lines, make_user, plain_files

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def write_files(folder: Path) -> dict[str, list[str]]:
    paths: dict[str, list[str]] = {}
    for f in plain_files():
        path = folder / f.name
        path.write_bytes(f.content)
        paths.setdefault(f.role, []).append(str(path))
    return paths


def _log_in_and_create_a_campaign(page: Any, base: str, shots: Path) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")

    page.get_by_role("link", name="New campaign", exact=True).click()
    page.fill("#id_name", "Browser campaign <b>de-en</b>")
    page.fill("#id_source_language", "de")
    page.fill("#id_target_language", "en")
    page.select_option("#id_status", "active")
    page.screenshot(path=shots / "campaign-create.png", full_page=True)
    page.click("main button[type=submit]")
    page.wait_for_url("**/upload/")


def _upload_and_see_the_counts(page: Any, tmp_path: Path, shots: Path) -> None:
    files = write_files(tmp_path)
    page.set_input_files("#id_source", files["source"])
    page.set_input_files("#id_references", files["references"])
    page.set_input_files("#id_systems", files["systems"])
    page.set_input_files("#id_doc_ids", files["doc_ids"])
    page.screenshot(path=shots / "upload-form.png", full_page=True)
    page.click("main button[type=submit]")
    page.wait_for_selector("#counts")

    def count(name: str) -> str:
        return page.inner_text(f"dd[data-count={name}]").strip()

    assert count("segments") == "4"
    assert count("documents") == "2"
    assert count("references") == "8"
    assert count("systems") == "2"
    assert count("runs") == "4"
    assert count("translations") == "16"
    assert "Upload stored" in page.inner_text(".messages")
    # The campaign name came from a form: it is shown as text, not markup.
    assert page.inner_text("h1") == "Browser campaign <b>de-en</b>"
    page.screenshot(path=shots / "campaign-detail.png", full_page=True)


def _upload_a_broken_file(page: Any, tmp_path: Path, shots: Path) -> None:
    page.click("text=Upload data")
    broken = tmp_path / "broken.opt0.txt"
    broken.write_bytes(lines(SYSTEMS[("bad", "opt0")][:3]))
    page.set_input_files("#id_systems", [str(broken)])
    page.click("main button[type=submit]")
    page.wait_for_selector(".problems")
    problem = page.inner_text(".problems li")
    assert "broken.opt0.txt" in problem
    assert "line 4" in problem
    assert "line counts differ" in problem
    page.screenshot(path=shots / "upload-error.png", full_page=True)


def _set_up_the_annotation(page: Any, base: str, campaign: Campaign, shots: Path) -> None:
    # Annotation set-up: add a protocol, build its tasks, create invite links.
    page.goto(f"{base}{campaign.get_absolute_url()}")
    page.click("text=Annotation")
    page.fill("#id_name", "DA source-based")
    page.select_option("#id_protocol", "direct_assessment")
    page.select_option("#id_mode", "source")
    page.fill("#id_items_per_task", "5")
    page.click("form.stacked >> text=Add protocol")
    page.wait_for_selector(".messages")
    page.click("#protocols button:has-text('Build tasks')")
    page.wait_for_selector(".messages")
    assert "Build queued" in page.inner_text(".messages")
    # The build, as a worker would run it (test_setup_build.py has a real worker); the page
    # follows it and reloads when it is done.
    builds_run_queued()
    page.wait_for_selector("#protocols .build-row:has-text('Built 2 tasks')")
    page.wait_for_selector("#protocols a:has-text('DA source-based')")
    page.fill("#id_label", "Team A")
    page.fill("#id_count", "2")
    page.click("#invites button:has-text('Create links')")
    page.wait_for_selector("[data-invite-url]")
    assert page.locator("[data-invite-url]").count() == 2
    page.screenshot(path=shots / "annotation-setup.png", full_page=True)
    page.click("#protocols a:has-text('DA source-based')")
    page.wait_for_selector("#tasks")
    page.screenshot(path=shots / "config-tasks.png", full_page=True)


def test_an_organizer_creates_a_campaign_uploads_files_and_sees_counts_and_errors(
    page,
    live_server,
    tmp_path: Path,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    make_user("olga", organizer=True)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    _log_in_and_create_a_campaign(page, live_server.url, shots)
    _upload_and_see_the_counts(page, tmp_path, shots)
    _upload_a_broken_file(page, tmp_path, shots)

    campaign = Campaign.objects.get(name__startswith="Browser campaign")
    assert not campaign.systems.filter(name="broken").exists()
    assert Segment.objects.filter(campaign=campaign).count() == 4
    _set_up_the_annotation(page, live_server.url, campaign, shots)

    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}{campaign.get_absolute_url()}")
    page.screenshot(path=shots / "campaign-detail-phone.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the campaign page scrolls sideways on a phone ({width}px)"
