"""In a real Chromium, keyboard only: an annotator opens an invite link and finishes a 10-item
task of every protocol, each next item shown in place from the submit's answer (no page load);
a reload midway loses nothing; the progress bar moves; after a revision the current item comes
in place; Arabic reads right-to-left; markup in an uploaded segment stays text. Screenshots at
desktop and phone width."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.campaigns.services import campaign_data_import
from annotation.campaigns.uploads import UploadFile
from annotation.models import Assignment, Item, Judgment, ProtocolConfig
from annotation.tasking.build import tasks_build
from annotation.tasking.invites import invite_create, invite_token
from annotation.tasking.services import task_assign
from tests.browser.annotator_pages import log_in
from tests.factories import PASSWORD, lines, make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "خبر عاجل <script>alert(1)</script>"
ARABIC = [
    SCRIPT,
    "ذهب الولد إلى المدرسة صباحا.",
    "الطقس جميل اليوم في المدينة.",
    "قرأت كتابا مفيدا عن التاريخ.",
    "يعمل الفريق على مشروع جديد.",
    "افتتح المتحف معرضا للفن الحديث.",
    "ارتفعت أسعار الخضار هذا الأسبوع.",
    "فاز المنتخب في المباراة الأخيرة.",
    "سافرت العائلة إلى البحر في الصيف.",
    "تعلم الطلاب لغة جديدة هذا العام.",
    "أعلنت الحكومة عن خطة للنقل العام.",
    "شارك العلماء في مؤتمر دولي.",
]
REF_A = [
    "Breaking news",
    "The boy went to school in the morning.",
    "The weather is nice in the city today.",
    "I read a useful book about history.",
    "The team is working on a new project.",
    "The museum opened an exhibition of modern art.",
    "Vegetable prices rose this week.",
    "The national team won the last match.",
    "The family travelled to the sea in the summer.",
    "The students learned a new language this year.",
    "The government announced a plan for public transport.",
    "Scientists took part in an international conference.",
]
REF_B = [r.replace("The ", "This ", 1) if r.startswith("The ") else r + " indeed" for r in REF_A]


def campaign_with_arabic(owner):  # type: ignore[no-untyped-def]
    campaign = make_campaign(owner=owner, name="Arabic news", source_language="ar")
    files = [
        UploadFile("src.ar", lines(ARABIC), "source"),
        UploadFile("ref.A.en", lines(REF_A), "references"),
        UploadFile("ref.B.en", lines(REF_B), "references"),
        UploadFile("good.txt", lines(REF_A), "systems"),
        UploadFile("fair.txt", lines([" ".join(r.split()[:-1]) + "." for r in REF_A]), "systems"),
        UploadFile("poor.txt", lines([" ".join(reversed(r.split())) for r in REF_A]), "systems"),
    ]
    campaign_data_import(campaign=campaign, files=files, user=owner)
    for name, protocol, mode, k in [
        ("Adequacy and fluency", "adequacy_fluency", "bilingual", 3),
        ("Ranking", "ranking", "bilingual", 3),
        ("Direct assessment", "direct_assessment", "source", 1),
    ]:
        config = ProtocolConfig.objects.create(
            campaign=campaign,
            name=name,
            protocol=protocol,
            mode=mode,
            outputs_per_screen=k,
            items_per_task=10,
            context_segments=1,
        )
        tasks_build(config=config)
    return campaign


# Keys that answer one screen of each protocol completely (3 outputs; DA has one).
KEYS = {
    "adequacy_fluency": ["5", "4", "3", "3", "1", "2"],
    "ranking": ["1", "2", "3"],
    "direct_assessment": ["7", "5"],
}


def tab_to(page, selector: str, limit: int = 60) -> None:  # type: ignore[no-untyped-def]
    """Press Tab, as a keyboard-only user does, until ``selector`` has the focus."""
    target = page.locator(selector)
    for _ in range(limit):
        page.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"{selector} cannot be reached with Tab")


def shown_item(page) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """The title and the translations the page shows."""
    return page.title(), page.locator("article.output p.text").all_inner_texts()


def current_item(assignment_id) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """The title and the translations of the task's current item, from the database."""
    assignment = Assignment.objects.get(pk=assignment_id)
    item = Item.objects.get(task=assignment.task, position=assignment.items_done)
    title = f"Item {assignment.items_done + 1} of {assignment.task.size} · EvalSite"
    return title, [o.text for o in item.outputs.order_by("position")]


def submit_in_place(page, done: int) -> None:  # type: ignore[no-untyped-def]
    """Enter submits; the next item comes with the answer and replaces this one without a page
    load (a marker set on this document survives)."""
    page.evaluate("window.__samePage = true")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.getElementById('progress')?.value === {done}")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.evaluate("window.__samePage") is True


