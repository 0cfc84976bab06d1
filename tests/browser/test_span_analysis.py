"""In a real Chromium, on the demo campaign: the analysis page shows each error-span protocol's
errors per system (a table and a stacked bar chart), agreement on spans and the bad references
each rater marked, readable on a laptop and on a phone."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.demo.campaign import DEMO_ORGANIZER, DEMO_PASSWORD
from annotation.models import Campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_demo_analysis_shows_the_error_spans(
    browser, live_server, output_dir: Path, width: int
) -> None:  # type: ignore[no-untyped-def]
    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get()
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", DEMO_ORGANIZER)
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/analysis/")
    sections = page.locator("section.spans")
    assert sections.count() == 3  # ESA, MQM, and ESA on document screens
    mqm = sections.filter(has=page.locator("h2", has_text="MQM"))
    assert mqm.count() == 1
    # Four systems, best first by errors per output; the chart draws their bars.
    rows = mqm.locator("table.span-systems tbody tr")
    assert rows.count() == 4
    per_output = [float(r.locator("td").nth(3).inner_text()) for r in rows.all()]
    names = [r.locator("td").first.inner_text() for r in rows.all()]
    assert (
        dict(zip(names, per_output, strict=True))["nmt-large"]
        < dict(zip(names, per_output, strict=True))["rbmt-toy"]
    )
    assert mqm.locator(".span-chart rect").count() >= 4
    assert mqm.locator("table.span-categories tbody tr").count() >= 3
    # Agreement and the raters' bad references: the careful ones marked every degraded part.
    inter = mqm.locator("table.span-agreement tr.inter td")
    assert int(inter.nth(1).inner_text()) > 0
    found = {
        r.locator("td").first.inner_text(): r.locator("td").nth(3).inner_text()
        for r in mqm.locator("table.span-found tbody tr").all()
    }
    assert found["rater-a"] == "1.00"
    mqm.scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    chart = mqm.locator(".span-chart svg").bounding_box()
    assert chart is not None
    assert chart["width"] <= width
    mqm.screenshot(path=output_dir / "screenshots" / f"analysis-spans-{width}.png")
    context.close()
