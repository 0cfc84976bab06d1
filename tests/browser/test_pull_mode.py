"""In a real Chromium: an annotator pulls the screens of an adaptive-allocation task. While more
may follow, the progress says what is known ("n answered · more may follow, up to 30"); past
its first batch the task grows in place (QC items come in), its end known once the budget is
allocated ("10 of 18 done"), until the
budget is spent: the task ends, My tasks says the protocol needs no more judgments, and the
organizer's setup page shows the allocation stopped. Screenshots at 1280 and 390 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import AllocationState, Assignment, Item, ItemKind, Task
from annotation.tasking.pull import BATCH_ITEMS, config_tasks_build
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# The QC mix of 10, 5 and 5 per 100 items, whose copies the counts below describe.
QC_MIX = {"qc_bad_reference": 10, "qc_repeat": 5, "qc_reference": 5}


def answer(page, done: int) -> None:  # type: ignore[no-untyped-def]
    """Score the current item 75 with the keys and submit; wait until ``done`` are done."""
    page.keyboard.press("7")
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => document.getElementById('progress')?.value === n", arg=done)
    page.wait_for_selector("fieldset.criterion.focused")


def test_an_annotator_pulls_screens_until_the_budget_is_spent(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-pull", organizer=True)
    campaign = make_rich_campaign(owner=owner)
    annotator = make_user("puller")
    campaign.annotators.add(annotator)
    config = make_config(
        campaign,
        "direct_assessment",
        build=False,
        outputs_per_screen=1,
        items_per_task=30,
        allocation="adaptive",
        allocation_budget=14,
        **QC_MIX,
    )
    config_tasks_build(config=config)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    log_in(page, live_server, "puller")
    page.click(f"form[action='/my/tasks/take/{config.pk}/'] button")
    page.wait_for_url("**/annotate/**")
    page.wait_for_selector("fieldset.criterion.focused")
    assignment_id = page.url.rstrip("/").rsplit("/", 1)[1]
    # The first batch is built; more may follow: what is known, not "0 of 10".
    assert page.get_attribute("#progress", "max") == "30"
    assert page.inner_text("#progress-text") == "0 answered · more may follow, up to 30"
    for n in range(BATCH_ITEMS):
        answer(page, n + 1)
        if n < BATCH_ITEMS - 1:
            assert page.inner_text("#progress-text") == (
                f"{n + 1} answered · more may follow, up to 30"
            )
    # The tenth answer brought the next batch: 4 real screens (the budget's rest) and 4 QC
    # items (2 bad references, 1 repeat, 1 reference: the rate of 18 items), in place.
    task = Task.objects.get(assignments__pk=assignment_id)
    assert task.size == 18
    assert page.get_attribute("#progress", "max") == "18"
    assert "10 of 18 done" in page.inner_text("#progress-text")
    kinds = set(Item.objects.filter(task=task).values_list("kind", flat=True))
    assert kinds == {ItemKind.REAL, ItemKind.BAD_REFERENCE, ItemKind.REPEAT, ItemKind.REFERENCE}
    page.screenshot(path=shots / "pull-annotate-desktop.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "pull-annotate-phone.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1280, "height": 900})
    # Previous still opens an item of the first batch.
    assert page.get_attribute("#previous", "href") == f"/annotate/{assignment_id}/10/"
    for n in range(BATCH_ITEMS, 17):
        answer(page, n + 1)
    page.keyboard.press("7")
    page.keyboard.press("5")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/my/tasks/?finished={assignment_id}")
    assert page.locator("#allocation-stopped").is_visible()
    assert "needs no more judgments" in page.inner_text("#allocation-stopped")
    assert page.locator(f"form[action='/my/tasks/take/{config.pk}/']").count() == 0
    page.screenshot(path=shots / "pull-my-tasks-desktop.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=shots / "pull-my-tasks-phone.png", full_page=True)
    assert Assignment.objects.get(pk=assignment_id).status == Assignment.Status.DONE
    assert AllocationState.objects.get(config=config).stopped == AllocationState.Stop.BUDGET

    # The organizer sees the allocation stopped on the setup page.
    organizer = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    setup = organizer.new_page()
    log_in(setup, live_server, "organizer-pull", lands_on="**/campaigns/")
    setup.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")
    row = setup.locator(f"#allocation-{config.pk}")
    assert row.get_attribute("data-allocation-stopped") == "budget"
    assert "14 allocated of a budget of 14" in row.inner_text()
    setup.screenshot(path=shots / "pull-setup-desktop.png", full_page=True)
    setup.set_viewport_size({"width": 390, "height": 844})
    setup.screenshot(path=shots / "pull-setup-phone.png", full_page=True)
    organizer.close()
