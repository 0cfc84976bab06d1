"""In a real Chromium at 390 px (a phone) and 1280 px: the dashboard of a campaign of twelve
systems keeps its significance heatmap readable — every cell shows its p-value in a cell wide
enough for it, the card scrolls sideways instead of the page — and prints its counts with
thousands separators (12,345), in German with German ones (12.345)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.annotator_pages import log_in
from tests.dashboard_factories import analysis_run_sync
from tests.factories import make_config, make_user, make_wide_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = 12

# Per heatmap cell: its width and its p-value text's width, from the drawn SVG.
CELLS = """(el, systems) => {
    const plot = el.querySelector(".nsewdrag").getBoundingClientRect();
    const texts = Array.from(el.querySelectorAll(".heatmaplayer text, g.text text"))
        .filter((t) => t.textContent.trim() !== "");
    return {
        cell: plot.width / systems,
        texts: texts.map((t) => t.getBoundingClientRect().width),
        size: Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize))),
        scrolls: el.parentElement.scrollWidth > el.parentElement.clientWidth,
    };
}"""

# Thousands grouped with a comma (English) or a point (German), e.g. 2,160 or 12.345.
GROUPED = {"en": re.compile(r"^\d{1,3}(,\d{3})+$"), "de": re.compile(r"^\d{1,3}(\.\d{3})+$")}


def test_the_heatmap_and_the_counts_read_well_on_a_phone(  # type: ignore[no-untyped-def]
    page, live_server, output_dir: Path
) -> None:
    owner = make_user("phone-organizer", organizer=True)
    campaign = make_wide_campaign(owner=owner, segments=40, systems=SYSTEMS)
    # 40 segments × 12 systems, three annotators each: counts past a thousand.
    make_config(campaign, "direct_assessment", outputs_per_screen=1, annotations_per_task=3)
    analysis_run_sync(campaign=campaign, metrics=("bleu",), resamples=50, ar_trials=50)
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)
    log_in(page, live_server, "phone-organizer", lands_on="**/campaigns/")
    url = f"{live_server.url}/campaigns/{campaign.pk}/dashboard/"
    # The page's own timers on a clock that runs as usual, and that the test can move on to a
    # quiet dashboard's next poll (15 s away) instead of waiting for it.
    page.clock.install()

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url)
        page.wait_for_selector("#heatmaps .js-plotly-plot svg.main-svg")
        heatmap = page.locator("#heatmaps .js-plotly-plot").first
        page.locator("#heatmaps").screenshot(path=shots / f"dashboard-heatmap-12-{width}.png")
        page.locator("#progress").screenshot(path=shots / f"dashboard-counts-{width}.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        cells = heatmap.evaluate(CELLS, SYSTEMS)
        # Every off-diagonal cell shows its p-value, inside the cell, at a readable size.
        assert len(cells["texts"]) == SYSTEMS * (SYSTEMS - 1), (width, cells)
        assert max(cells["texts"]) < cells["cell"], (width, cells)
        assert cells["size"] >= 9
        # On the phone the card scrolls sideways; on a laptop it needs not.
        assert cells["scrolls"] == (width == 390)

        needed = page.inner_text("[data-live=needed_text]")
        assert GROUPED["en"].match(needed), needed
        assert GROUPED["en"].match(page.inner_text("[data-live=remaining_text]"))
        # The live status rewrites the counts in the same form.
        page.evaluate("document.querySelector('[data-live=needed_text]').textContent = ''")
        page.clock.fast_forward(16_000)
        page.wait_for_function(
            "() => document.querySelector('[data-live=needed_text]').textContent !== ''",
            timeout=20_000,
        )
        assert page.inner_text("[data-live=needed_text]") == needed

    page.context.add_cookies([{"name": "django_language", "value": "de", "url": live_server.url}])
    page.goto(url)
    assert GROUPED["de"].match(page.inner_text("[data-live=needed_text]"))
    assert GROUPED["de"].match(
        page.inner_text("#progress-configs [data-live-config=remaining_text]")
    )
    page.locator("#progress").screenshot(path=shots / "dashboard-counts-390-de.png")
