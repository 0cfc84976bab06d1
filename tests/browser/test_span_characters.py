"""Character-precise spans and the one-step omission, in a real Chromium at 1280 and 390 px:
a punctuation mark is a token of its own (a comma marked alone by clicks or taps), a drag inside
one word marks exactly the characters dragged over, Shift+arrows narrow and widen the selected
span by one character at its end (after Space on it, at its start), and the missing-content
marker is marked by one click or the key m. In Hebrew and Arabic the marker follows the last
word in reading order (at the left end of the line) and a chip of Hebrew with a Latin name in
it keeps the text's word order. Each stored span's text, ``output[start:end]`` on the stored
string, is compared with what was marked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import Assignment, Judgment
from tests.browser.annotator_pages import holding_a_text, opened_with_spans

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GERMAN = "Die Energie, die wir brauchen, kommt aus Wind."
HEBREW = "הבית של Google ליד האגם ריק."
ARABIC = "البيت بجانب البحيرة فارغ منذ سنوات."

# The centre of characters [from, to) (code points) of a token, in the viewport.
CENTRE = """(el, [from, to]) => {
  const cps = Array.from(el.textContent);
  const units = (n) => cps.slice(0, n).join("").length;
  const at = (left) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (left <= node.length) return [node, left];
      left -= node.length;
    }
  };
  const range = document.createRange();
  range.setStart(...at(units(from)));
  range.setEnd(...at(units(to)));
  const box = range.getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
}"""

# The horizontal centre of the first occurrence of ``word`` in an element's text.
WORD_X = """(el, word) => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const i = node.data.indexOf(word);
    if (i < 0) continue;
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + word.length);
    const box = range.getBoundingClientRect();
    return box.left + box.width / 2;
  }
  return null;
}"""


def token_of(page: Any, text: str) -> Any:
    """The editor's token whose text is ``text`` (the first one)."""
    index = page.evaluate(
        "(t) => Array.from(document.querySelectorAll('fieldset.span-editor .tok'))"
        ".findIndex((el) => el.textContent === t)",
        text,
    )
    assert index >= 0, f"no token {text!r}"
    return page.locator(f"fieldset.span-editor .tok[data-i='{index}']")


def drag_inside(page: Any, token: Any, first: int, last: int) -> None:
    """Press on character ``first`` of a token and release on character ``last``."""
    x0, y0 = token.evaluate(CENTRE, [first, first + 1])
    x1, y1 = token.evaluate(CENTRE, [last, last + 1])
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2)
    page.mouse.move(x1, y1)
    page.mouse.up()


def marked(assignment: Assignment, position: int = 0) -> list[str]:
    """What each stored span covers in the stored text (``[missing]`` for the marker)."""
    judgment = Judgment.objects.select_related("item").get(
        item__task=assignment.task, item__position=position
    )
    text = judgment.item.outputs.get().text
    [answer] = judgment.answer.values()
    return [
        "[missing]" if s["start"] == len(text) else text[s["start"] : s["end"]]
        for s in answer["spans"]
    ]


def scored_and_sent(page: Any, done: int) -> None:
    page.locator("fieldset.crit-score input[type=range]").click()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(n) => document.getElementById('progress')?.value === n", arg=done, timeout=20_000
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_a_comma_part_of_a_word_and_characters_by_keys_are_stored_exactly(
    browser: Any, live_server: Any, output_dir: Path, width: int
) -> None:
    assignment = holding_a_text(f"chars-{width}", "esa", GERMAN)
    touch = width == 390
    page = opened_with_spans(
        browser,
        live_server,
        assignment,
        viewport={"width": width, "height": 900},
        locale="de-DE",
        has_touch=touch,
    )
    # "Energie" and its comma are two tokens; the comma alone, by two clicks (taps on a phone).
    assert token_of(page, "Energie").count() == 1
    comma = token_of(page, ",")
    for _ in range(2):
        comma.tap() if touch else comma.click()
    assert page.locator(".span-chip").count() == 1
    assert "marked" not in (token_of(page, "Energie").get_attribute("class") or "")
    # "brauchen": a drag from its "ch" to its "n" marks "chen" alone, shown in part.
    brauchen = token_of(page, "brauchen")
    drag_inside(page, brauchen, 4, 7)
    assert page.locator(".span-chip").count() == 2
    assert "partly" in (brauchen.get_attribute("class") or "")
    assert brauchen.locator(".part.marked").inner_text() == "chen"
    # "Wind" clicked twice, then Shift+← narrows it to "Win", Shift+→ twice widens it to
    # "Wind."; Space on it: the start moves, Shift+→ gives "ind.".
    wind = token_of(page, "Wind")
    wind.click()
    wind.click()
    keys = page.keyboard
    keys.press("Shift+ArrowLeft")
    assert page.locator(".span-chip.active .span-pick").inner_text() == "Win"
    keys.press("Shift+ArrowRight")
    keys.press("Shift+ArrowRight")
    assert page.locator(".span-chip.active .span-pick").inner_text() == "Wind."
    keys.press("Space")
    keys.press("Shift+ArrowRight")
    assert page.locator(".span-chip.active .span-pick").inner_text() == "ind."
    # Content missing: one click on the marker.
    page.locator(".span-missing").click()
    assert page.locator(".span-chip").count() == 4
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=output_dir / "screenshots" / f"spans-characters-de-{width}.png")
    scored_and_sent(page, 1)
    assert marked(assignment) == [",", "chen", "ind.", "[missing]"]
    page.context.close()


