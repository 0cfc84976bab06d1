"""In a real Chromium on a phone (390 px): the source pinned under the progress takes a third of
the screen while the annotator reads; once they score, it shrinks to its first lines, with a
button that shows it whole again (and keeps it so for that item); the next item's source is
shown whole. On a desktop nothing shrinks. Screenshots looked at."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import ItemOutput
from tests.browser.annotator_pages import holding_a_task, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG = " ".join(["Ein ziemlich langer Ausgangssatz, der sich über viele Zeilen zieht."] * 6)


def _height(page, selector: str) -> float:  # type: ignore[no-untyped-def]
    box = page.locator(selector).first.bounding_box()
    assert box is not None
    return float(box["height"])


def test_the_pinned_source_shrinks_once_the_annotator_scores_on_a_phone(  # type: ignore[no-untyped-def]
    browser, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    assignment = holding_a_task("pinned")
    item = assignment.task.items.get(position=0)
    item.segment.source = LONG
    item.segment.save(update_fields=["source"])
    ItemOutput.objects.filter(item=item).update(text=LONG)
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, locale="de-DE"
    )
    page = context.new_page()
    log_in(page, live_server, "pinned")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    toggle = page.locator("section.context .source-toggle")
    # Read first: the source whole (as much as a third of the screen shows), with its context.
    assert toggle.get_attribute("aria-expanded") == "true"
    whole = _height(page, "section.context")
    assert whole > 150
    assert page.locator("section.context .ctx").first.is_visible()
    page.screenshot(path=shots / "pinned-source-reading-390.png")

    # Scoring: the source shrinks to two lines under the progress; the context lines go.
    page.keyboard.type("64")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert _height(page, "section.context .seg") < 60
    assert _height(page, "section.context") < whole / 2
    assert not page.locator("section.context .ctx").first.is_visible()
    page.screenshot(path=shots / "pinned-source-scoring-390.png")

    # The button shows it whole again, and it stays so while the annotator goes on.
    toggle.tap()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert _height(page, "section.context") > 150
    page.locator("fieldset.criterion").first.focus()
    page.keyboard.type("65")
    assert toggle.get_attribute("aria-expanded") == "true"

    # The next item (shown in place) is read whole first.
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert not page.locator("section.context.collapsed").count()
    context.close()


def test_nothing_shrinks_on_a_desktop(page, live_server) -> None:  # type: ignore[no-untyped-def]
    assignment = holding_a_task("wide")
    log_in(page, live_server, "wide")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    page.keyboard.type("64")
    assert page.locator("section.context.collapsed").count() == 0
    assert page.locator("section.context .source-toggle").is_hidden()
