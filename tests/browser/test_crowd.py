"""In a real Chromium: an organizer makes a Prolific crowd link; a worker opens its study URL with
their PROLIFIC_PID, answers a whole direct-assessment task with the keyboard (bad references
scored low), sees their completion code with the way back to Prolific; the organizer finds the
worker in the completions table and verifies the code. Screenshots at 1280 and 390 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Assignment, CrowdWorker, Item, ItemKind
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORKER = "5f1e2d3c4b5a697887766554"


def shoot(page, path: Path, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Screenshots at desktop and phone width; the page must not scroll sideways on a phone."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator(selector).scroll_into_view_if_needed()
        page.screenshot(path=path.with_name(f"{path.stem}-{width}.png"), full_page=True)
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{path.stem} scrolls sideways at {width}px ({scroll}px)"
    page.set_viewport_size({"width": 1280, "height": 900})


def keys_for(assignment_id: str) -> list[str]:
    """The digits that answer the task's current item: a bad reference 20 or 30, else 75 or 85."""
    assignment = Assignment.objects.get(pk=assignment_id)
    item = Item.objects.get(task=assignment.task, position=assignment.items_done)
    low = item.kind == ItemKind.BAD_REFERENCE
    return list(("20", "30") if low else ("75", "85"))[item.position % 2]


def study_url_made(page, setup_url: str) -> str:  # type: ignore[no-untyped-def]
    """From the annotation page, make a Prolific link with Prolific's codes on the crowd page;
    its study URL."""
    page.goto(setup_url)
    page.click("#crowd-setup-link")
    page.select_option("#id_platform", "prolific")
    page.select_option("#id_config", label="DA study · Direct assessment")
    page.fill("#id_pass_code", "C1PASS42")
    page.fill("#id_fail_code", "C9FAIL17")
    page.click("#links button[type=submit]")
    page.wait_for_selector("[data-study-url]")
    study_url: str = page.inner_text("[data-study-url]").strip()
    assert study_url.endswith(
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert "/study/" in study_url
    # The URL pasted into the platform is the same on every visit of the page.
    page.reload()
    assert page.inner_text("[data-study-url]").strip() == study_url
    return study_url


def test_a_crowd_invite_ends_with_a_code_the_organizer_verifies(  # type: ignore[no-untyped-def]
    page, live_server, browser, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Crowd news")
    make_config(
        campaign,
        "direct_assessment",
        name="DA study",
        items_per_task=10,
        outputs_per_screen=1,
        qc_bad_reference=30,
        qc_repeat=0,
        qc_reference=0,
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    # The organizer makes a Prolific link with Prolific's codes and copies its study URL.
    log_in(page, live_server, "olga", lands_on="**/campaigns/")
    study_url = study_url_made(page, f"{live_server.url}/campaigns/{campaign.pk}/annotation/")

    # Prolific fills in the placeholders; the worker starts and answers with the keyboard.
    worker_page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    worker_page.set_default_timeout(15_000)
    # Without the worker id the link refuses, and says which parameter it needs.
    refused = worker_page.goto(study_url.split("?", 1)[0])
    assert refused is not None
    assert refused.status == 400
    assert "PROLIFIC_PID" in worker_page.inner_text("#crowd-invite")
    shoot(worker_page, shots / "crowd-invite-refused.png", "#crowd-invite")
    worker_page.goto(
        study_url.replace("{{%PROLIFIC_PID%}}", WORKER)
        .replace("{{%STUDY_ID%}}", "study1")
        .replace("{{%SESSION_ID%}}", "sess1")
    )
    assert WORKER in worker_page.inner_text("#crowd-invite")
    shoot(worker_page, shots / "crowd-invite.png", "#crowd-invite")
    worker_page.click("#crowd-start")
    worker_page.wait_for_url("**/annotate/**")
    assignment_id = worker_page.url.rstrip("/").rsplit("/", 1)[1]
    for n in range(10):
        worker_page.wait_for_function(
            "(n) => document.getElementById('progress')?.value === n", arg=n
        )
        worker_page.wait_for_selector("fieldset.criterion.focused")
        for key in keys_for(assignment_id):
            worker_page.keyboard.press(key)
        worker_page.keyboard.press("Enter")
    worker_page.wait_for_url(f"**/crowd/done/{assignment_id}/")
    assert worker_page.inner_text("#completion-code").strip() == "C1PASS42"
    assert (
        worker_page.get_attribute("#crowd-return", "href")
        == "https://app.prolific.com/submissions/complete?cc=C1PASS42"
    )
    assert "Return to Prolific" in worker_page.inner_text("#crowd-return")
    shoot(worker_page, shots / "crowd-completion.png", "#crowd-completion")
    worker_page.context.close()
    worker = CrowdWorker.objects.get(worker_id=WORKER)
    assert (worker.passed, worker.qc["status"]) == (True, "passed")

    # The organizer sees the worker's code and verifies the one the worker sent in.
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/crowd/")
    row = page.locator(f"#crowd-workers tr[data-worker='{WORKER}']")
    assert "C1PASS42" in row.inner_text()
    assert "pass" in row.inner_text()
    page.fill("#verify input[name=worker]", WORKER)
    page.fill("#verify input[name=code]", "c1pass42")
    page.click("#verify button[type=submit]")
    page.wait_for_selector("#verify-result")
    result = page.inner_text("#verify-result")
    assert "The code you entered is this worker's." in result
    assert "C1PASS42" in result
    shoot(page, shots / "crowd-organizer.png", "#workers")
