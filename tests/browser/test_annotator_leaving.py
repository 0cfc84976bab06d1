"""In a real Chromium: leaving the annotation page with an answer given but not stored asks
first (the answer would be lost), leaving it with nothing unsent does not, and the last answer
of a task lands on My tasks with a confirmation that the task is finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Judgment
from tests.browser.annotator_pages import at_the_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_leaving_with_an_unsent_answer_asks_first_and_staying_keeps_it(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, "leaver")
    url = f"{live_server.url}/annotate/{assignment.pk}/"
    asked: list[str] = []

    def stay(dialog) -> None:  # type: ignore[no-untyped-def]
        asked.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", stay)
    # Nothing answered yet: My tasks opens without a question.
    page.click("header a:has-text('My tasks')")
    page.wait_for_url("**/my/tasks/")
    assert asked == []
    page.go_back()
    page.wait_for_selector("fieldset.criterion.focused")

    page.keyboard.type("64")
    page.click("header a:has-text('My tasks')")
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"]
    # Staying keeps the page and the answer, which is then sent as usual.
    assert page.url == url
    assert page.input_value("input[type=range]") == "64"
    page.focus("fieldset.criterion")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    stored = Judgment.objects.get(annotator__username="leaver")
    assert [v for o in stored.answer.values() for v in o.values()] == [64]
    # Stored: the next item is on the page, and leaving asks nothing.
    page.click("header a:has-text('My tasks')")
    page.wait_for_url("**/my/tasks/")
    assert asked == ["beforeunload"]


def test_an_unsent_answer_that_is_left_anyway_is_not_stored(
    page,
    live_server,  # type: ignore[no-untyped-def]
) -> None:
    at_the_task(page, live_server, "goes-anyway")
    asked: list[str] = []

    def leave(dialog) -> None:  # type: ignore[no-untyped-def]
        asked.append(dialog.type)
        dialog.accept()

    page.on("dialog", leave)
    page.keyboard.type("30")
    page.click("header a:has-text('My tasks')")
    page.wait_for_url("**/my/tasks/")
    assert asked == ["beforeunload"]
    assert not Judgment.objects.filter(annotator__username="goes-anyway").exists()


def test_the_last_answer_of_a_task_lands_on_my_tasks_saying_it_is_finished(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, "finisher")
    size = assignment.task.size
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.type), d.dismiss()))
    for done in range(1, size):
        page.keyboard.type("70")
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => document.getElementById('progress')?.value === {done}")
    page.keyboard.type("70")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/my/tasks/?finished={assignment.pk}")
    notice = page.locator("#task-finished")
    assert notice.is_visible()
    assert f"all {size} items" in notice.inner_text()
    assert assignment.task.config.name in notice.inner_text()
    assert asked == []
    assert Judgment.objects.filter(assignment=assignment).count() == size
    page.screenshot(path=output_dir / "screenshots" / "my-tasks-finished.png", full_page=True)
    # The notice is for that task only: My tasks on its own says nothing of it.
    page.goto(f"{live_server.url}/my/tasks/")
    assert page.locator("#task-finished").count() == 0

    # Review: from item 1, "Next item" walks through the answers, up to the last.
    page.click("#my-assignments a:has-text('Review')")
    page.wait_for_selector("fieldset.criterion.focused")
    for n in range(1, size):
        assert page.title().startswith(f"Item {n} of {size}")
        assert page.input_value("input[type=range]") == "70"
        if n == 2:
            shot = output_dir / "screenshots" / "review-next-item.png"
            page.screenshot(path=shot, full_page=True)
        page.click("#next-answered")
        page.wait_for_url(f"**/annotate/{assignment.pk}/{n + 1}/")
    assert page.title().startswith(f"Item {size} of {size}")
    assert page.locator("#next-answered").count() == 0
    # A finished task has no current item to go back to: the way out is My tasks.
    assert page.locator("#back-to-current").inner_text() == "My tasks"
    # A revision of the last item is stored and lands on My tasks again.
    page.focus("fieldset.criterion")
    page.keyboard.type("80")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/my/tasks/?finished={assignment.pk}")
    assert asked == []
    last = Judgment.objects.get(assignment=assignment, item__position=size - 1)
    assert [v for o in last.answer.values() for v in o.values()] == [80]
