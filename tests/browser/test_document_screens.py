"""In a real Chromium: a document screen shows every segment of a document (Arabic, right to
left) with its translation by one system, one answer per segment; its progress (segments
answered on the screen, and in the task) stays pinned at the top while the page scrolls; a
partial submit says how many are left, with a button to the first. Enter sends the screen in
one request, stored whole or not at all: a submit cut off by the network stores nothing and
keeps the answers on the page, and a retry sends them; a screen partly stored (by an API
client) shows the stored answers and sends only the missing ones; Previous opens the earlier
document with its answers, and a change sends that one segment as a revision. ESA's span
editor works on a document screen on a phone, in German; the text before a window shrinks
once the annotator scores. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.db.models import F

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.judging.services import judgment_record
from annotation.models import Assignment, Campaign, Item, Judgment, ProtocolConfig
from annotation.tasking.build import tasks_build
from annotation.tasking.services import task_assign
from tests.browser.annotator_pages import log_in
from tests.factories import full_answer, lines, make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = [
    "ذهب الولد إلى المدرسة صباحا.",
    "الطقس جميل اليوم في المدينة.",
    "قرأت كتابا مفيدا عن التاريخ.",
    "يعمل الفريق على مشروع جديد.",
    "افتتح المتحف معرضا للفن الحديث.",
    "ارتفعت أسعار الخضار هذا الأسبوع.",
    "فاز المنتخب في المباراة الأخيرة.",
    "سافرت العائلة إلى البحر في الصيف.",
]
DOCUMENTS = ["school"] * 4 + ["town"] * 4
GOOD = [
    "The boy went to school in the morning.",
    "The weather is nice in the city today.",
    "I read a useful book about history.",
    "The team is working on a new project.",
    "The museum opened an exhibition of modern art.",
    "Vegetable prices rose this week.",
    "The national team won the last match.",
    "The family travelled to the sea in the summer.",
]
POOR = [" ".join(reversed(s.split())) for s in GOOD]


def documents_campaign(owner: Any, protocol: str, window: int = 0) -> ProtocolConfig:
    """Two documents of four Arabic segments, two systems, and a config of ``protocol`` with
    document screens of ``window`` segments (0: whole documents; no QC items: the test knows
    every screen)."""
    campaign = make_campaign(owner=owner, name="Arabic documents", source_language="ar")
    files = [
        UploadFile("src.ar", lines(SOURCE), "source"),
        UploadFile("docs.txt", lines(DOCUMENTS), "doc_ids"),
        UploadFile("ref.en", lines(GOOD), "references"),
        UploadFile("good.txt", lines(GOOD), "systems"),
        UploadFile("poor.txt", lines(POOR), "systems"),
    ]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    campaign.status = Campaign.Status.ACTIVE
    campaign.save(update_fields=["status"])
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name="Documents",
        protocol=protocol,
        mode="source",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_window=window,
        items_per_task=8,
        qc_bad_reference=0,
        qc_repeat=0,
        qc_reference=0,
    )
    tasks_build(config=config)
    return config


def holding(page: Any, live_server: Any, name: str, protocol: str, window: int = 0) -> Assignment:
    owner = make_user(f"organizer-{name}", organizer=True)
    config = documents_campaign(owner, protocol, window)
    annotator = make_user(name)
    config.campaign.annotators.add(annotator)
    assignment = task_assign(task=config.tasks.order_by("position").first(), annotator=annotator)
    log_in(page, live_server, name)
    return assignment


def screen_items(assignment: Assignment, first: int) -> list[Item]:
    return list(
        Item.objects.filter(task=assignment.task, screen=first)
        .select_related("segment__document")
        .order_by("position")
    )


def answer_sliders(page: Any, scores: list[int]) -> None:
    """Focus each segment's slider in turn and type its score."""
    for n, score in enumerate(scores):
        page.locator("fieldset.criterion").nth(n).focus()
        page.keyboard.type(str(score))
        page.wait_for_function(
            "([n, score]) => document.querySelectorAll('fieldset.criterion')[n]"
            ".querySelector('.slider-value').textContent === score",
            arg=[n, str(score)],
        )


