"""In a real Chromium: the browser's Back and Forward buttons bring the annotator to where they
are in the task, never to an item or progress they have gone past (the pages are not taken from
the browser's cache), and so does the footer's language switch."""

from __future__ import annotations

import pytest

from annotation.tasking.services import task_assign_next
from tests.browser.annotator_pages import at_the_task, log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_back_after_leaving_the_task_shows_the_current_item_and_progress(
    page,
    live_server,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-back", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user("goes-back")
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", outputs_per_screen=1)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    log_in(page, live_server, "goes-back")
    assert "0 / 10" in page.inner_text("#my-assignments")

    page.click("#my-assignments a:has-text('Continue')")
    page.wait_for_selector("fieldset.criterion.focused")
    for done, score in [(1, "30"), (2, "60")]:
        page.keyboard.type(score)
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => document.getElementById('progress')?.value === {done}")

    # To My tasks and back: item 3, two done — not item 1 as the page first came.
    page.click("header a:has-text('My tasks')")
    page.wait_for_url("**/my/tasks/")
    assert "2 / 10" in page.inner_text("#my-assignments")
    page.go_back()
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.title().startswith("Item 3 of 10")
    assert page.inner_text("#progress-text") == "2 of 10 done"
    # And forward again: My tasks as it is now, not as it was at the start.
    page.keyboard.type("90")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 3")
    page.go_forward()
    page.wait_for_url("**/my/tasks/")
    assert "3 / 10" in page.inner_text("#my-assignments")
    page.go_back()
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.title().startswith("Item 4 of 10")
    page.keyboard.type("50")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 4")
    assert page.locator("#annotate-error").is_hidden()


def test_the_language_switch_after_a_revision_returns_to_the_current_item(
    page,
    live_server,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, "switches-language")
    for done, score in [(1, "30"), (2, "60")]:
        page.keyboard.type(score)
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => document.getElementById('progress')?.value === {done}")
    # Revise item 1; the current item (3) then comes in place, at the task's own address.
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/1/")
    page.wait_for_selector("fieldset.criterion.focused")
    page.keyboard.type("35")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.title.startsWith('Item 3 of 10')")
    assert page.url == f"{live_server.url}/annotate/{assignment.pk}/"
    page.select_option("#language", "de")
    with page.expect_navigation():
        page.click(".lang-form button[type=submit]")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.url == f"{live_server.url}/annotate/{assignment.pk}/"
    assert page.title().startswith("Eintrag 3 von 10")
