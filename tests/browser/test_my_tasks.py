"""In a real Chromium: "My tasks" on a phone shows every task's status and its button without
scrolling sideways."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.tasking.services import task_assign_next
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_on_a_phone_every_task_shows_its_status_and_button_in_sight(
    browser,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-phone", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Nachrichten aus Deutschland und Österreich")
    annotator = make_user("on-the-bus")
    campaign.annotators.add(annotator)
    for protocol, k in [("direct_assessment", 1), ("adequacy_fluency", 3)]:
        config = make_config(campaign, protocol, outputs_per_screen=k, name=f"{protocol} long name")
        task_assign_next(config=config, annotator=annotator)
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    page = context.new_page()
    log_in(page, live_server, "on-the-bus")
    page.screenshot(path=output_dir / "screenshots" / "my-tasks-phone.png", full_page=True)
    buttons = page.locator("#my-assignments a.button")
    assert buttons.count() == 2
    for locator in (buttons, page.locator("#my-assignments .badge")):
        for i in range(locator.count()):
            box = locator.nth(i).bounding_box()
            assert box is not None
            assert box["x"] >= 0
            assert box["x"] + box["width"] <= 390
    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth")
    # Each line says what it is, since the column headings are not shown.
    status = page.locator("#my-assignments tbody tr").first.locator("td:has(.badge)")
    label = status.evaluate("el => getComputedStyle(el, '::before').content")
    assert label == '"Status: "'
    context.close()
