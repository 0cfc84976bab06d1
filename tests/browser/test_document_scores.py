"""In a real Chromium: a document screen whose protocol asks for a document-level score ends
with a 0–100 slider for the whole document, unset at first; Submit needs it and sends it with
the segments in one request, stored with them or not at all: a failed submit stores neither; a
score stored already (by an API client) shows on a reload and is not sent again; Previous
shows it and sends a changed one as a revision. At 1280 and 390 px, with screenshots."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.judging.document_scores import document_score_record
from annotation.models import (
    Assignment,
    Campaign,
    DocumentJudgment,
    DocumentJudgmentRevision,
    Judgment,
    ProtocolConfig,
)
from annotation.tasking.build import tasks_build
from annotation.tasking.services import task_assign
from tests.browser.annotator_pages import log_in
from tests.factories import lines, make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SOURCE = [
    "Der Junge ging am Morgen zur Schule.",
    "Das Wetter in der Stadt ist heute schön.",
    "Er las ein nützliches Buch über Geschichte.",
    "Das Museum eröffnete eine Ausstellung.",
    "Die Gemüsepreise stiegen diese Woche.",
    "Die Mannschaft gewann das letzte Spiel.",
]
DOCUMENTS = ["school"] * 3 + ["town"] * 3
GOOD = [
    "The boy went to school in the morning.",
    "The weather in the city is nice today.",
    "He read a useful book about history.",
    "The museum opened an exhibition.",
    "Vegetable prices rose this week.",
    "The team won the last match.",
]
POOR = [" ".join(reversed(s.split())) for s in GOOD]


def holding(page: Any, live_server: Any, name: str) -> Assignment:
    """Two documents of three segments, two systems, direct assessment on whole-document
    screens with a document-level score (no QC items), a task of both documents held by a new
    annotator, logged in."""
    owner = make_user(f"organizer-{name}", organizer=True)
    campaign = make_campaign(owner=owner, name="Documents scored", source_language="de")
    files = [
        UploadFile("src.de", lines(SOURCE), "source"),
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
        protocol="direct_assessment",
        mode="source",
        screen=ProtocolConfig.Screen.DOCUMENT,
        document_score=True,
        items_per_task=6,
        qc_bad_reference=0,
        qc_repeat=0,
        qc_reference=0,
    )
    tasks_build(config=config)
    annotator = make_user(name)
    campaign.annotators.add(annotator)
    assignment = task_assign(task=config.tasks.order_by("position").first(), annotator=annotator)
    log_in(page, live_server, name)
    return assignment


def answer(page: Any, scores: dict[int, int]) -> None:
    """Focus the n-th question (segments, then the document score) and type its score."""
    for n, score in scores.items():
        page.locator("fieldset.criterion").nth(n).focus()
        page.keyboard.type(str(score))
        page.wait_for_function(
            "([n, score]) => document.querySelectorAll('fieldset.criterion')[n]"
            ".querySelector('.slider-value').textContent === score",
            arg=[n, str(score)],
        )


def posts_of(page: Any) -> list[str]:
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    return posts


def document_scores(assignment: Assignment) -> dict[int, tuple[int, int]]:
    """Score and revision of each document judgment, by its screen's position."""
    return {
        d.screen.position: (d.score, d.revision)
        for d in DocumentJudgment.objects.filter(assignment=assignment).select_related("screen")
    }


def previous_revises_the_score(
    page: Any, live_server: Any, assignment: Assignment, posts: list[str], shots: Path
) -> None:
    # Previous: the first document with its answers and its score; a changed score alone is
    # sent, as a revision (the earlier one kept).
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/3/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.locator(".slider-value").all_inner_texts() == ["71", "72", "73", "65"]
    answer(page, {3: 80})
    page.screenshot(path=shots / "document-score-revising-1280.png", full_page=True)
    posts.clear()
    page.keyboard.press("Enter")
    page.wait_for_url("**/my/tasks/**")
    assert len(posts) == 1
    assert posts[0].endswith("/screen/")
    assert document_scores(assignment) == {0: (80, 2), 3: (30, 1)}
    assert DocumentJudgmentRevision.objects.get().score == 65


