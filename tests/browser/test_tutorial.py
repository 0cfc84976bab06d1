"""In a real Chromium: an organizer adds a tutorial item with the page's form and sets the rule;
an annotator who fails it under a "stop" rule reads feedback after each answer and then the stop
message, with no real item; another, under a "continue" rule with an attention check, reads the
check's feedback naming the damaged part and goes on to the real items. Screenshots at 1280 and
390 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Assignment, TutorialItem, TutorialRun
from annotation.tutorial.items import tutorial_items_add
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_rich_campaign, make_user
from tests.tutorial_factories import GOOD, holding, tutorial_config

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shoot(page, path: Path, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Screenshots at desktop and phone width; the page must not scroll sideways on a phone."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator(selector).scroll_into_view_if_needed()
        page.screenshot(path=path.with_name(f"{path.stem}-{width}.png"), full_page=True)
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{path.stem} scrolls sideways at {width}px ({scroll}px)"
    page.set_viewport_size({"width": 1280, "height": 900})


def answer(page, digits: str) -> None:  # type: ignore[no-untyped-def]
    """Type a score into the focused slider and submit it; wait for the feedback."""
    page.wait_for_selector("fieldset.criterion.focused")
    for key in digits:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#tutorial-feedback:not([hidden])")


def tutorial_made_on_the_page(page, live_server, campaign, config, shots: Path) -> None:  # type: ignore[no-untyped-def]
    """The organizer adds two items (GOOD, then one that drops a clause) with the page's form
    and a rule that stops whoever does not meet both."""
    log_in(page, live_server, "olga", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/{config.pk}/")
    page.click("text=Add a tutorial")
    for n, (source, output, low, high, feedback) in enumerate(
        [
            (GOOD["source"], GOOD["outputs"][0], "70", "100", GOOD["feedback"]),
            (
                "Das Haus ist klein, aber es hat einen Garten.",
                "The house is small.",
                "0",
                "40",
                "This translation drops a clause — it should score low.",
            ),
        ]
    ):
        page.fill("#add-item textarea[name=source]", source)
        page.fill("#add-item textarea[name=outputs]", output)
        page.select_option("#add-item select[name=criterion]", "score")
        page.fill("#add-item input[name=low]", low)
        page.fill("#add-item input[name=high]", high)
        page.fill("#add-item textarea[name=feedback]", feedback)
        page.click("#add-item button[type=submit]")
        # The page is back with the item listed (not the form's page before it).
        page.wait_for_function(
            "(n) => document.querySelectorAll('#tutorial-items tr[data-item]').length === n",
            arg=n + 1,
        )
    page.fill("#rule input[name=pass_at_least]", "2")
    page.select_option("#rule select[name=on_fail]", "stop")
    page.fill("#rule textarea[name=stop_message]", "Thank you — this study needs other skills.")
    page.click("#rule button[type=submit]")
    page.wait_for_selector("text=Tutorial rule saved.")
    assert page.locator("#tutorial-items tr[data-item]").count() == 2
    assert "Translation 1: score 0–40" in page.inner_text("#tutorial-items")
    shoot(page, shots / "tutorial-organizer.png", "#tutorial-items")


def test_an_organizer_sets_a_tutorial_and_a_failing_annotator_is_stopped(  # type: ignore[no-untyped-def]
    page, live_server, browser, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Tutorial news")
    annotator = make_user("tom")
    campaign.annotators.add(annotator)
    config = make_config(
        campaign, "direct_assessment", name="DA study", outputs_per_screen=1, items_per_task=6
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    # The organizer adds two items with the form and a rule that stops who fails.
    tutorial_made_on_the_page(page, live_server, campaign, config, shots)

    # The annotator opens the task: the tutorial comes first.
    assignment = holding(config, annotator)
    tom = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    tom.set_default_timeout(15_000)
    log_in(tom, live_server, "tom")
    tom.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    tom.wait_for_url(f"**/annotate/{assignment.pk}/tutorial/")
    assert "Das Haus ist klein." in tom.inner_text(".current.source")
    answer(tom, "85")
    feedback = tom.inner_text("#tutorial-feedback")
    assert "Your answer met the expectation." in feedback
    assert GOOD["feedback"] in feedback
    shoot(tom, shots / "tutorial-feedback-met.png", "#tutorial-feedback")
    tom.keyboard.press("Enter")  # Continue has the focus
    tom.wait_for_selector("text=drops a clause", state="detached")
    tom.wait_for_function("() => document.getElementById('progress')?.value === 1")
    answer(tom, "90")
    feedback = tom.inner_text("#tutorial-feedback")
    assert "Your answer did not meet the expectation." in feedback
    assert "Translation 1: score 90, expected 0–40." in feedback
    assert "This translation drops a clause — it should score low." in feedback
    assert "Thank you — this study needs other skills." in feedback
    shoot(tom, shots / "tutorial-feedback-missed.png", "#tutorial-feedback")
    tom.click("#tutorial-next")
    tom.wait_for_selector("#tutorial-stopped")
    assert "Thank you — this study needs other skills." in tom.inner_text("#tutorial-stopped")
    shoot(tom, shots / "tutorial-stopped.png", "#tutorial-stopped")
    # No real item: the task page comes back to the message.
    tom.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    tom.wait_for_selector("#tutorial-stopped")
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.RELEASED
    tom.context.close()

    # The organizer sees who failed.
    page.reload()
    row = page.locator("#tutorial-runs tr[data-annotator=tom]")
    assert "Failed, stopped" in row.inner_text()
    assert "1 / 2" in row.inner_text()
    shoot(page, shots / "tutorial-organizer-runs.png", "#tutorial-runs")


def test_a_failing_annotator_who_may_continue_reads_the_attention_checks_feedback(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Tutorial news")
    annotator = make_user("ann")
    campaign.annotators.add(annotator)
    config = tutorial_config(campaign, on_fail="continue", attention_check=True)
    check = TutorialItem.objects.get(config=config, original__isnull=False)
    start, end = check.expectation["check"]["1"]
    assignment = holding(config, annotator)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    log_in(page, live_server, "ann")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_url("**/tutorial/")
    for n, digits in enumerate(["85", "20", "95"]):
        page.wait_for_function("(n) => document.getElementById('progress')?.value === n", arg=n)
        answer(page, digits)
        if n < 2:
            page.click("#tutorial-next")
    feedback = page.inner_text("#tutorial-feedback")
    assert f"“{check.outputs[0][start:end]}” (characters {start}–{end})" in feedback
    assert "you gave 95 here and 85 there" in feedback
    assert "You may continue to the real items" in feedback
    shoot(page, shots / "tutorial-attention-check.png", "#tutorial-feedback")
    page.click("#tutorial-next")
    page.wait_for_url(f"**/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert "Item 1 of" in page.title()
    assert TutorialRun.objects.get().status == TutorialRun.Status.CONTINUED


def test_an_esa_tutorial_explains_a_span_of_the_wrong_severity(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("olga", organizer=True)
    campaign = make_rich_campaign(owner=owner, name="Tutorial news")
    annotator = make_user("eve")
    campaign.annotators.add(annotator)
    config = make_config(campaign, "esa", name="ESA study", outputs_per_screen=1, items_per_task=4)
    feedback = "“big” says the opposite of “klein”: a major error."
    tutorial_items_add(
        config=config,
        items=[
            {
                "source": "Das Haus ist klein.",
                "outputs": ["The house is big."],
                "expectation": {"spans": {"1": [{"start": 13, "end": 16, "severity": "major"}]}},
                "feedback": feedback,
            }
        ],
    )
    assignment = holding(config, annotator)
    log_in(page, live_server, "eve")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_url("**/tutorial/")
    # "big" marked as a minor error (a word clicked twice), then a score.
    big = page.locator("fieldset.span-editor .tok", has_text="big")
    big.click()
    big.click()
    assert page.locator(".span-chip").count() == 1
    page.locator("fieldset.crit-score input[type=range]").click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#tutorial-feedback:not([hidden])")
    text = page.inner_text("#tutorial-feedback")
    assert (
        "Translation 1: an error should be marked over “big” (characters 13–16) (severity "
        "major); none of your marks covers it." in text
    )
    assert feedback in text
    shoot(page, output_dir / "screenshots" / "tutorial-esa.png", "#tutorial-feedback")
    page.click("#tutorial-next")
    page.wait_for_url(f"**/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.span-editor")