def test_an_invited_annotator_finishes_a_task_of_every_protocol_with_the_keyboard(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-a", organizer=True)
    campaign = campaign_with_arabic(owner)
    invite = invite_create(campaign=campaign, label="Layla", created_by=owner)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    page.goto(f"{live_server.url}/invite/{invite_token(invite=invite)}/")
    tab_to(page, "#accept")
    page.keyboard.press("Enter")
    page.wait_for_url("**/my/tasks/")
    page.screenshot(path=shots / "my-tasks.png", full_page=True)

    for protocol in ("adequacy_fluency", "ranking", "direct_assessment"):
        config = ProtocolConfig.objects.get(campaign=campaign, protocol=protocol)
        page.goto(f"{live_server.url}/my/tasks/")
        tab_to(page, f"form[action='/my/tasks/take/{config.pk}/'] button")
        page.keyboard.press("Enter")
        page.wait_for_url("**/annotate/**")
        page.wait_for_selector("fieldset.criterion.focused")
        assignment_id = page.url.rstrip("/").rsplit("/", 1)[1]
        for n in range(10):
            progress = int(page.get_attribute("#progress", "value"))
            assert progress == n, (protocol, n)
            # Whether loaded or shown in place, the page shows the task's current item,
            # unanswered, and links to the one before.
            assert shown_item(page) == current_item(assignment_id), (protocol, n)
            assert page.locator("fieldset.criterion.answered").count() == 0
            previous = page.locator("#previous")
            if n == 0:
                assert previous.is_hidden()
            else:
                assert previous.get_attribute("href") == f"/annotate/{assignment_id}/{n}/"
            if n == 5:
                # Reload midway: nothing lost, the same place in the task.
                page.reload()
                page.wait_for_selector("fieldset.criterion.focused")
                assert int(page.get_attribute("#progress", "value")) == 5
                assert "5 of 10 done" in page.inner_text("#progress-text")
            if n == 1:
                page.screenshot(path=shots / f"annotate-{protocol}-desktop.png", full_page=True)
                page.set_viewport_size({"width": 375, "height": 800})
                page.screenshot(path=shots / f"annotate-{protocol}-phone.png", full_page=True)
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= 375, f"{protocol} scrolls sideways on a phone ({width}px)"
                page.set_viewport_size({"width": 1280, "height": 900})
            for key in KEYS[protocol]:
                page.keyboard.press(key)
            if n < 9:
                submit_in_place(page, n + 1)
            else:
                # The last answer finishes the task: back to My tasks.
                with page.expect_navigation():
                    page.keyboard.press("Enter")
        page.wait_for_url(f"**/my/tasks/?finished={assignment_id}")
        assert page.locator("#task-finished").is_visible()
        assignment = Assignment.objects.get(task__config=config)
        assert assignment.status == Assignment.Status.DONE
        assert Judgment.objects.filter(item__task__config=config).count() == 10

    # Every value the keys set arrived as typed.
    da = Judgment.objects.filter(item__task__config__protocol="direct_assessment")
    assert {v for j in da for out in j.answer.values() for v in out.values()} == {75}
    af = Judgment.objects.filter(item__task__config__protocol="adequacy_fluency").first()
    assert sorted(v for out in af.answer.values() for v in out.values()) == [1, 2, 3, 3, 4, 5]
    page.screenshot(path=shots / "my-tasks-done.png", full_page=True)
    assert not dialogs, f"uploaded markup ran as script: {dialogs}"


def test_arabic_reads_right_to_left_and_markup_stays_text(
    page, live_server, output_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("organizer-b", organizer=True)
    campaign = campaign_with_arabic(owner)
    annotator = make_user("reader")
    campaign.annotators.add(annotator)
    config = ProtocolConfig.objects.get(campaign=campaign, protocol="direct_assessment")
    # The task holding the segment with markup, pushed to the annotator, opened at that item.
    item = Item.objects.filter(task__config=config, segment__source=SCRIPT, kind="real").first()
    assignment = task_assign(task=item.task, annotator=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(items_done=item.position)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "reader")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/my/tasks/")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    source = page.locator(".context .source .seg")
    assert source.inner_text() == SCRIPT
    assert source.evaluate("el => getComputedStyle(el).direction") == "rtl"
    assert source.evaluate("el => el.matches(':dir(rtl)')")
    # The only inline script is the json_script data block; the markup is text.
    assert page.locator("script:not([src])").count() == 1
    assert page.locator("script:not([src])").get_attribute("type") == "application/json"
    context = page.locator(".context .ctx").first
    assert context.evaluate("el => getComputedStyle(el).direction") == "rtl"
    page.screenshot(path=output_dir / "screenshots" / "annotate-rtl.png", full_page=True)
    assert not dialogs


def test_a_submit_from_a_stale_window_is_refused_on_screen(
    browser,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    owner = make_user("organizer-c", organizer=True)
    campaign = campaign_with_arabic(owner)
    annotator = make_user("two-windows")
    campaign.annotators.add(annotator)
    config = ProtocolConfig.objects.get(campaign=campaign, protocol="direct_assessment")
    from annotation.tasking.services import task_assign_next

    assignment = task_assign_next(config=config, annotator=annotator)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    first, second = context.new_page(), context.new_page()
    first.goto(f"{live_server.url}/login/")
    first.fill("#id_username", "two-windows")
    first.fill("#id_password", PASSWORD)
    first.click("main button[type=submit]")
    first.wait_for_url("**/my/tasks/")
    url = f"{live_server.url}/annotate/{assignment.pk}/"
    for page in (first, second):
        page.goto(url)
        page.wait_for_selector("fieldset.criterion.focused")
    # The second window answers the item first; the first window's answer is now stale.
    second.keyboard.type("80")
    submit_in_place(second, 1)
    first.keyboard.type("20")
    first.keyboard.press("Enter")
    error = first.locator("#annotate-error")
    error.wait_for(state="visible")
    assert "in another window" in error.inner_text()
    assert "not saved" in error.inner_text()
    first.screenshot(path=output_dir / "screenshots" / "annotate-stale.png", full_page=True)
    judgment = Judgment.objects.get(annotator=annotator)
    assert {v for out in judgment.answer.values() for v in out.values()} == {80}
    context.close()


def logged_in_with_task(page, live_server, name: str, protocol: str) -> Assignment:  # type: ignore[no-untyped-def]
    """A new annotator of a new campaign, holding its first task of ``protocol``, logged in."""
    owner = make_user(f"organizer-{name}", organizer=True)
    campaign = campaign_with_arabic(owner)
    annotator = make_user(name)
    campaign.annotators.add(annotator)
    config = ProtocolConfig.objects.get(campaign=campaign, protocol=protocol)
    assignment = task_assign(task=config.tasks.order_by("position").first(), annotator=annotator)
    log_in(page, live_server, name)
    return assignment


def checked_scores(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("fieldset.criterion input[type=radio]:checked").count())


def test_enter_and_digits_leave_the_pages_own_controls_alone(page, live_server) -> None:  # type: ignore[no-untyped-def]
    assignment = logged_in_with_task(page, live_server, "keys", "adequacy_fluency")
    annotator = assignment.annotator
    Assignment.objects.filter(pk=assignment.pk).update(items_done=1)
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")

    # A digit scores the focused question, then the focus moves on to the next one.
    page.keyboard.press("3")
    assert checked_scores(page) == 1
    # Tab away from the questions to the "Previous item" link: the highlight goes with the
    # focus, and a digit typed there scores nothing.
    tab_to(page, "a.button:has-text('Previous item')")
    assert page.locator("fieldset.criterion.focused").count() == 0
    page.keyboard.press("5")
    assert checked_scores(page) == 1
    # Enter on the instructions' summary opens or closes them; it does not submit.
    tab_to(page, ".instructions summary")
    was_open = page.locator("details.instructions").evaluate("el => el.open")
    page.keyboard.press("Enter")
    assert page.locator("details.instructions").evaluate("el => el.open") != was_open
    assert page.locator("#annotate-error").is_hidden()
    # Enter on the link follows it instead of submitting the half-answered item.
    tab_to(page, "a.button:has-text('Previous item')")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith(f"/annotate/{assignment.pk}/1/")
    assert not Judgment.objects.filter(annotator=annotator, item__position=1).exists()


def test_a_click_on_the_minimum_of_an_unset_slider_sets_it(page, live_server) -> None:  # type: ignore[no-untyped-def]
    assignment = logged_in_with_task(page, live_server, "slider", "direct_assessment")
    annotator = assignment.annotator
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    slider = page.locator("input[type=range]")
    # The focusable question is announced as a slider of 0-100, without a value while unset.
    question = page.locator("fieldset.criterion")
    assert question.get_attribute("role") == "slider"
    assert (question.get_attribute("aria-valuemin"), question.get_attribute("aria-valuemax")) == (
        "0",
        "100",
    )
    assert question.get_attribute("aria-valuenow") is None
    assert "unset" in (slider.get_attribute("class") or "")
    box = slider.bounding_box()
    page.mouse.click(box["x"] + 1, box["y"] + box["height"] / 2)
    assert "unset" not in (slider.get_attribute("class") or "")
    assert page.inner_text(".slider-value") == "0"
    assert question.get_attribute("aria-valuenow") == "0"
    submit_in_place(page, 1)
    judgment = Judgment.objects.get(annotator=annotator)
    assert {v for out in judgment.answer.values() for v in out.values()} == {0}
    # The next item's slider is unset again.
    assert "unset" in (slider.get_attribute("class") or "")
    assert page.inner_text(".slider-value") == "—"
    assert question.get_attribute("aria-valuenow") is None


def test_fluency_first_hides_the_source_until_every_fluency_is_given(page, live_server) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("organizer-f", organizer=True)
    campaign = campaign_with_arabic(owner)
    annotator = make_user("fluent")
    campaign.annotators.add(annotator)
    config = ProtocolConfig.objects.create(
        campaign=campaign,
        name="Fluency first",
        protocol="adequacy_fluency",
        mode="bilingual",
        fluency_first=True,
        outputs_per_screen=3,
        items_per_task=10,
        context_segments=1,
    )
    tasks_build(config=config)
    assignment = task_assign(task=config.tasks.order_by("position").first(), annotator=annotator)
    log_in(page, live_server, "fluent")
    page.goto(f"{live_server.url}/annotate/{assignment.pk}/")
    page.wait_for_selector("fieldset.criterion.focused")
    # First phase: no source, no adequacy question; the focus starts on a fluency question.
    assert page.locator(".context").is_hidden()
    assert page.locator("fieldset.crit-adequacy:visible").count() == 0
    assert page.locator("fieldset.crit-fluency:visible").count() == 3
    assert page.locator("fieldset.focused").get_attribute("data-criterion") == "fluency"
    assert page.locator(".fluency-note").is_visible()
    for key in ["5", "4", "3"]:
        page.keyboard.press(key)
    page.keyboard.press("Enter")  # reveals the source and the adequacy questions
    assert page.locator(".context .source").is_visible()
    assert page.locator("fieldset.crit-adequacy:visible").count() == 3
    assert page.locator("fieldset.focused").get_attribute("data-criterion") == "adequacy"
    assert not Judgment.objects.exists()
    for key in ["2", "2", "1"]:
        page.keyboard.press(key)
    submit_in_place(page, 1)
    # The next item starts again with fluency alone.
    assert page.locator(".context").is_hidden()
    assert page.locator("fieldset.crit-adequacy:visible").count() == 0
    assert page.locator("fieldset.focused").get_attribute("data-criterion") == "fluency"
    judgment = Judgment.objects.get(annotator=annotator)
    positions = {o.pk: o.position for o in judgment.item.outputs.all()}
    by_position = sorted(judgment.answer.items(), key=lambda kv: positions[int(kv[0])])
    assert [v["fluency"] for _, v in by_position] == [5, 4, 3]
    assert [v["adequacy"] for _, v in by_position] == [2, 2, 1]


def test_after_revising_an_earlier_item_the_current_one_comes_in_place(page, live_server) -> None:  # type: ignore[no-untyped-def]
    assignment = logged_in_with_task(page, live_server, "reviser", "direct_assessment")
    annotator = assignment.annotator
    current_url = f"/annotate/{assignment.pk}/"
    page.goto(live_server.url + current_url)
    page.wait_for_selector("fieldset.criterion.focused")
    for done, score in [(1, "30"), (2, "40")]:
        page.keyboard.type(score)
        submit_in_place(page, done)
    assert page.url == live_server.url + current_url

    # Back to item 2: its answer is filled in; a changed answer replaces it, and the item to
    # answer next (3) replaces the page, at the task's own address, no longer "revising".
    page.click("#previous")
    page.wait_for_url(f"**/annotate/{assignment.pk}/2/")
    page.wait_for_selector("fieldset.criterion.focused")
    assert page.locator(".revising-note").is_visible()
    assert page.inner_text(".slider-value") == "40"
    page.keyboard.type("45")
    page.evaluate("window.__samePage = true")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('.revising-note') === null")
    assert page.evaluate("window.__samePage") is True
    assert page.url == live_server.url + current_url
    assert shown_item(page) == current_item(assignment.pk)
    assert page.title().startswith("Item 3 of 10")
    assert page.inner_text("#progress-text") == "2 of 10 done"
    assert page.inner_text(".slider-value") == "—"
    assert page.locator("#previous").get_attribute("href") == f"/annotate/{assignment.pk}/2/"
    revised = Judgment.objects.get(annotator=annotator, item__position=1)
    assert {v for out in revised.answer.values() for v in out.values()} == {45}
    assert revised.revision == 2
    (earlier,) = revised.revisions.all()  # the answer it replaced, in the history
    assert {v for out in earlier.values.values() for v in out.values()} == {40}
