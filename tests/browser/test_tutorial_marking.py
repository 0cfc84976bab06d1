"""In a real Chromium: an organizer marks a tutorial item's expected error span with the mouse on
the tutorial form, the form writes its offsets, and the stored expectation's text,
``output[start:end]`` on the stored string, is the characters dragged over — on a text with a
byte-order mark kept at its start, white space stripped around it, an astral emoji and a tab
(ESA, 1280 px, English), and on a Hebrew text, right to left, with the form in German at 390 px
(MQM, with a category); the annotator then reads MQM's definitions on the tutorial page.
Screenshots at both widths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import TutorialItem
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user
from tests.tutorial_factories import holding

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Where each code point of the text in output ``n``'s box is drawn: the rectangles of the first
# and the last of ``[start, end)``, counted in code points over the box's text nodes.
CHAR_RECTS = """([n, start, end]) => {
  const box = document.querySelector(`.marker-outputs li[data-output="${n}"] .marker-text`);
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  const points = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let unit = 0;
    for (const ch of node.data) {
      points.push([node, unit, unit + ch.length]);
      unit += ch.length;
    }
  }
  const rect = (i) => {
    const [node, from, to] = points[i];
    const range = document.createRange();
    range.setStart(node, from);
    range.setEnd(node, to);
    const r = range.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  };
  return { first: rect(start), last: rect(end - 1), dir: getComputedStyle(box).direction };
}"""


def drag_over(page: Any, n: int, start: int, end: int) -> None:
    """Select code points ``[start, end)`` of output ``n`` with the mouse: press at the start
    edge of the first (its right edge in a right-to-left text), release at the end edge of the
    last."""
    page.locator(f".marker-outputs li[data-output='{n}']").scroll_into_view_if_needed()
    rects = page.evaluate(CHAR_RECTS, [n, start, end])
    first, last = rects["first"], rects["last"]
    rtl = rects["dir"] == "rtl"
    x0 = first["right"] - 1 if rtl else first["left"] + 1
    x1 = last["left"] + 1 if rtl else last["right"] - 1
    page.mouse.move(x0, (first["top"] + first["bottom"]) / 2)
    page.mouse.down()
    page.mouse.move(x1, (last["top"] + last["bottom"]) / 2, steps=8)
    page.mouse.up()


def shoot(page: Any, path: Path, width: int) -> None:
    page.screenshot(path=path.with_name(f"{path.stem}-{width}.png"), full_page=True)
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{path.stem} scrolls sideways at {width}px ({scroll}px)"


def stored_text(item: TutorialItem) -> list[str]:
    """Each expected span's characters in the stored output (``[missing]`` for the marker)."""
    [(key, spans)] = item.expectation["spans"].items()
    text = item.outputs[int(key) - 1]
    return [text[s["start"] : s["end"]] if s["start"] < len(text) else "[missing]" for s in spans]