def test_missing_content_by_one_key_and_the_keys_documented(browser: Any, live_server: Any) -> None:
    assignment = holding_a_text("chars-key", "esa", GERMAN)
    page = opened_with_spans(browser, live_server, assignment)
    # The on-page keyboard help names the key (and Shift+arrows).
    help_text = page.locator("ul.shortcuts").text_content() or ""
    assert "Content missing" in help_text
    assert "Shift" in help_text
    page.keyboard.press("m")
    assert page.locator(".span-chip").count() == 1
    # m again selects it (no second marker); 2 makes it major.
    page.keyboard.press("m")
    page.keyboard.press("2")
    assert page.locator(".span-chip").count() == 1
    scored_and_sent(page, 1)
    judgment = Judgment.objects.get(item__task=assignment.task, item__position=0)
    [answer] = judgment.answer.values()
    n = len(GERMAN)
    assert answer["spans"] == [{"start": n, "end": n + 1, "severity": "major"}]
    page.context.close()


def boxes(page: Any, selector: str) -> dict[str, float]:
    return page.locator(selector).evaluate(
        "el => { const b = el.getBoundingClientRect(); "
        "return {left: b.left, right: b.right, top: b.top, bottom: b.bottom}; }"
    )


def after_the_last_word(page: Any, last: str) -> None:
    """The marker follows the token ``last`` in right-to-left reading order: on its line, to
    its left, or on a line below it."""
    word = token_of(page, last).evaluate(
        "el => { const b = el.getBoundingClientRect(); "
        "return {left: b.left, right: b.right, top: b.top, bottom: b.bottom}; }"
    )
    marker = boxes(page, "fieldset.span-editor .span-missing")
    same_line = marker["top"] < word["bottom"] and word["top"] < marker["bottom"]
    if same_line:
        assert marker["right"] <= word["left"] + 1, (marker, word)
    else:
        assert marker["top"] >= word["bottom"] - 1, (marker, word)
    # And nothing of the text lies to its left on its line.
    line_left = token_of(page, last).evaluate("el => el.closest('p').getBoundingClientRect().left")
    assert marker["left"] >= line_left - 1


@pytest.mark.parametrize(("width", "locale"), [(1280, "en-US"), (390, "he-IL")])
def test_hebrew_marker_after_the_last_word_and_a_mixed_chip_keeps_its_order(
    browser: Any, live_server: Any, output_dir: Path, width: int, locale: str
) -> None:
    assignment = holding_a_text(f"chars-he-{width}", "esa", HEBREW, language="he")
    page = opened_with_spans(
        browser, live_server, assignment, viewport={"width": width, "height": 844}, locale=locale
    )
    text = page.locator("fieldset.span-editor p.text")
    assert text.evaluate("el => getComputedStyle(el).direction") == "rtl"
    after_the_last_word(page, ".")
    # "של Google ליד" marked: in the chip, as in the text, "של" is right of "Google".
    token_of(page, "של").click()
    token_of(page, "ליד").click()
    pick = page.locator(".span-chip .span-pick").first
    assert pick.inner_text() == "של Google ליד"
    assert pick.locator("bdi").evaluate("el => getComputedStyle(el).direction") == "rtl"
    in_chip = [pick.evaluate(WORD_X, word) for word in ["של", "Google", "ליד"]]
    in_text = [text.evaluate(WORD_X, word) for word in ["של", "Google", "ליד"]]
    assert in_text[0] > in_text[1] > in_text[2]
    assert in_chip[0] > in_chip[1] > in_chip[2]
    # The marker by one click; it is on the left of the line's last word.
    page.locator(".span-missing").click()
    assert page.locator(".span-chip").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=output_dir / "screenshots" / f"spans-hebrew-{width}.png")
    scored_and_sent(page, 1)
    assert marked(assignment) == ["של Google ליד", "[missing]"]
    page.context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_arabic_marker_after_the_last_word(
    browser: Any, live_server: Any, output_dir: Path, width: int
) -> None:
    assignment = holding_a_text(f"chars-ar-{width}", "esa", ARABIC, language="ar")
    page = opened_with_spans(
        browser, live_server, assignment, viewport={"width": width, "height": 844}
    )
    after_the_last_word(page, ".")
    # The last word's final letter alone, by a drag inside it; then the marker by the key.
    last = token_of(page, "سنوات")
    drag_inside(page, last, 3, 4)
    chip = page.locator(".span-chip.active .span-pick")
    assert chip.inner_text() == "ات"
    # Shift+arrows in reading order: → goes back (narrows), ← goes on (widens).
    page.keyboard.press("Shift+ArrowRight")
    assert chip.inner_text() == "ا"
    page.keyboard.press("Shift+ArrowLeft")
    assert chip.inner_text() == "ات"
    page.keyboard.press("m")
    page.screenshot(path=output_dir / "screenshots" / f"spans-arabic-{width}.png")
    scored_and_sent(page, 1)
    assert marked(assignment) == ["ات", "[missing]"]
    page.context.close()
