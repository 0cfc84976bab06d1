"""The span editor in a real Chromium: error spans marked, edited and removed with the mouse and
with the keyboard alone (the mouse at 1280 and 390 px), snapped to words (to characters in
Chinese), a right-to-left language with taps on a phone and clicks on a laptop, the
missing-content marker, overlaps refused, and the stored
judgment holding exactly the marked offsets (code points of the shown text); Previous shows the
spans again and a revision replaces them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation.models import Assignment, Judgment
from tests.browser.annotator_pages import holding_a_text, opened_with_spans

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GERMAN = "Das Haus am See ist seit 😀 Jahren leer und wartet."
HEBREW = "הבית ליד האגם ריק כבר שנים רבות."


def words(text: str) -> list[tuple[int, int]]:
    """Each token's code-point offsets, as the editor's should be: words, and each punctuation
    mark on its own (enough for the texts here)."""
    return [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]


def token(page, i: int):  # type: ignore[no-untyped-def]
    return page.locator(f"fieldset.span-editor .tok[data-i='{i}']")


def stored(assignment: Assignment, position: int = 0) -> Judgment:
    return Judgment.objects.get(item__task=assignment.task, item__position=position)


@pytest.mark.parametrize("width", [1280, 390])
def test_esa_spans_with_the_mouse(browser, live_server, output_dir: Path, width: int) -> None:  # type: ignore[no-untyped-def]
    assignment = holding_a_text(f"esa-mouse-{width}", "esa", GERMAN)
    w = words(GERMAN)
    page = opened_with_spans(
        browser, live_server, assignment, viewport={"width": width, "height": 900}
    )
    # The editor leads the screen; the text became one token per word plus the marker.
    assert page.locator("fieldset.span-editor .tok").count() == len(w) + 1
    # Click the first and then the last word of an error: "Haus am See".
    token(page, 1).click()
    assert "anchor" in token(page, 1).get_attribute("class")
    token(page, 3).click()
    page.keyboard.press("2")  # the new span is selected: major
    # Drag over "seit 😀" (press on one word, release on another).
    token(page, 5).hover()
    page.mouse.down()
    token(page, 6).hover()
    page.mouse.up()
    # One word: click it twice.
    token(page, 9).click()
    token(page, 9).click()
    # An error over a marked word is refused, and nothing changes.
    token(page, 8).click()
    token(page, 9).click()
    assert "may not overlap" in page.locator(".span-note").inner_text()
    # Content missing: the marker after the text.
    page.locator(".span-missing").click()
    page.locator(".span-missing").click()
    assert page.locator(".span-chip").count() == 4
    # Removed with its button; one severity changed in the list.
    page.locator(".span-chip").nth(2).locator(".span-remove").click()
    page.locator(".span-chip").nth(1).locator(".span-severity").select_option("major")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(
        path=output_dir / "screenshots" / f"esa-spans-mouse-{width}.png", full_page=True
    )
    page.locator("fieldset.crit-score input[type=range]").click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#progress-text:has-text('1 of')")
    judgment = stored(assignment)
    [output] = judgment.answer
    n = len(GERMAN)
    assert judgment.answer[output]["spans"] == [
        {"start": w[1][0], "end": w[3][1], "severity": "major"},
        {"start": w[5][0], "end": w[6][1], "severity": "major"},
        {"start": n, "end": n + 1, "severity": "minor"},
    ]
    assert GERMAN[w[5][0] : w[6][1]] == "seit 😀"
    assert list(judgment.spans.values_list("start", "end")) == [
        (w[1][0], w[3][1]),
        (w[5][0], w[6][1]),
        (n, n + 1),
    ]
    assert 0 <= judgment.answer[output]["score"] <= 100
    page.context.close()


def test_spans_with_the_keyboard_alone_then_revised(browser, live_server, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    assignment = holding_a_text("esa-keys", "esa", GERMAN)
    w = words(GERMAN)
    page = opened_with_spans(browser, live_server, assignment)
    keys = page.keyboard
    # → → Space → Space: the third and fourth words.
    for key in ["ArrowRight", "ArrowRight", "Space", "ArrowRight", "Space", "2"]:
        keys.press(key)
    # End: the marker; Space Space marks it; Delete removes the selected span.
    for key in ["End", "Space", "Space", "Delete"]:
        keys.press(key)
    # Home, Space twice: the first word, minor.
    for key in ["Home", "Space", "Space"]:
        keys.press(key)
    assert page.locator(".span-chip").count() == 2
    keys.press("Tab")  # on to the score
    for key in ["7", "5"]:
        keys.press(key)
    page.screenshot(path=output_dir / "screenshots" / "esa-spans-keys.png", full_page=True)
    keys.press("Enter")
    page.wait_for_selector("#progress-text:has-text('1 of')")
    judgment = stored(assignment)
    [output] = judgment.answer
    assert judgment.answer[output] == {
        "score": 75.0,
        "spans": [
            {"start": w[0][0], "end": w[0][1], "severity": "minor"},
            {"start": w[2][0], "end": w[3][1], "severity": "major"},
        ],
    }
    # Previous: the spans are marked again; select one with Space, remove it, resubmit.
    page.click("#previous")
    page.wait_for_selector(".revising-note")
    page.wait_for_selector("fieldset.span-editor.focused")
    assert page.locator(".span-chip").count() == 2
    assert "marked" in token(page, 2).get_attribute("class")
    for key in ["ArrowRight", "ArrowRight", "Space", "Delete", "Enter"]:
        keys.press(key)
    page.wait_for_url(re.compile(r"/annotate/[^/]+/$"))
    judgment.refresh_from_db()
    assert judgment.revision == 2
    assert judgment.answer[output]["spans"] == [
        {"start": w[0][0], "end": w[0][1], "severity": "minor"}
    ]
    assert list(judgment.spans.values_list("start", flat=True)) == [w[0][0]]
    assert judgment.revisions.get().values[output]["spans"][1]["severity"] == "major"
    page.context.close()


@pytest.mark.parametrize(("width", "touch"), [(390, True), (1280, False)])
def test_mqm_right_to_left_with_taps_or_clicks(
    browser, live_server, output_dir: Path, width: int, touch: bool
) -> None:  # type: ignore[no-untyped-def]
    """On a phone with taps, on a laptop with the mouse."""
    assignment = holding_a_text(f"mqm-rtl-{width}", "mqm", HEBREW, language="he")
    w = words(HEBREW)
    page = opened_with_spans(
        browser,
        live_server,
        assignment,
        viewport={"width": width, "height": 844},
        has_touch=touch,
        is_mobile=touch,
    )

    def press(locator) -> None:  # type: ignore[no-untyped-def]
        locator.tap() if touch else locator.click()

    text = page.locator("fieldset.span-editor p.text")
    assert text.evaluate("el => getComputedStyle(el).direction") == "rtl"
    # Tap the second word, then the third: one error over both.
    press(token(page, 1))
    press(token(page, 2))
    chip = page.locator(".span-chip").first
    # Without a category the answer is not complete.
    press(page.locator("#submit"))
    assert page.locator("#annotate-error").is_visible()
    chip.locator(".span-category").select_option("accuracy/mistranslation")
    # Keys in right-to-left text: ← moves on to the next word (to the left).
    page.locator("fieldset.span-editor").focus()
    for key in ["Home", "ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowLeft", "Space", "Space", "1"]:
        page.keyboard.press(key)
    page.keyboard.press("c")
    page.keyboard.press("ArrowDown")  # the first category of the list
    page.keyboard.press("Enter")
    # That Enter closed the list, back to the text: the answer is not sent yet.
    assert page.locator("#progress-text").inner_text().startswith("0 of")
    assert page.evaluate("document.activeElement.matches('fieldset.span-editor')")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=output_dir / "screenshots" / f"mqm-spans-rtl-{width}.png", full_page=True)
    press(page.locator("#submit"))
    page.wait_for_selector("#progress-text:has-text('1 of')")
    judgment = stored(assignment)
    [output] = judgment.answer
    assert judgment.answer[output]["spans"] == [
        {
            "start": w[1][0],
            "end": w[2][1],
            "severity": "minor",
            "category": "accuracy/mistranslation",
        },
        {
            "start": w[4][0],
            "end": w[4][1],
            "severity": "minor",
            "category": "accuracy/mistranslation",
        },
    ]
    # Two minor errors: MQM 2, read as −2.
    assert judgment.values.get().value == -2.0
    page.context.close()


def test_chinese_spans_snap_to_characters(browser, live_server) -> None:  # type: ignore[no-untyped-def]
    text = "房子空了很多年。"
    assignment = holding_a_text("mqm-zh", "esa", text, language="zh")
    page = opened_with_spans(browser, live_server, assignment)
    assert page.locator("fieldset.span-editor .tok").count() == len(text) + 1
    token(page, 2).click()
    token(page, 3).click()
    page.locator("fieldset.crit-score input[type=range]").click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#progress-text:has-text('1 of')")
    [spans] = [a["spans"] for a in stored(assignment).answer.values()]
    assert spans == [{"start": 2, "end": 4, "severity": "minor"}]
    page.context.close()