def scores_of(assignment: Assignment) -> dict[int, tuple[float, int]]:
    """Each answered item's score and revision, by position."""
    return {
        j.item.position: (next(iter(j.answer.values()))["score"], j.revision)
        for j in Judgment.objects.filter(assignment=assignment).select_related("item")
    }


def failing(page: Any) -> None:
    """The next screen submit never reaches the server."""
    page.route("**/screen/", lambda request_route: request_route.abort())


def in_sight(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def count_posts(page: Any) -> list[str]:
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    return posts


def test_a_document_screen_is_sent_whole_in_one_request(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    assignment = holding(page, live_server, "reader", "direct_assessment")
    first = screen_items(assignment, 0)
    assert len(first) == 4
    assert assignment.task.size == 8
    page.set_viewport_size({"width": 1280, "height": 600})
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")

    # Every segment of the document in order, its source right to left above its translation.
    assert page.inner_text(".doc-title") == f"Document {first[0].segment.document.external_id}"
    sources = page.locator("article.output .doc-segment")
    assert sources.all_inner_texts() == [i.segment.source for i in first]
    assert sources.first.evaluate("el => getComputedStyle(el).direction") == "rtl"
    texts = page.locator("article.output p.text").all_inner_texts()
    assert texts == [i.outputs.get().text for i in first]
    assert page.locator("section.context").count() == 0
    assert page.inner_text("#screen-progress") == "0 of 4 segments answered on this screen"
    page.screenshot(path=shots / "document-screen-1280.png", full_page=True)

    # Two answered: the screen's count moves at once; scrolled to the end of the document,
    # both counts stay in sight, pinned at the top.
    posts = count_posts(page)
    answer_sliders(page, [71, 72])
    assert page.inner_text("#screen-progress") == "2 of 4 segments answered on this screen"
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("window.scrollY") > 200
    assert in_sight(page, "#screen-progress")
    assert in_sight(page, "#progress")
    assert page.inner_text("#progress-text") == "0 of 8 done"

    # An unanswered segment stops the submit on the page: how many, and a button to the first.
    page.keyboard.press("Enter")
    error = page.locator("#annotate-error")
    assert "answer every question" in error.inner_text()
    assert "2 segments still to answer — go to the first" in error.inner_text()
    page.screenshot(path=shots / "document-screen-partial-1280.png")
    assert posts == []
    page.locator("#first-unanswered").click()
    focused = page.evaluate(
        "() => [...document.querySelectorAll('fieldset.criterion')]"
        ".indexOf(document.activeElement.closest('fieldset.criterion'))"
    )
    assert focused == 2
    assert in_sight(page, "fieldset.criterion.focused")
    assert scores_of(assignment) == {}

    # The network fails: the one request stored nothing, the answers stay on the page.
    answer_sliders(page, [71, 72, 73, 74])
    failing(page)
    page.keyboard.press("Enter")
    error.wait_for(state="visible")
    assert "Could not reach the server" in error.inner_text()
    assert scores_of(assignment) == {}
    assert page.inner_text("#progress-text") == "0 of 8 done"
    page.unroute("**/screen/")

    # The retry (pressed twice: one submit runs at a time) sends the whole screen in one
    # request, then the next document comes.
    posts.clear()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_url("**/annotate/**")
    page.wait_for_function("() => document.getElementById('progress')?.value === 4")
    page.wait_for_selector("fieldset.criterion.focused")
    assert len(posts) == 1
    assert posts[0].endswith("/screen/")
    assert scores_of(assignment) == {0: (71, 1), 1: (72, 1), 2: (73, 1), 3: (74, 1)}
    second = screen_items(assignment, 4)
    assert page.locator("article.output .doc-segment").all_inner_texts() == [
        i.segment.source for i in second
    ]

    partly_stored_screen(page, assignment, posts)
    previous_revises_one_segment(page, live_server, assignment, posts, shots)
    page.screenshot(path=shots / "document-screen-done-1280.png", full_page=True)


def partly_stored_screen(page: Any, assignment: Assignment, posts: list[str]) -> None:
    """On the task's last document: its first segment answered through the API (one item at a
    time, as an API client or an earlier page sends it), then the page is reloaded."""
    item = screen_items(assignment, 4)[0]
    judgment_record(
        assignment_id=assignment.pk,
        annotator=assignment.annotator,
        item_id=item.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        answer=full_answer(item, 81),
    )
    page.reload()
    page.wait_for_selector("fieldset.criterion.focused")
    values = page.locator(".slider-value").all_inner_texts()
    assert values == ["81", "—", "—", "—"]
    assert page.inner_text("#screen-progress") == "1 of 4 segments answered on this screen"
    for n, score in [(1, 92), (2, 93), (3, 94)]:
        page.locator("fieldset.criterion").nth(n).focus()
        page.keyboard.type(str(score))
    posts.clear()
    page.keyboard.press("Enter")
    page.wait_for_url("**/my/tasks/**")
    assert len(posts) == 1
    assert {p: s for p, (s, _r) in scores_of(assignment).items() if p >= 4} == {
        4: 81,
        5: 92,
        6: 93,
        7: 94,
    }


def previous_revises_one_segment(
    page: Any, live_server: Any, assignment: Assignment, posts: list[str], shots: Path
) -> None:
    # Previous from the finished task's last document: its answers filled in; one changed
    # segment is sent as a revision, the others are not sent again.
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/4/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.locator(".revising-note").is_visible()
    assert "items 1–4" in page.inner_text(".revising-note")
    assert page.locator(".slider-value").all_inner_texts() == ["71", "72", "73", "74"]
    page.locator("fieldset.criterion").nth(2).focus()
    page.keyboard.type("33")
    page.screenshot(path=shots / "document-screen-revising-1280.png", full_page=True)
    posts.clear()
    page.keyboard.press("Enter")
    page.wait_for_url("**/my/tasks/**")
    assert len(posts) == 1
    assert scores_of(assignment)[2] == (33, 2)
    assert scores_of(assignment)[1] == (72, 1)


def test_esa_on_a_document_screen_on_a_phone(  # type: ignore[no-untyped-def]
    browser, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, locale="en-US"
    ).new_page()
    assignment = holding(page, live_server, "phone", "esa")
    # In German.
    page.context.add_cookies([{"name": "django_language", "value": "de", "url": live_server.url}])
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.inner_text("#screen-progress") == "0 von 4 Segmenten auf dieser Seite beantwortet"
    assert page.locator("article.output").count() == 4
    assert page.locator("fieldset.span-editor").count() == 4
    # Nothing wider than the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    source = page.locator("article.output .doc-segment").first
    assert source.evaluate("el => getComputedStyle(el).direction") == "rtl"
    # The first segment's first word marked as a minor error with taps, then every score.
    first = page.locator("article.output").first
    token = first.locator(".tok[data-i='1']")
    token.tap()
    token.tap()
    first.locator(".span-chip").first.wait_for()
    page.screenshot(path=shots / "document-screen-esa-390.png", full_page=True)
    sliders = page.locator("fieldset.slider-criterion")
    for n, score in enumerate([40, 90]):
        sliders.nth(n).focus()
        page.keyboard.type(str(score))
    assert page.inner_text("#screen-progress") == "2 von 4 Segmenten auf dieser Seite beantwortet"
    # A partial submit: how many are left, and the way to the first of them.
    posts = count_posts(page)
    page.locator("#submit").tap()
    error = page.locator("#annotate-error")
    assert "Noch 2 Segmente zu beantworten — zum ersten springen" in error.inner_text()
    # The progress is pinned at the top of the long page.
    assert page.evaluate("window.scrollY") > 300
    assert in_sight(page, "#screen-progress")
    assert in_sight(page, "#progress-text")
    page.screenshot(path=shots / "document-screen-esa-partial-390-de.png")
    page.locator("#first-unanswered").tap()
    assert in_sight(page, "fieldset.criterion.focused")
    assert page.locator("fieldset.criterion.focused").get_attribute("data-output") == str(
        screen_items(assignment, 0)[2].outputs.get().pk
    )
    for n, score in [(2, 90), (3, 90)]:
        sliders.nth(n).focus()
        page.keyboard.type(str(score))
    assert posts == []
    page.locator("#submit").tap()
    page.wait_for_function("() => document.getElementById('progress')?.value === 4")
    assert len(posts) == 1
    judgments = Judgment.objects.filter(assignment=assignment).order_by("item__position")
    assert [next(iter(j.answer.values()))["score"] for j in judgments] == [40, 90, 90, 90]
    spans = [len(next(iter(j.answer.values()))["spans"]) for j in judgments]
    assert spans[0] == 1
    assert spans[1:] == [0, 0, 0]
    page.context.close()


def test_a_window_of_a_document_shows_its_neighbours_on_a_phone(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    assignment = holding(page, live_server, "window", "direct_assessment", window=2)
    # A window of segments 3–4 of its document: segment 2 comes before it, none after.
    start = next(
        i
        for i in Item.objects.filter(task=assignment.task, screen=F("position")).select_related(
            "segment"
        )
        if i.segment.position_in_document == 2
    )
    Assignment.objects.filter(pk=assignment.pk).update(items_done=start.position)
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    before = start.segment.document.segments.get(position_in_document=1).source
    assert page.locator(".doc-context .ctx").all_inner_texts() == [before]
    assert (
        page.locator(".doc-context .ctx").evaluate("el => getComputedStyle(el).direction") == "rtl"
    )
    assert page.locator("article.output").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=output_dir / "screenshots" / "document-window-390.png", full_page=True)
    # Once the annotator scores, the text before the window shrinks (a button shows it whole).
    toggle = page.locator(".doc-context .source-toggle")
    assert toggle.get_attribute("aria-expanded") == "true"
    answer_sliders(page, [60])
    assert toggle.get_attribute("aria-expanded") == "false"
    assert toggle.inner_text() == "Show the whole text"
    assert "collapsed" in (page.locator("section.doc-context").first.get_attribute("class") or "")
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    # Opened by hand: it stays open while the annotator goes on scoring.
    page.locator("fieldset.criterion").nth(1).focus()
    page.keyboard.type("70")
    page.wait_for_function(
        "() => document.querySelectorAll('.slider-value')[1].textContent === '70'"
    )
    assert toggle.get_attribute("aria-expanded") == "true"


def test_a_document_answered_in_another_window_is_refused_on_screen(  # type: ignore[no-untyped-def]
    browser, live_server, output_dir: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    first, second = context.new_page(), context.new_page()
    assignment = holding(first, live_server, "two-windows", "direct_assessment")
    url = f"{live_server.url}/annotate/{assignment.pk}/"
    for page in (first, second):
        page.goto(url)
        page.wait_for_selector("fieldset.criterion.focused")
    # The second window sends the whole document first; the first window's is now stale.
    answer_sliders(second, [80, 80, 80, 80])
    second.keyboard.press("Enter")
    second.wait_for_function("() => document.getElementById('progress')?.value === 4")
    posts = count_posts(first)
    answer_sliders(first, [20, 20, 20, 20])
    first.keyboard.press("Enter")
    error = first.locator("#annotate-error")
    error.wait_for(state="visible")
    assert "in another window" in error.inner_text()
    assert "not saved" in error.inner_text()
    # The refusal of the first segment stops the rest: nothing else is sent or stored.
    assert len(posts) == 1
    assert {s for s, _r in scores_of(assignment).values()} == {80}
    first.screenshot(path=output_dir / "screenshots" / "document-screen-stale.png", full_page=True)
    context.close()