def test_an_expected_span_is_marked_with_the_mouse_on_the_stored_characters(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Tutorial news")
    config = make_config(campaign, "esa", name="ESA study", outputs_per_screen=1, items_per_task=4)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    # Python keeps a byte-order mark (JavaScript's trim would drop it) and strips the spaces.
    output = "\ufeffDas Haus 😀 ist\u00a0sehr\tgroß, oder?  "
    stored = output.strip()
    word = "groß"
    start = stored.index(word)

    log_in(page, live_server, "olga", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/{config.pk}/tutorial/")
    page.fill("#add-item textarea[name=source]", "Das Haus ist klein, oder?")
    page.fill("#add-item textarea[name=outputs]", "  " + output)
    page.wait_for_selector(".marker-outputs li[data-output='1']")
    drag_over(page, 1, start, start + len(word))
    assert page.inner_text(".marker-chars") == word
    assert page.inner_text(".marker-range") == f"{start}–{start + len(word)}"
    page.select_option(".marker-severity", "major")
    page.click(".marker-add")
    # The missing-content marker: an omission, any severity.
    page.click(".marker-outputs li[data-output='1'] .marker-missing")
    assert page.inner_text(".marker-range") == f"{len(stored)}–{len(stored) + 1}"
    page.select_option(".marker-severity", "")
    page.click(".marker-add")
    lines = page.input_value("#add-item textarea[name=spans]").splitlines()
    assert lines == [
        f"1: {start}-{start + len(word)} major",
        f"1: {len(stored)}-{len(stored) + 1}",
    ]
    assert page.inner_text(".marker-outputs mark") == word
    page.set_viewport_size({"width": 1280, "height": 900})
    shoot(page, shots / "tutorial-marking", 1280)
    page.fill("#add-item textarea[name=feedback]", "“groß” says the opposite of “klein”.")
    page.click("#add-item button[type=submit]")
    page.wait_for_selector("#tutorial-items tr[data-item]")

    item = TutorialItem.objects.get(config=config)
    assert item.outputs == [stored]
    assert stored_text(item) == [word, "[missing]"]
    assert item.expectation["spans"]["1"][0]["severity"] == "major"
    assert f"“{word}” ({start}–{start + len(word)}) major" in page.inner_text("#tutorial-items")


def test_a_hebrew_span_is_marked_on_the_german_form_of_a_phone(  # type: ignore[no-untyped-def]
    browser, live_server, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Tutorial he", target_language="he")
    annotator = make_user("noa")
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "mqm",
        name="MQM study",
        outputs_per_screen=1,
        items_per_task=4,
        instructions="Lesen Sie zuerst den ganzen Vortrag.",
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    stored = "הבית הזה קטן מאוד, אבל יש לו גינה גדולה."
    word = "קטן מאוד"
    start = stored.index(word)

    context = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="de-DE", has_touch=True
    )
    context.add_cookies([{"name": "django_language", "value": "de", "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(15_000)
    log_in(page, live_server, "olga", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/{config.pk}/tutorial/")
    assert "Erwartete Fehler mit der Maus markieren" in page.inner_text("#span-marker")
    page.fill(
        "#add-item textarea[name=source]", "This house is very small, but it has a big garden."
    )
    page.fill("#add-item textarea[name=outputs]", stored)
    page.wait_for_selector(".marker-outputs li[data-output='1']")
    drag_over(page, 1, start, start + len(word))
    assert page.inner_text(".marker-chars") == word
    page.select_option(".marker-severity", "major")
    page.select_option(".marker-category", "accuracy/mistranslation")
    page.click(".marker-add")
    assert page.input_value("#add-item textarea[name=spans]") == (
        f"1: {start}-{start + len(word)} major accuracy/mistranslation"
    )
    page.locator("#span-marker").scroll_into_view_if_needed()
    shoot(page, shots / "tutorial-marking-he-de", 390)
    page.locator("#span-marker").screenshot(path=shots / "tutorial-marking-he-de-390-marker.png")
    page.click("#add-item button[type=submit]")
    page.wait_for_selector("#tutorial-items tr[data-item]")

    item = TutorialItem.objects.get(config=config)
    assert stored_text(item) == [word]
    assert item.expectation["spans"]["1"][0]["category"] == "accuracy/mistranslation"
    context.close()

    # The annotator reads MQM's definitions, the organizer's words beside them, in German.
    assignment = holding(config, annotator)
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="de-DE")
    context.add_cookies([{"name": "django_language", "value": "de", "url": live_server.url}])
    noa = context.new_page()
    noa.set_default_timeout(15_000)
    log_in(noa, live_server, "noa")
    noa.goto(f"{live_server.url}/annotate/{assignment.pk}/tutorial/")
    noa.locator("details.glossary-categories summary").click()
    guidance = noa.inner_text(".guidance")
    assert "Lesen Sie zuerst den ganzen Vortrag." in guidance
    assert "Von den Organisatoren dieser Studie" in guidance
    assert "Genauigkeit › Falschübersetzung" in guidance
    assert "Der Fehler kann die Lesenden verwirren oder irreführen" in guidance
    shoot(noa, shots / "tutorial-mqm-guidance-de", 390)
    noa.locator(".guidance").screenshot(path=shots / "tutorial-mqm-guidance-de-390-part.png")
    noa.set_viewport_size({"width": 1280, "height": 900})
    shoot(noa, shots / "tutorial-mqm-guidance-de", 1280)
    context.close()
