"""In a real Chromium: markup in every uploaded or entered field stays inert text.

An organizer creates a campaign whose name and description are script payloads and uploads, in
the browser, a JSONL file whose every field carries one (source, references, translations,
system and run names, document and segment ids). Protocols with payload names and instructions
get tasks, simulated raters judge through the real services, the analysis runs; an invite and
an assign-by-name form carry payloads too. Then every page that shows those values is opened
(as the organizer, as an annotator on every protocol's annotation page, and as staff in the
admin's change lists; a group of pages per test): no payload may run (``window.__xss`` stays
undefined and no dialog opens), no element or ``javascript:`` link may come out of them, and
the payloads read as literal text where the values are shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin

from annotation.demo.campaign import demo_simulate_judgments
from annotation.models import Campaign, ProtocolConfig
from annotation.tasking.build import tasks_build
from annotation.tasking.invites import invite_create, invite_token
from annotation.tasking.services import task_assign_next
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>window.__xss=1</script>"
IMG = '<img src=x onerror="window.__xss=1">'
SVG = '"><svg onload=window.__xss=1>'
# Closes an inline <script> (json_script blocks) and opens one of its own.
BREAKOUT = "</script><script>window.__xss=1</script>"
QUOTE = "' onmouseover='window.__xss=1' x='"
JS_URL = "javascript:window.__xss=1//"
PAYLOADS = (SCRIPT, IMG, SVG, BREAKOUT, QUOTE, JS_URL)

CAMPAIGN_NAME = f"XSS {IMG}"
DESCRIPTION = "\n".join(PAYLOADS)
SYSTEMS = {f"sys{IMG}{BREAKOUT}": f"run{BREAKOUT}", SVG: f"opt{SCRIPT}", JS_URL: f"r{QUOTE}"}
DOCS = (f"doc{SCRIPT}", f"doc{SVG}")
SEGMENTS = 12
UPLOAD_NAME = "xss<img src=x onerror=window.__xss=1>.jsonl"  # file names are shown too
# The analysis page's settings, with few resamples: the test is about escaping, not statistics.
FEW_RESAMPLES = "resamples=50&trueskill_runs=10&names=real"

# Anything a payload could have created, were it parsed as markup.
INJECTED = "[onerror], [onload], [onmouseover], img[src=x], a[href^='javascript:' i]"


def payload_rows() -> list[dict[str, Any]]:
    rows = []
    for n in range(SEGMENTS):
        payload = PAYLOADS[n % len(PAYLOADS)]
        source = f"Satz {n} {payload}"
        references = [f"Sentence {n} {payload}", f"Phrase {n} {payload}"]
        for k, (system, run) in enumerate(SYSTEMS.items()):
            rows.append(
                {
                    "doc_id": DOCS[n * len(DOCS) // SEGMENTS],
                    "seg_id": f"{n}{SCRIPT}" if n % 2 else str(n),
                    "source": source,
                    "references": references,
                    "system": system,
                    "run": run,
                    "translation": f"Output {k} of sentence {n} {payload}",
                }
            )
    return rows


class Watch:
    """Opens pages and checks that nothing ran: no ``window.__xss``, no dialog, no element
    made from a payload; a screenshot of each page (the admin's change lists, Django's own
    pages, are checked without one)."""

    def __init__(self, page: Any, base: str, shots: Path) -> None:
        self.page = page
        self.base = base
        self.shots = shots
        self.dialogs: list[str] = []
        self.pages: list[str] = []
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))

    def check(self, name: str, *, shot: bool = True) -> str:
        page = self.page
        page.wait_for_load_state("load")
        self.pages.append(name)
        assert page.evaluate("typeof window.__xss") == "undefined", f"a payload ran on {name}"
        assert self.dialogs == [], f"a dialog opened on {name}: {self.dialogs}"
        injected = page.locator(INJECTED).evaluate_all("els => els.map(e => e.outerHTML)")
        assert injected == [], f"markup from a payload on {name}: {injected}"
        if shot:
            page.screenshot(path=self.shots / f"xss-{name}.png", full_page=True)
        return str(page.inner_text("body"))

    def open(self, name: str, path: str, *, shot: bool = True) -> str:
        # The analysis pages compute on request: more time than a plain page on a busy machine.
        response = self.page.goto(self.base + path, timeout=90_000)
        assert response is not None
        assert response.status == 200, f"{path} answered {response.status}"
        return self.check(name, shot=shot)


def login(page: Any, base: str, username: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def _create_and_upload(page: Any, base: str, watch: Watch, organizer: Any) -> Campaign:
    # The organizer creates the campaign and uploads the data in the browser.
    login(page, base, "olivia")
    page.goto(f"{base}/campaigns/new/")
    page.fill("#id_name", CAMPAIGN_NAME)
    page.fill("#id_source_language", "de")
    page.fill("#id_target_language", "en")
    page.fill("#id_description", DESCRIPTION)
    page.select_option("#id_status", "active")
    page.click("main button[type=submit]")
    page.wait_for_url("**/upload/")
    watch.check("upload-form")
    data = "\n".join(json.dumps(row) for row in payload_rows()).encode()
    page.set_input_files(
        "#id_data", {"name": UPLOAD_NAME, "mimeType": "application/json", "buffer": data}
    )
    page.click("main button[type=submit]")
    page.wait_for_selector("#counts")
    text = watch.check("upload-result")
    assert page.inner_text("dd[data-count=segments]").strip() == str(SEGMENTS)
    assert CAMPAIGN_NAME in text
    campaign = Campaign.objects.get(owner=organizer)
    assert campaign.name == CAMPAIGN_NAME
    return campaign


def _judge_and_analyse(
    campaign: Campaign, organizer: Any, annotator: Any, *, analyse: bool
) -> tuple[list[ProtocolConfig], list[Any], Any]:
    """The protocol configs, the annotator's assignment in each, and the invite; with
    ``analyse``, the background analysis run too (for the pages that show its results)."""
    # Protocols with payloads in their names and instructions, judged by simulated raters, and
    # an analysis of it all; an invite with a payload label.
    configs = []
    for protocol, mode, k in [
        ("adequacy_fluency", "bilingual", 3),
        ("ranking", "bilingual", 3),
        ("direct_assessment", "reference", 1),
    ]:
        config = ProtocolConfig.objects.create(
            campaign=campaign,
            name=f"{protocol} {SVG}",
            protocol=protocol,
            mode=mode,
            outputs_per_screen=k,
            items_per_task=6,
            annotations_per_task=2,
            context_segments=1,
            instructions=f"Read carefully.\n{SCRIPT}\n{IMG}\n{JS_URL}",
        )
        tasks_build(config=config)
        configs.append(config)
    # The annotator takes a task of every protocol before the raters fill the others.
    campaign.annotators.add(annotator)
    assignments = [task_assign_next(config=c, annotator=annotator) for c in configs]
    assert demo_simulate_judgments(campaign=campaign) > 0
    if analyse:
        analysis_run_sync(campaign=campaign, user=organizer, resamples=50, ar_trials=50)
    invite = invite_create(campaign=campaign, label=f"crowd {SCRIPT}", created_by=organizer)
    return configs, assignments, invite


def _check_the_campaign_pages(
    page: Any, watch: Watch, campaign: Campaign, configs: list[ProtocolConfig]
) -> None:
    # Every organizer page that shows those values.
    text = watch.open("campaign-list", "/campaigns/")
    assert CAMPAIGN_NAME in text
    text = watch.open("campaign-detail", f"/campaigns/{campaign.pk}/")
    for value in (CAMPAIGN_NAME, SCRIPT, IMG, SVG, JS_URL, *SYSTEMS, DOCS[0], UPLOAD_NAME):
        assert value in text, value
    # An upload error names the file: a broken file with a payload for a name.
    watch.open("upload-form-again", f"/campaigns/{campaign.pk}/upload/")
    broken = f"broken{SVG}.jsonl"
    page.set_input_files(
        "#id_data", {"name": broken, "mimeType": "application/json", "buffer": b"{not json\n"}
    )
    page.click("main button[type=submit]")
    text = watch.check("upload-error")
    # (Chromium sends the name's double quote as %22; the rest arrives as typed.)
    assert "><svg onload=window.__xss=1>.jsonl, line 1" in text
    watch.open("campaign-edit", f"/campaigns/{campaign.pk}/edit/")
    assert page.input_value("#id_name") == CAMPAIGN_NAME
    assert page.input_value("#id_description") == DESCRIPTION
    text = watch.open("annotation-setup", f"/campaigns/{campaign.pk}/annotation/")
    assert configs[0].name in text
    assert f"crowd {SCRIPT}" in text
    for config in configs:
        text = watch.open(
            f"config-{config.protocol}", f"/campaigns/{campaign.pk}/annotation/{config.pk}/"
        )
        assert config.name in text
    # A form error that echoes what was typed: assign a task to a user named by a payload.
    page.fill("#id_task", "1")
    page.fill("#id_username", SCRIPT)
    page.click("form[action$='/assign/'] button[type=submit]")
    text = watch.check("assign-error")
    assert f"No such user: {SCRIPT}" in text


def _check_the_analysis_pages(watch: Watch, campaign: Campaign) -> None:
    text = watch.open("analysis", f"/campaigns/{campaign.pk}/analysis/?{FEW_RESAMPLES}")
    assert any(system in text for system in SYSTEMS)
    watch.open("analysis-import", f"/campaigns/{campaign.pk}/analysis/import/")
    watch.open("analysis-settings", f"/campaigns/{campaign.pk}/analysis-settings/")


def _check_the_dashboard(page: Any, watch: Watch, campaign: Campaign, shots: Path) -> None:
    watch.open("dashboard", f"/campaigns/{campaign.pk}/dashboard/")
    page.wait_for_function(
        "() => document.querySelectorAll('#heatmaps .js-plotly-plot svg.main-svg').length > 0"
    )
    page.wait_for_function(
        "() => document.querySelectorAll('#scatter-grid .js-plotly-plot svg.main-svg').length > 0"
    )
    watch.check("dashboard-drawn")
    for system in SYSTEMS:
        assert system in page.locator("#metrics").inner_text(), system
    heatmap_labels = page.locator("#heatmaps .js-plotly-plot").first.locator(".ytick text")
    assert set(SYSTEMS) <= set(heatmap_labels.all_text_contents())
    # The plots' data block holds "</script>" from a system name, and stayed one block.
    plots = page.evaluate("JSON.parse(document.getElementById('dashboard-plots').textContent)")
    assert BREAKOUT in json.dumps(plots)
    for panel in ("metrics", "heatmaps", "correlations"):
        page.locator(f"#{panel}").screenshot(path=shots / f"xss-dashboard-{panel}.png")


def _check_the_api_pages(watch: Watch, campaign: Campaign) -> None:
    """DRF's browsable API shows the same values as HTML."""
    for name, path in [
        ("api-campaigns", "/api/campaigns/"),
        ("api-campaign", f"/api/campaigns/{campaign.pk}/"),
        ("api-contents", f"/api/campaigns/{campaign.pk}/contents/"),
        ("api-segments", f"/api/campaigns/{campaign.pk}/segments/"),
        ("api-results", f"/api/campaigns/{campaign.pk}/results/metrics/"),
    ]:
        text = watch.open(name, path)
        assert any(p in text for p in (CAMPAIGN_NAME, *SYSTEMS, DOCS[0], SCRIPT)), name


