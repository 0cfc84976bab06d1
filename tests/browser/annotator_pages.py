"""What the annotator browser tests share: a campaign with a task held by a new annotator,
logging in through the login page, and both with the task's page open."""

from __future__ import annotations

from annotation.models import Assignment
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
