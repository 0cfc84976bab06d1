"""In a real Chromium: an organizer pastes usernames into the roster on the setup page, sees who
may pull tasks (and who could not be added), removes one after a confirmation page, and the
removed annotator's My tasks no longer offers the campaign. In German, the roster fits its card
without scrolling sideways at 1280 and 390 px, and the confirmation speaks German."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Campaign
from annotation.tasking.services import task_assign_next
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

    page.click("#roster-table tr[data-username=bob] a:has-text('Remove')")
    page.wait_for_selector("#roster-remove")
    assert "Remove bob from the annotators?" in page.inner_text("#roster-remove")
    # Cancel changes nothing; the second time the organizer confirms.
    page.click("#roster-remove-cancel")
    page.wait_for_selector("#roster-table tr[data-username=bob]")
    page.click("#roster-table tr[data-username=bob] a:has-text('Remove')")
    page.click("#roster-remove-confirm")
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


def fits(page, selector: str) -> None:  # type: ignore[no-untyped-def]
    """The element and the page do not scroll sideways."""
    sizes = page.evaluate(
        "(s) => { const e = document.querySelector(s); return [e.scrollWidth, e.clientWidth,"
        " document.documentElement.scrollWidth, window.innerWidth]; }",
        selector,
    )
    assert sizes[0] <= sizes[1], f"{selector} scrolls sideways: {sizes}"
    assert sizes[2] <= sizes[3], f"the page scrolls sideways: {sizes}"


def test_the_roster_fits_and_asks_before_removing_in_german(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("rosa", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Kader", status=Campaign.Status.ACTIVE)
    config = make_config(campaign, items_per_task=5, name="AF")
    names = ("ann", "bernadette-von-hohenzollern-sigmaringen", "carl")
    for name in names:
        campaign.annotators.add(make_user(name))
    task_assign_next(config=config, annotator=campaign.annotators.get(username="carl"))
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page.context.add_cookies([{"name": "django_language", "value": "de", "url": live_server.url}])

    log_in(page, live_server, "rosa", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")
    assert "1 in Arbeit · 0 erledigt · 0 Bewertungen" in page.inner_text(
        "#roster-table tr[data-username=carl]"
    )
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator("#roster").scroll_into_view_if_needed()
        fits(page, "#roster .table-wrap")
        page.locator("#roster").screenshot(path=shots / f"roster-de-{width}.png")

    page.click("#roster-table tr[data-username=carl] a:has-text('Entfernen')")
    page.wait_for_selector("#roster-remove")
    text = page.inner_text("#roster-remove")
    assert "carl aus den Annotatoren entfernen?" in text
    assert "Die Aufgabe in Arbeit geht zurück in den Pool." in text
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        fits(page, "#roster-remove")
        page.screenshot(path=shots / f"roster-remove-de-{width}.png", full_page=True)
    page.click("#roster-remove-confirm")
    page.wait_for_selector(".messages")
    assert "carl kann in dieser Kampagne keine Aufgaben mehr übernehmen." in page.inner_text(
        ".messages"
    )
    assert page.locator("#roster-table tr[data-username=carl]").count() == 0