def _check_the_annotator_pages(
    page: Any,
    base: str,
    watch: Watch,
    invite: Any,
    configs: list[ProtocolConfig],
    assignments: list[Any],
) -> None:
    # The annotator: the invite, My tasks, and a screen of every protocol.
    login(page, base, "anna")
    text = watch.open("invite", f"/invite/{invite_token(invite=invite)}/")
    assert CAMPAIGN_NAME in text
    assert IMG in text
    for config, assignment in zip(configs, assignments, strict=True):
        assert assignment is not None
        text = watch.open(f"annotate-{config.protocol}", f"/annotate/{assignment.pk}/")
        assert "Satz" in text or "Sentence" in text
        assert "Output" in text
        assert SCRIPT in text  # the instructions, as text
        assert any(p in text for p in PAYLOADS if p != SCRIPT)  # segments, as text
    # The next item comes in the answer to a submit and the script writes it into the page
    # (direct assessment, the last screen opened): as text too.
    shown = page.locator("article.output p.text")
    first = shown.inner_text()
    page.keyboard.type("50")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('progress')?.value === 1")
    watch.check("annotate-next-direct_assessment")
    assert shown.inner_text() != first
    assert any(p in shown.inner_text() for p in PAYLOADS), shown.inner_text()
    assert any(p in page.locator(".current.reference").inner_text() for p in PAYLOADS)
    text = watch.open("my-tasks", "/my/tasks/")
    assert CAMPAIGN_NAME in text
    text = watch.open("api-my-tasks", "/api/my/tasks/")
    assert CAMPAIGN_NAME.replace('"', '\\"') in text
    text = watch.open("api-current", f"/api/assignments/{assignments[2].pk}/current/")
    assert "Output" in text


