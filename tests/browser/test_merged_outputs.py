"""In a real Chromium: three systems translated a sentence alike, so the adequacy/fluency
screen shows that translation once among three outputs; the annotator answers it with the
keys, and the organizer's judgment report (through the API) credits the answer to all three
systems. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import Judgment, TaskBuild
from annotation.tasking.background import task_build_run
from annotation.tasking.services import task_assign_next
from tests.browser.annotator_pages import log_in
from tests.factories import lines, make_campaign, make_config, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = {
    "alpha": "The house is small.",
    "bravo": "The house  is small. ",
    "charlie": "The house is small.",
    "delta": "A small house it is.",
    "echo": "The home is tiny.",
}


def merged_campaign(owner: Any) -> Any:
    campaign = make_campaign(owner=owner, name="Merged outputs")
    files = [
        UploadFile("src.de", lines(["Das Haus ist klein."]), "source"),
        UploadFile("ref.en", lines(["The house is small."]), "references"),
    ]
    files += [UploadFile(f"{name}.txt", lines([text]), "systems") for name, text in SYSTEMS.items()]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    return make_config(
        campaign,
        "adequacy_fluency",
        outputs_per_screen=5,
        merge_identical=True,
        qc_bad_reference=0,
        qc_repeat=0,
        qc_reference=0,
    )


def test_one_output_is_shown_for_three_systems_and_credited_to_all(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    owner = make_user("organizer-merged", organizer=True)
    config = merged_campaign(owner)
    annotator = make_user("merged-reader")
    config.campaign.annotators.add(annotator)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    log_in(page, live_server, "merged-reader")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")

    texts = [t.strip() for t in page.locator("article.output p.text").all_inner_texts()]
    assert len(texts) == 3
    assert sorted(texts) == sorted(
        ["The house is small.", "A small house it is.", "The home is tiny."]
    )
    page.screenshot(path=shots / "merged-outputs-1280.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "merged-outputs-390.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})

    # Six questions (adequacy and fluency of three outputs): a digit answers the focused one
    # and moves on; Enter submits, and the finished task leads to My tasks.
    for key in ["4", "5", "2", "3", "1", "2"]:
        page.keyboard.press(key)
    with page.expect_navigation(url="**/my/tasks/**"):
        page.keyboard.press("Enter")
    [judgment] = Judgment.objects.filter(annotator=annotator)
    shown = {o.pk: o for o in judgment.item.outputs.all()}
    merged = next(pk for pk, o in shown.items() if o.text.strip() == "The house is small.")
    adequacy = judgment.answer[str(merged)]["adequacy"]

    # The organizer's report, through the API: one row per system that produced the text.
    page.context.clear_cookies()
    log_in(page, live_server, "organizer-merged", lands_on="**/campaigns/")
    answer = page.request.get(
        f"{live_server.url}/api/campaigns/{config.campaign.pk}/reports/judgments.jsonl"
    )
    assert answer.ok
    rows = [json.loads(line) for line in answer.text().splitlines()]
    credited = [r for r in rows if r["criterion"] == "adequacy" and r["merged"] == merged]
    assert sorted(r["system"] for r in credited) == ["alpha", "bravo", "charlie"]
    assert {r["raw"] for r in credited} == {adequacy}
    others = [r for r in rows if r["criterion"] == "adequacy" and r["merged"] is None]
    assert sorted(r["system"] for r in others) == ["delta", "echo"]


def test_the_setup_page_offers_the_switch_and_says_what_merging_saved(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    owner = make_user("organizer-saved", organizer=True)
    config = merged_campaign(owner)
    build = TaskBuild.objects.create(config=config, requested_by=owner)
    task_build_run(build_id=build.pk)
    log_in(page, live_server, "organizer-saved", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{config.campaign.pk}/annotation/")
    # Five outputs, three of them one text: one screen of three outputs, two fewer to judge.
    message = page.inner_text(f"#build-{config.pk} .build-message")
    assert "Merging identical outputs saved 0 screens and 2 judgments" in message
    assert page.locator("#id_merge_identical").is_checked()
    page.screenshot(path=shots / "merged-setup-1280.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "merged-setup-390.png", full_page=True)
