"""Stored span offsets are the characters marked, whatever the text holds: CR LF, CR alone, tabs,
no-break spaces, zero-width characters, astral characters (emoji, CJK extension B) and
combining marks. In a real Chromium at 1280 px, words after (and made of) such characters are
clicked on an item loaded as a page, one shown in place, one reloaded, one revised through
Previous and on a document screen; each stored span's text, ``output[start:end]`` on the
stored string, must be the word clicked. (An HTML parser turns CR LF and CR into LF: a text
read back from the page's markup is shorter than the stored one.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import Assignment, Campaign, Item, ItemOutput, Judgment, ProtocolConfig
from annotation.tasking.services import task_assign, task_assign_next
from tests.browser.annotator_pages import log_in
from tests.factories import lines, make_campaign, make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each text with the words to mark in it (each a whole token of the editor).
TEXTS: list[tuple[str, list[str]]] = [
    ("Erste Zeile\r\nzweite Zeile\r\n\r\ndritte Zeile mit target.", ["target", ".", "dritte"]),
    ("Emoji 😀👍🏽 und 𠀀𠀁 target 𠀂x", ["target", "😀👍🏽", "𠀂x"]),
    ("Eins\r\nzwei\r\rdrei\r\ntarget vier", ["target", "vier"]),
    ("Cafe\u0301 und Ba\u0308r\r\n target n\u0303o", ["target", "Ba\u0308r", "n\u0303o"]),
    ("Spalte\tSpalte\t\ttarget\tEnde", ["target", "Ende"]),
    ("Preis:\u00a0100\u00a0€ target\u202fund", ["target", "und"]),
    ("Null\u200bbreite\u200c\u200dZeichen\u2060 target \u200bx", ["target", "\u200bx"]),
]


def opened(browser: Any, live_server: Any, username: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US").new_page()
    log_in(page, live_server, username)
    return page


def mark(article: Any, word: str) -> None:
    """Click the token that is ``word`` twice: a span over that word alone."""
    index = article.evaluate(
        "(el, word) => Array.from(el.querySelectorAll('.tok'))"
        ".findIndex((t) => t.textContent === word)",
        word,
    )
    assert index >= 0, f"no token {word!r}"
    token = article.locator(f".tok[data-i='{index}']")
    before = article.locator(".span-chip").count()
    token.click()
    token.click()
    article.locator(".span-chip").nth(before).wait_for()


def spans_of(judgment: Judgment) -> list[dict[str, Any]]:
    [answer] = judgment.answer.values()
    return list(answer["spans"])


def marked_texts(judgment: Judgment) -> list[str]:
    """What each stored span covers in the stored text (``[missing]`` for the marker)."""
    text = judgment.item.outputs.get().text
    return [
        "[missing]" if s["start"] == len(text) else text[s["start"] : s["end"]]
        for s in spans_of(judgment)
    ]


def answered(page: Any, words: list[str], *, missing: bool = False) -> None:
    """Mark ``words`` (and the missing-content marker) in the one translation, score, send."""
    article = page.locator("article.output")
    for word in words:
        mark(article, word)
    if missing:
        page.locator(".span-missing").click()
        page.locator(".span-missing").click()
    page.locator("fieldset.crit-score input[type=range]").click()
    done = page.evaluate("document.getElementById('progress').value")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "(done) => document.getElementById('progress')?.value > done "
        "|| location.pathname.endsWith('/my/tasks/')",
        arg=done,
    )


def judgment_at(assignment: Assignment, position: int) -> Judgment:
    return Judgment.objects.select_related("item").get(
        item__task=assignment.task, item__position=position
    )


def test_spans_are_stored_on_the_words_clicked_on_every_way_an_item_is_shown(
    browser: Any, live_server: Any, tmp_path: Path
) -> None:
    owner = make_user("organizer-offsets", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    Campaign.objects.filter(pk=campaign.pk).update(target_language="de")
    annotator = make_user("offsets")
    campaign.annotators.add(annotator)
    config = make_config(campaign, "esa", outputs_per_screen=1, items_per_task=len(TEXTS))
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    for position, (text, _words) in enumerate(TEXTS):
        ItemOutput.objects.filter(item__task=assignment.task, item__position=position).update(
            text=text
        )
    page = opened(browser, live_server, "offsets")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.span-editor.focused")
    shown: dict[int, str] = {}

    # Item 1 loaded as a page; item 2 shown in place; item 3 after a reload.
    answered(page, TEXTS[0][1], missing=True)
    shown[0] = "first load"
    answered(page, TEXTS[1][1])
    shown[1] = "shown in place"
    page.reload()
    page.wait_for_selector("fieldset.span-editor.focused")
    page.screenshot(path=tmp_path / "span-offsets-reloaded-1280.png", full_page=True)
    answered(page, TEXTS[2][1])
    shown[2] = "reload"

    # Previous: item 3 again, its spans filled in on the same words; one more word marked.
    page.click("#previous")
    page.wait_for_selector(".revising-note")
    page.wait_for_selector("fieldset.span-editor.focused")
    chips = page.locator(".span-chip .span-pick").all_inner_texts()
    assert chips == TEXTS[2][1]
    mark(page.locator("article.output"), "zwei")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.span-editor.focused")
    revised = judgment_at(assignment, 2)
    assert revised.revision == 2
    assert marked_texts(revised) == ["zwei", *TEXTS[2][1]]

    # The rest: item 4 loaded as a page (after the revision), the others shown in place.
    for position in range(3, len(TEXTS)):
        answered(page, TEXTS[position][1])
        shown[position] = "after a revision" if position == 3 else "shown in place"

    wrong = []
    for position, (text, words) in enumerate(TEXTS):
        if position == 2:
            continue
        expected = [*words, "[missing]"] if position == 0 else words
        got = marked_texts(judgment_at(assignment, position))
        # The stored spans are in order of their start, the words in the order clicked.
        if sorted(got) != sorted(expected):
            wrong.append(f"{shown[position]}, {text!r}: marked {expected}, stored {got}")
    assert not wrong, "\n".join(wrong)
    first = judgment_at(assignment, 0)
    length = len(TEXTS[0][0])
    assert {"start": length, "end": length + 1, "severity": "minor"} in spans_of(first)
    page.context.close()


def document_config(owner: Any) -> ProtocolConfig:
    """ESA on whole-document screens over one document of four segments (no QC items)."""
    campaign = make_campaign(owner=owner, name="Offsets in a document")
    segments = [f"Satz {n}." for n in range(4)]
    files = [
        UploadFile("src.de", lines(segments), "source"),
        UploadFile("docs.txt", lines(["doc"] * 4), "doc_ids"),
        UploadFile("one.txt", lines(segments), "systems"),
    ]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    Campaign.objects.filter(pk=campaign.pk).update(
        status=Campaign.Status.ACTIVE, target_language="de"
    )
    return make_config(
        campaign,
        "esa",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=0,
        items_per_task=4,
        outputs_per_screen=1,
        qc_bad_reference=0,
        qc_repeat=0,
        qc_reference=0,
    )


def test_spans_on_a_document_screen_are_stored_on_the_words_clicked(
    browser: Any, live_server: Any, tmp_path: Path
) -> None:
    owner = make_user("organizer-doc-offsets", organizer=True)
    config = document_config(owner)
    annotator = make_user("doc-offsets")
    config.campaign.annotators.add(annotator)
    assignment = task_assign(task=config.tasks.order_by("position").first(), annotator=annotator)
    items = list(Item.objects.filter(task=assignment.task, screen=0).order_by("position"))
    chosen = [TEXTS[0], TEXTS[2], TEXTS[1], TEXTS[3]]
    assert len(items) == len(chosen)
    for item, (text, _words) in zip(items, chosen, strict=True):
        ItemOutput.objects.filter(item=item).update(text=text)
    page = opened(browser, live_server, "doc-offsets")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    articles = page.locator("article.output")
    assert articles.count() == len(chosen)
    for n, (_text, words) in enumerate(chosen):
        for word in words[:2]:
            mark(articles.nth(n), word)
    page.screenshot(path=tmp_path / "span-offsets-document-1280.png", full_page=True)
    sliders = page.locator("fieldset.slider-criterion")
    for n in range(len(chosen)):
        sliders.nth(n).focus()
        page.keyboard.type("50")
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => document.getElementById('progress')?.value === n", arg=4)
    for item, (text, words) in zip(items, chosen, strict=True):
        got = marked_texts(Judgment.objects.select_related("item").get(item=item))
        assert sorted(got) == sorted(words[:2]), text
    page.context.close()
