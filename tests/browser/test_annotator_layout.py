"""In a real Chromium, on a phone's screen (390 px): long unbroken text (a URL, a compound
word) wraps instead of widening the page, and the 0-100 slider takes the card's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Assignment, ItemOutput, Segment
from tests.browser.annotator_pages import holding_a_task, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def on_a_phone(browser, live_server, assignment: Assignment):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    page = context.new_page()
    log_in(page, live_server, assignment.annotator.get_username())
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    return page


def test_long_unbroken_text_wraps_within_a_phone_screen(
    browser,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    assignment = holding_a_task("phone-reader", "adequacy_fluency")
    item = assignment.task.items.get(position=0)
    url = "https://example.com/" + "a" * 200
    Segment.objects.filter(pk=item.segment_id).update(
        source="Die Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherung " + url
    )
    ItemOutput.objects.filter(item=item).update(text="See " + url)
    page = on_a_phone(browser, live_server, assignment)
    page.screenshot(
        path=output_dir / "screenshots" / "annotate-long-text-phone.png", full_page=True
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for selector in (".context .seg", "article.output p.text"):
        right = page.locator(selector).first.evaluate("el => el.getBoundingClientRect().right")
        assert right <= 390
    page.context.close()


def test_the_slider_takes_the_cards_width_on_a_phone(
    browser,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    assignment = holding_a_task("thumb-scorer")
    page = on_a_phone(browser, live_server, assignment)
    page.screenshot(path=output_dir / "screenshots" / "annotate-slider-phone.png", full_page=True)
    card = page.locator("article.output").evaluate(
        "el => el.clientWidth - parseFloat(getComputedStyle(el).paddingLeft)"
        " - parseFloat(getComputedStyle(el).paddingRight)"
    )
    question = page.locator("fieldset.criterion").bounding_box()
    slider = page.locator("input[type=range]").bounding_box()
    assert question is not None
    assert slider is not None
    assert question["width"] >= card - 1
    assert slider["width"] >= 180
    page.context.close()


def test_a_ranking_of_five_long_outputs_keeps_source_and_progress_in_sight_on_a_phone(
    browser,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    from annotation.tasking.services import task_assign_next
    from tests.factories import make_config, make_rich_campaign, make_user

    owner = make_user("organizer-five", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user("five-ranker")
    campaign.annotators.add(annotator)
    config = make_config(campaign, "ranking", outputs_per_screen=4, context_segments=1)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    item = assignment.task.items.get(position=0)
    long_text = " ".join(["a rather long translation that goes on"] * 12)
    ItemOutput.objects.filter(item=item).update(text=long_text)
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="en-US", has_touch=True, is_mobile=True
    )
    page = context.new_page()
    log_in(page, live_server, "five-ranker")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")

    def in_sight(selector: str) -> bool:
        box = page.locator(selector).first.bounding_box()
        return box is not None and box["y"] >= 0 and box["y"] + 10 <= 844

    # Opened: the source from its first line, and the progress.
    assert in_sight(".context .current .seg")
    assert in_sight("#progress")
    # Scrolled down to the last translation: both still in sight, the source under the head.
    page.locator("article.output").last.scroll_into_view_if_needed()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert in_sight(".context .current .seg")
    assert in_sight("#progress")
    head = page.locator(".annot-head").bounding_box()
    source = page.locator("section.context").bounding_box()
    assert head is not None
    assert source is not None
    assert source["y"] >= head["y"] + head["height"] - 1
    assert page.evaluate("window.scrollY") > 500  # the page did scroll
    page.screenshot(path=output_dir / "screenshots" / "annotate-ranking-phone-scrolled.png")
    # A touch screen has no keyboard: no shortcut legend.
    page.locator("details.instructions summary").click()
    assert page.locator(".shortcuts").is_hidden()
    context.close()