def test_a_document_score_after_the_segments_survives_failure_reload_and_previous(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    assignment = holding(page, live_server, "scorer")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    # Three segments, then the document's own question, unset.
    assert page.locator("article.output").count() == 3
    score = page.locator("section.document-score fieldset.criterion")
    assert score.get_attribute("data-criterion") == "document"
    assert score.locator(".slider-value").inner_text() == "—"
    assert page.locator("fieldset.criterion").count() == 4
    assert "whole document" in page.inner_text("section.document-score")
    page.screenshot(path=shots / "document-score-1280.png", full_page=True)

    # Without the document score nothing is sent.
    posts = posts_of(page)
    answer(page, {0: 61, 1: 62, 2: 63})
    page.keyboard.press("Enter")
    assert "answer every question" in page.inner_text("#annotate-error")
    assert posts == []

    # The screen's one request fails: neither the score nor the segments are stored, and
    # everything stays on the page.
    answer(page, {3: 65})
    page.route("**/screen/", lambda route: route.abort())
    page.keyboard.press("Enter")
    page.locator("#annotate-error").wait_for(state="visible")
    assert "Could not reach the server" in page.inner_text("#annotate-error")
    assert document_scores(assignment) == {}
    assert not Judgment.objects.filter(assignment=assignment).exists()
    page.unroute("**/screen/")

    # The score stored meanwhile (as an API client stores it): a reload shows it; the
    # segments are sent, the score is not.
    first = assignment.task.items.get(position=0)
    document_score_record(
        assignment_id=assignment.pk,
        annotator=assignment.annotator,
        item_id=first.pk,
        revision_seen=0,
        submission_id=uuid.uuid4(),
        score=65,
    )
    page.on("dialog", lambda dialog: dialog.accept())
    page.reload()
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.locator(".slider-value").all_inner_texts() == ["—", "—", "—", "65"]
    answer(page, {0: 71, 1: 72, 2: 73})
    posts.clear()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 3")
    page.wait_for_selector("fieldset.criterion.focused")
    assert len(posts) == 1
    assert posts[0].endswith("/screen/")
    assert document_scores(assignment) == {0: (65, 1)}

    # The second document: every answer and its score, then the task is done.
    assert page.locator(".slider-value").all_inner_texts() == ["—"] * 4
    answer(page, {0: 41, 1: 42, 2: 43, 3: 30})
    posts.clear()
    page.keyboard.press("Enter")
    page.wait_for_url("**/my/tasks/**")
    assert len(posts) == 1
    assert posts[0].endswith("/screen/")
    assert document_scores(assignment) == {0: (65, 1), 3: (30, 1)}

    previous_revises_the_score(page, live_server, assignment, posts, shots)


def test_a_document_score_on_a_phone(browser, live_server, output_dir: Path) -> None:  # type: ignore[no-untyped-def]
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    page = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True, locale="en-US"
    ).new_page()
    assignment = holding(page, live_server, "phone-scorer")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # A tap on the unset document slider sets it, as on any slider.
    slider = page.locator("section.document-score input[type=range]")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    page.touchscreen.tap(box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2)
    page.wait_for_function(
        "() => document.querySelector('section.document-score .slider-value').textContent !== '—'"
    )
    answer(page, {0: 50, 1: 55, 2: 60})
    page.screenshot(path=shots / "document-score-390.png", full_page=True)
    page.locator("#submit").tap()
    page.wait_for_function("() => document.getElementById('progress')?.value === 3")
    (stored,) = document_scores(assignment).values()
    assert 60 <= stored[0] <= 90
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_the_analysis_page_and_the_dashboard_show_document_level_scores(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    assignment = holding(page, live_server, "scored-once")
    # The annotator's two screens, scored through the service as the page would (the second
    # once reached).
    for first, value in ((0, 70), (3, 35)):
        Assignment.objects.filter(pk=assignment.pk).update(items_done=first)
        item = assignment.task.items.get(position=first)
        document_score_record(
            assignment_id=assignment.pk,
            annotator=assignment.annotator,
            item_id=item.pk,
            revision_seen=0,
            submission_id=uuid.uuid4(),
            score=value,
        )
    page.context.clear_cookies()
    log_in(page, live_server, "organizer-scored-once", lands_on="**/campaigns/")
    campaign = assignment.task.config.campaign
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/campaigns/{campaign.pk}/analysis/")
        section = page.locator("section.document-scores")
        assert "Document-level scores" in section.locator("h2").inner_text()
        assert "2 document scores of 2 documents or windows" in section.inner_text()
        systems = {d.system_id for d in DocumentJudgment.objects.filter(assignment=assignment)}
        assert section.locator("tbody tr").count() == len(systems)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        section.screenshot(path=shots / f"analysis-document-scores-{width}.png")
        # The dashboard shows the same section under its human rankings.
        page.goto(f"{live_server.url}/campaigns/{campaign.pk}/dashboard/")
        section = page.locator("#human section.document-scores")
        assert section.locator("tbody tr").count() == len(systems)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        section.screenshot(path=shots / f"dashboard-document-scores-{width}.png")
