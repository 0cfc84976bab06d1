"""In a real Chromium: an organizer opens the dashboard of a demo-like campaign (the demo's data,
protocols and simulated raters judging through the real services, tasks of 10 items to keep the
test short; the analysis computed by the real pipeline), finds data in every panel and rendered
plots, asks for a recomputation and watches it finish without reloading; the page also fits a
390 px phone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from annotation.models import Campaign, System
from metrics.models import AnalysisJob
from tests.dashboard_factories import (
    analysis_job_run_sync,
    analysis_run_sync,
    make_judged_demo_campaign,
)
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKUP_NAME = "<i>rbmt-toy</i>"


# Whether each axis title of a plot lies whole within the plot's drawing (else it is cut off).
TITLES_INSIDE = """(el) => {
    const box = el.querySelector("svg.main-svg").getBoundingClientRect();
    return Array.from(el.querySelectorAll(".g-xtitle text, .g-ytitle text"), (t) => {
        const r = t.getBoundingClientRect();
        return r.top >= box.top && r.bottom <= box.bottom
            && r.left >= box.left && r.right <= box.right;
    });
}"""

# A panel's plots that Plotly has drawn.
DRAWN = "#{} .js-plotly-plot:has(svg.main-svg)"


def _check_every_plot_drawn(page: Any, shots: Path) -> None:
    # Every plot drawn: 4 histograms, one heatmap and one scatter plot per metric.
    page.wait_for_function(
        "() => document.querySelectorAll('#heatmaps .js-plotly-plot svg.main-svg').length > 0"
    )
    assert page.locator(DRAWN.format("histograms")).count() == 4
    assert page.locator(DRAWN.format("heatmaps")).count() == 3
    assert page.locator(DRAWN.format("correlations")).count() == 3
    page.screenshot(path=shots / "dashboard.png", full_page=True)
    for panel in ("job", "progress", "qc", "histograms", "human", "metrics", "multeval"):
        page.locator(f"#{panel}").screenshot(path=shots / f"dashboard-{panel}.png")


def _check_every_panel(page: Any) -> None:
    # Job and progress.
    assert page.inner_text("#job-status") == "Done"
    assert page.is_hidden("#stale-flag")
    assert page.is_visible("#fresh-flag")
    configs = page.locator("#progress-configs tbody tr")
    assert configs.count() == 5  # the demo's five protocols
    assert "Direct assessment" in configs.nth(2).inner_text()
    assert "MQM" in configs.nth(4).inner_text()
    annotators = page.locator("#progress-annotators tbody tr")
    assert annotators.count() == 4
    assert page.inner_text("[data-live=seconds_display]").endswith((" min", " h"))

    # QC: the careless rater fails the bad-reference test on direct assessment.
    failed = page.locator("#qc tr", has=page.locator(".qc-failed")).all_inner_texts()
    assert any(row.startswith("rater-careless") for row in failed)

    # Human rankings: four systems per criterion, nmt-large first, interval bars drawn.
    first = page.locator("#human table.human-ranking").first
    assert first.locator("tbody tr").count() == 4
    assert "nmt-large" in first.locator("tbody tr").first.inner_text()
    assert first.locator(".ci-bar").count() == 4

    # Metrics, MultEval, correlations: tables with every system / metric.
    for key in ("bleu", "chrf", "ter"):
        assert page.locator(f"#metric-{key} tbody tr").count() == 4
    assert page.locator("#multeval tbody tr").count() == 4
    assert "(" in page.locator("#multeval tbody td.num").first.inner_text()  # mean (s_sel/s_opt/p)
    correlations = page.locator("#correlations table.correlation-table").first
    assert correlations.locator("tbody tr").count() == 3
    assert "−TER" in correlations.inner_text()

    # Uploaded markup stays text, in tables and in the plots' SVG.
    assert MARKUP_NAME in page.locator("#metrics").inner_text()
    assert page.locator("#metrics i").count() == 0
    heatmap_labels = page.locator("#heatmaps .js-plotly-plot").first.locator(".ytick text")
    assert MARKUP_NAME in heatmap_labels.all_text_contents()
    assert page.locator("#heatmaps svg i, #correlations svg i").count() == 0


def _choose_a_scatter_criterion(page: Any, shots: Path) -> None:
    # The scatter plots follow the chosen human criterion.
    select = page.locator("#scatter-criterion")
    options = select.locator("option").all_inner_texts()
    assert len(options) >= 3
    select.select_option(index=len(options) - 1)
    page.wait_for_function(
        "() => document.querySelectorAll('#scatter-grid .js-plotly-plot svg.main-svg').length > 0"
    )
    assert page.locator(DRAWN.format("scatter-grid")).count() == 3
    for panel in ("correlations", "heatmaps", "downloads"):
        page.locator(f"#{panel}").screenshot(path=shots / f"dashboard-{panel}.png")


def _watch_a_recomputation(page: Any, shots: Path, campaign: Campaign) -> None:
    # Recompute now: queued, the page polls, the job runs (here, as a worker would), and the
    # page shows the new results without a reload.
    page.click("#recompute")
    page.wait_for_selector(".messages")
    assert "Recomputation queued" in page.inner_text(".messages")
    assert page.inner_text("#job-status") == "Queued"
    job = AnalysisJob.objects.filter(campaign=campaign).order_by("-created").first()
    assert job.status == AnalysisJob.Status.QUEUED
    AnalysisJob.objects.filter(pk=job.pk).update(
        status=AnalysisJob.Status.RUNNING, stage=AnalysisJob.Stage.STATISTICS, progress_total=8
    )
    AnalysisJob.objects.filter(pk=job.pk).update(progress_done=2)
    page.wait_for_function("() => document.getElementById('job-percent').textContent === '25%'")
    assert page.inner_text("#job-status") == "Running"
    page.screenshot(path=shots / "dashboard-running.png")
    # Marks that a reload would lose: the panels must be new nodes in the same document.
    page.evaluate(
        "() => { window.sameDocument = true; document.getElementById('human').dataset.old = '1'; }"
    )
    analysis_job_run_sync(job)
    page.wait_for_function(
        f"() => document.getElementById('dashboard').dataset.resultsJob === '{job.pk}'"
    )
    page.wait_for_selector("#heatmaps .js-plotly-plot svg.main-svg")
    assert page.inner_text("#job-status") == "Done"
    assert page.evaluate("() => window.sameDocument === true")
    assert page.evaluate("() => document.getElementById('human').dataset.old === undefined")
    assert page.is_hidden("#reload-flag")
    page.screenshot(path=shots / "dashboard-refreshed.png", full_page=True)


def test_an_organizer_reads_every_panel_and_watches_a_recomputation(
    page,
    live_server,
    output_dir: Path,  # type: ignore[no-untyped-def]
) -> None:
    organizer = make_user("olivia", organizer=True)
    campaign = make_judged_demo_campaign(owner=organizer, items_per_task=10)
    # A system name with markup, as an upload may bring it: shown as text everywhere.
    System.objects.filter(campaign=campaign, name="rbmt-toy").update(name=MARKUP_NAME)
    analysis_run_sync(campaign=campaign)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "olivia")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    page.click(".actions >> text=Dashboard")
    page.wait_for_url("**/dashboard/")
    _check_every_plot_drawn(page, shots)
    _check_every_panel(page)
    _choose_a_scatter_criterion(page, shots)
    _watch_a_recomputation(page, shots, campaign)

    # A phone: nothing wider than the screen but the scrolling tables; the histograms' axis
    # titles whole inside their plots.
    page.set_viewport_size({"width": 390, "height": 800})
    page.reload()
    page.wait_for_selector("#heatmaps .js-plotly-plot svg.main-svg")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=shots / "dashboard-390.png", full_page=True)
    for panel in ("job", "progress", "histograms", "human", "heatmaps"):
        page.locator(f"#{panel}").screenshot(path=shots / f"dashboard-390-{panel}.png")
    for plot in page.locator("#histograms .js-plotly-plot").all():
        assert plot.evaluate(TITLES_INSIDE) == [True, True]
