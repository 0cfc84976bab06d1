"""In a real Chromium: when a submit fails, the annotator's answer stays on the page, the page
says in plain words what happened and how to go on, and the same answer can be sent again —
after logging in again in another tab, after resuming a task whose hold ended, or after a
server error."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Assignment, Judgment
from annotation.tasking.services import assignments_expire
from tests.browser.annotator_pages import at_the_task
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def scores(annotator) -> list[float]:  # type: ignore[no-untyped-def]
    return [v for j in Judgment.objects.filter(annotator=annotator) for o in j.answer.values()
            for v in o.values()]  # fmt: skip


def test_an_annotator_logged_out_mid_item_logs_in_again_and_sends_the_same_answer(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, "night-owl")
    page.keyboard.type("75")

    # The session ends while the answer is on the screen (here: "Log out" in another tab).
    other = page.context.new_page()
    other.goto(f"{live_server.url}/my/tasks/")
    other.click("header button:has-text('Log out')")
    other.wait_for_url("**/")
    other.close()
    page.keyboard.press("Enter")
    error = page.locator("#annotate-error")
    error.wait_for(state="visible")
    assert "no longer logged in" in error.inner_text()
    assert "press Submit (or Enter)" in error.inner_text()
    assert page.inner_text(".slider-value") == "75"
    page.screenshot(path=output_dir / "screenshots" / "annotate-logged-out.png", full_page=True)
    assert not Judgment.objects.exists()

    # The message's link logs in in a new tab (a login gives a new CSRF token); back on the
    # page, Enter sends the answer that was kept, and the next item comes.
    with page.expect_popup() as popup:
        error.locator("a").click()
    login = popup.value
    login.fill("#id_username", "night-owl")
    login.fill("#id_password", PASSWORD)
    login.click("main button[type=submit]")
    login.wait_for_url("**/my/tasks/")
    login.close()
    page.bring_to_front()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    assert error.is_hidden()
    assert scores(assignment.annotator) == [75]


def test_an_answer_that_arrives_after_the_hold_ended_can_be_sent_after_resuming(
    page,
    live_server,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, "back-from-a-break")
    page.keyboard.type("65")

    # The hold runs out while the page is open, and another pull returns the slot to the pool.
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    assignments_expire()
    page.keyboard.press("Enter")
    error = page.locator("#annotate-error")
    error.wait_for(state="visible")
    assert "press Resume for this task on My tasks in another tab" in error.inner_text()
    assert page.inner_text(".slider-value") == "65"
    assert not Judgment.objects.exists()

    # The message's link opens My tasks in a new tab; Resume there takes the place back, and
    # Enter on this page sends the answer kept on it.
    with page.expect_popup() as popup:
        error.locator("a").click()
    tasks = popup.value
    tasks.click("#my-assignments a:has-text('Resume')")
    tasks.wait_for_selector("fieldset.criterion.focused")
    tasks.close()
    page.bring_to_front()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    assert error.is_hidden()
    assert scores(assignment.annotator) == [65]


@pytest.mark.parametrize(
    ("status", "content_type", "body"),
    [
        (502, "text/html", "<html><body>Bad Gateway</body></html>"),
        (500, "application/json", '{"detail": "A server error occurred."}'),
    ],
)
def test_a_server_error_keeps_the_answer_and_says_to_try_again(
    page,
    live_server,
    status: int,
    content_type: str,
    body: str,  # type: ignore[no-untyped-def]
) -> None:
    assignment = at_the_task(page, live_server, f"unlucky-{status}")
    submit = "**/api/assignments/*/submit/"
    # The route is in place before the answer is typed (set just before Enter, the submit now
    # and then went past it to the server on a loaded machine), and the answer is on the page.
    page.route(
        submit, lambda route: route.fulfill(status=status, content_type=content_type, body=body)
    )
    page.keyboard.type("40")
    page.wait_for_function("() => document.querySelector('.slider-value').textContent === '40'")
    with page.expect_response(submit) as answered:
        page.keyboard.press("Enter")
    assert answered.value.status == status
    error = page.locator("#annotate-error")
    error.wait_for(state="visible")
    assert "still on this page; press Submit (or Enter) to try again" in error.inner_text()
    assert page.inner_text(".slider-value") == "40"
    page.unroute(submit)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    assert scores(assignment.annotator) == [40]
