"""In a real Chromium: an organizer pastes usernames into the roster on the setup page, sees who
may pull tasks (and who could not be added), removes one, and the removed annotator's My tasks
no longer offers the campaign."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Campaign
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_roster_adds_in_bulk_and_removes(  # type: ignore[no-untyped-def]
    page, live_server, browser, output_dir: Path
) -> None:
    owner = make_user("rosa", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Roster run", status=Campaign.Status.ACTIVE)
    make_config(campaign, items_per_task=5, name="AF")
    for name in ("ann", "bob", "carl"):
        make_user(name)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    log_in(page, live_server, "rosa", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")
    page.fill("#roster-add textarea", "ann, bob\ncarl nobody")
    page.click("#roster-add button[type=submit]")
    page.wait_for_selector("#roster-table")
    assert page.locator("#roster-table tbody tr").all_inner_texts()[0].startswith("ann")
    assert [
        page.locator("#roster-table tbody tr").nth(i).get_attribute("data-username")
        for i in range(3)
    ] == ["ann", "bob", "carl"]
    messages = page.inner_text(".messages")
    assert "Added as annotators: ann, bob, carl." in messages
    assert "No user is called nobody." in messages
    page.locator("#roster").screenshot(path=shots / "roster.png")

    page.click("#roster-table tr[data-username=bob] button:has-text('Remove')")
    page.wait_for_selector(".messages")
    assert "bob can no longer take tasks in this campaign." in page.inner_text(".messages")
    assert page.locator("#roster-table tr[data-username=bob]").count() == 0

    # Carl (still on the roster) is offered a task; Bob is not.
    other = browser.new_context().new_page()
    log_in(other, live_server, "carl", lands_on="**/my/tasks/")
    assert "Roster run" in other.inner_text("main")
    other.context.close()
    removed = browser.new_context().new_page()
    log_in(removed, live_server, "bob", lands_on="**/my/tasks/")
    assert "Roster run" not in removed.inner_text("main")
    removed.context.close()
