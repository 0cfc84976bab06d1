"""In a real Chromium: names typed without a space (a campaign, a protocol, an annotator's
username, at the longest their fields allow) wrap on the organizer's and the annotator's pages
instead of widening them past the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.tasking.services import task_assign_next
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CAMPAIGN = "WMT" + "x" * 197  # 200: Campaign.name's max_length
PROTOCOL = "DA" + "y" * 98  # 100: ProtocolConfig.name's max_length
USERNAME = "annotator" + "z" * 141  # 150: User.username's max_length


# The words of the tables' cells (up to a space or after a hyphen, where lines may break) that
# split over two lines, outside the name cells, which may break a name anywhere: a count split as
# "1500" over "0" reads as two numbers.
SPLIT_WORDS = """(() => {
    const split = [];
    document.querySelectorAll("table.data td:not(.name)").forEach((td) => {
        const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const match of node.data.matchAll(/[^\\s-]+-*/g)) {
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const tops = new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top)));
                if (tops.size > 1) split.push(match[0]);
            }
        }
    });
    return split;
})()"""


def fits_at(page, url: str, width: int, shot: Path) -> None:  # type: ignore[no-untyped-def]
    """Open ``url`` in a window ``width`` pixels wide, take a screenshot, and check that the page
    does not reach past the window."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    page.screenshot(path=shot, full_page=True)
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0, (url, width, sideways)


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
            fits_at(
                page, f"{live_server.url}{url}", width, shots / f"long-names-{name}-{width}.png"
            )

    page.context.clear_cookies()
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server, "organizer-long", lands_on="**/campaigns/")
    for name, url in [
        ("campaigns", "/campaigns/"),
        ("campaign", f"/campaigns/{campaign.pk}/"),
        ("setup", f"/campaigns/{campaign.pk}/annotation/"),
        ("tasks", f"/campaigns/{campaign.pk}/annotation/{config.pk}/"),
    ]:
        for width in (1280, 700):
            fits_at(
                page, f"{live_server.url}{url}", width, shots / f"long-names-{name}-{width}.png"
            )
            split = page.evaluate(SPLIT_WORDS)
            assert not split, (name, width, split)
