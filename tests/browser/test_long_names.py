"""In a real Chromium: names typed without a space (a campaign, a protocol, an annotator's
username, at the longest their fields allow) wrap on the organizer's and the annotator's pages
instead of widening them past the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.tasking import task_assign_next
from tests.browser.annotator_pages import log_in
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CAMPAIGN = "WMT" + "x" * 197  # 200: Campaign.name's max_length
PROTOCOL = "DA" + "y" * 98  # 100: ProtocolConfig.name's max_length
USERNAME = "annotator" + "z" * 141  # 150: User.username's max_length


def sideways(page) -> int:  # type: ignore[no-untyped-def]
    """How far the page reaches past the window, in CSS pixels (0: it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def test_long_names_wrap_instead_of_widening_the_pages(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-long", organizer=True)
    campaign = make_rich_campaign(owner=owner, name=CAMPAIGN)
    annotator = make_user(USERNAME)
    campaign.annotators.add(annotator)
    config = make_config(campaign, "direct_assessment", name=PROTOCOL, outputs_per_screen=1)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    shots = output_dir / "screenshots"

    log_in(page, live_server, USERNAME)
    for name, url in [
        ("my-tasks", "/my/tasks/"),
        ("annotate", f"/annotate/{assignment.pk}/"),
    ]:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{live_server.url}{url}")
            page.screenshot(path=shots / f"long-names-{name}-{width}.png", full_page=True)
            assert sideways(page) <= 0, (name, width)

    page.context.clear_cookies()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "organizer-long")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    for name, url in [
        ("campaigns", "/campaigns/"),
        ("campaign", f"/campaigns/{campaign.pk}/"),
        ("setup", f"/campaigns/{campaign.pk}/annotation/"),
        ("tasks", f"/campaigns/{campaign.pk}/annotation/{config.pk}/"),
    ]:
        page.goto(f"{live_server.url}{url}")
        page.screenshot(path=shots / f"long-names-{name}.png", full_page=True)
        assert sideways(page) <= 0, name
