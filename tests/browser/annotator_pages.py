"""What the browser tests share: a campaign with a task held by a new annotator, logging in
through the login page, both with the task's page open, and waiting for what a polling page
shows next."""

from __future__ import annotations

import time
from typing import Any

from annotation.models import Assignment, Campaign, ItemOutput
from annotation.tasking.services import task_assign_next
from tests.factories import PASSWORD, make_config, make_rich_campaign, make_user


def holding_a_task(username: str, protocol: str = "direct_assessment") -> Assignment:
    owner = make_user(f"organizer-{username}", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user(username)
    campaign.annotators.add(annotator)
    k = 1 if protocol == "direct_assessment" else 3
    config = make_config(campaign, protocol, outputs_per_screen=k, context_segments=1)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    return assignment


def log_in(page, live_server, username: str, lands_on: str = "**/my/tasks/") -> None:  # type: ignore[no-untyped-def]
    """Log in through the login page; an annotator lands on My tasks, an organizer on
    ``lands_on="**/campaigns/"``."""
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(lands_on)


def at_the_task(page, live_server, username: str) -> Assignment:  # type: ignore[no-untyped-def]
    """A new annotator holding a direct-assessment task, logged in, on its annotation page with
    the first question focused."""
    assignment = holding_a_task(username)
    log_in(page, live_server, username)
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    return assignment


def polled_until(page, condition: str, arg: Any = None, timeout: float = 180) -> None:  # type: ignore[no-untyped-def]
    """Wait until ``condition`` (a JavaScript function of ``arg``) holds on a page whose clock
    the test installed (``page.clock.install()`` before the page loaded; it runs as usual):
    every half second the clock jumps to the page's next status poll, which a quiet page makes
    only every 15 s. The same timers and requests, without the wait."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(condition, arg):
        assert time.monotonic() < deadline, f"not within {timeout} s: {condition}"
        page.clock.fast_forward(15_000)
        page.wait_for_timeout(500)


def holding_a_text(username: str, protocol: str, text: str, language: str = "de") -> Assignment:
    """A new annotator holding a task of ``protocol`` (one output per screen, four items) in a
    campaign whose target language is ``language``, every output's text ``text``."""
    owner = make_user(f"organizer-{username}", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    Campaign.objects.filter(pk=campaign.pk).update(target_language=language)
    annotator = make_user(username)
    campaign.annotators.add(annotator)
    config = make_config(campaign, protocol, outputs_per_screen=1, items_per_task=4)
    assignment = task_assign_next(config=config, annotator=annotator)
    assert assignment is not None
    ItemOutput.objects.filter(item__task=assignment.task).update(text=text)
    return assignment


def opened_with_spans(browser, live_server, assignment: Assignment, **context: Any):  # type: ignore[no-untyped-def]
    """A new browser context (1280 × 900, English, unless ``context`` says otherwise) logged in
    as the assignment's annotator, on its page with the span editor focused."""
    options = {"viewport": {"width": 1280, "height": 900}, "locale": "en-US"} | context
    page = browser.new_context(**options).new_page()
    log_in(page, live_server, assignment.annotator.get_username())
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.span-editor.focused")
    return page