def _check_the_admin(page: Any, base: str, watch: Watch, campaign: Campaign, part: int) -> None:
    # Staff: every change list of the admin, a third of them in each of three tests.
    login(page, base, "root")
    models = sorted(admin.site._registry, key=lambda model: model._meta.label)
    assert len(models) > 40
    for model in models[part - 1 :: 3]:
        meta = model._meta
        watch.open(
            f"admin-{meta.app_label}-{meta.model_name}",
            f"/admin/{meta.app_label}/{meta.model_name}/",
            shot=False,
        )
    if part == 1:
        watch.open("admin-campaign-change", f"/admin/annotation/campaign/{campaign.pk}/change/")
        assert page.input_value("#id_name") == CAMPAIGN_NAME


# The pages are opened in eight tests, each on a campaign built the same way (the background
# analysis run where the pages show its results): shorter tests that the test processes share.
PAGES = ("campaign", "analysis", "dashboard", "api", "annotator", "admin-1", "admin-2", "admin-3")
NOT_ANALYSED = ("campaign", "annotator")


@pytest.mark.parametrize("pages", PAGES)
def test_payloads_in_every_uploaded_and_entered_field_stay_inert_text(
    page,
    live_server,
    output_dir: Path,
    pages: str,  # type: ignore[no-untyped-def]
) -> None:
    base = live_server.url
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    watch = Watch(page, base, shots)
    organizer = make_user("olivia", organizer=True)
    annotator = make_user("anna")
    make_user("root", is_staff=True, is_superuser=True)
    campaign = _create_and_upload(page, base, watch, organizer)
    configs, assignments, invite = _judge_and_analyse(
        campaign, organizer, annotator, analyse=pages not in NOT_ANALYSED
    )
    checks = {
        "campaign": lambda: _check_the_campaign_pages(page, watch, campaign, configs),
        "analysis": lambda: _check_the_analysis_pages(watch, campaign),
        "dashboard": lambda: _check_the_dashboard(page, watch, campaign, shots),
        "api": lambda: _check_the_api_pages(watch, campaign),
        "annotator": lambda: _check_the_annotator_pages(
            page, base, watch, invite, configs, assignments
        ),
        "admin-1": lambda: _check_the_admin(page, base, watch, campaign, part=1),
        "admin-2": lambda: _check_the_admin(page, base, watch, campaign, part=2),
        "admin-3": lambda: _check_the_admin(page, base, watch, campaign, part=3),
    }
    assert set(checks) == set(PAGES)
    checks[pages]()
