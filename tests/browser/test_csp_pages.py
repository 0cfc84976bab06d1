"""In a real Chromium under the site's Content-Security-Policy: the pages that come from
packages — Django's admin, DRF's browsable API, the Swagger UI docs — still work (their scripts
run, their styles apply) with the policy's header on each; the harness fails a test on any
violation (tests/support/browser_csp.py). The site's own pages are proved by the other browser
tests."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from evalsite.csp import csp_header
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open(page: Any, url: str, additions: dict[str, list[str]] | None = None) -> None:
    """Open ``url``; its answer carries the site's policy, with ``additions`` laid over it."""
    response = page.goto(url)
    assert response.status == 200, url
    policy = {**settings.EVALSITE_CSP, **(additions or {})}
    assert response.headers["content-security-policy"] == csp_header(policy)
    assert response.headers["x-frame-options"] == "DENY"


def test_the_admin_works_under_the_policy(page, live_server) -> None:  # type: ignore[no-untyped-def]
    root = make_user("root", is_staff=True, is_superuser=True)
    _open(page, f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/")
    assert page.locator("#site-name").is_visible()
    _open(page, f"{live_server.url}/admin/auth/user/{root.pk}/change/")
    # The permissions' two-list chooser is built by the admin's script (SelectFilter2.js), and
    # works: "Choose all" moves every permission to the chosen list.
    assert page.locator("#id_user_permissions_to option").count() == 0
    page.click("#id_user_permissions_add_all")
    assert page.locator("#id_user_permissions_to option").count() > 20
    # Its stylesheets apply: the header has the admin's colour.
    header = page.locator("#header").evaluate("el => getComputedStyle(el).backgroundColor")
    assert header == "rgb(65, 118, 144)"


def test_the_browsable_api_works_under_the_policy(page, live_server) -> None:  # type: ignore[no-untyped-def]
    owner = make_user("api-owner", organizer=True)
    campaign = make_campaign(owner=owner, name="Browsable", with_data=True)
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "api-owner")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")
    # Style attributes are allowed on the browsable API's pages, and on them alone.
    _open(page, f"{live_server.url}/api/campaigns/", settings.EVALSITE_CSP_BROWSABLE_API)
    assert "Browsable" in page.inner_text(".response-info")
    # DRF's scripts ran: prettify coloured the JSON; its stylesheets apply (the navbar's colour
    # is DRF's bootstrap-tweaks.css).
    page.locator(".response-info pre span.str").first.wait_for()
    navbar = page.locator(".navbar").evaluate("el => getComputedStyle(el).backgroundColor")
    assert navbar == "rgb(44, 44, 44)"
    # A campaign's page: DRF floats its "Extra Actions" menu right with a style attribute, and
    # Bootstrap's script opens it.
    _open(
        page, f"{live_server.url}/api/campaigns/{campaign.pk}/", settings.EVALSITE_CSP_BROWSABLE_API
    )
    menu = page.locator("#extra-actions-menu")
    assert menu.locator("xpath=..").evaluate("el => getComputedStyle(el).cssFloat") == "right"
    menu.click()
    assert page.locator("[aria-labelledby=extra-actions-menu] a").first.is_visible()


def test_the_api_docs_render_the_schema_under_the_policy(page, live_server) -> None:  # type: ignore[no-untyped-def]
    _open(page, f"{live_server.url}/api/docs/")
    # Swagger UI (its start-up script from the same view) fetched the schema and drew it.
    page.locator(".opblock").first.wait_for()
    assert page.locator(".opblock").count() > 10
    assert "EvalSite API" in page.inner_text(".info .title")
    assert page.evaluate("getComputedStyle(document.body).margin") == "0px"


def test_plotly_draws_and_downloads_a_heatmap_with_a_colour_bar_under_the_dashboards_policy(
    page, live_server
) -> None:  # type: ignore[no-untyped-def]
    # The per-annotator histograms past 12 annotators: a heatmap drawn one pixel a cell, its
    # image kept sharp by a style attribute plotly sets, and a colour bar; the dashboard's policy
    # allows exactly those style attributes (the harness fails the test on any it refuses).
    owner = make_user("plot-owner", organizer=True)
    campaign = make_campaign(owner=owner, name="Plots", with_data=True)
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "plot-owner")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url("**/campaigns/")
    _open(
        page,
        f"{live_server.url}/campaigns/{campaign.pk}/dashboard/",
        settings.EVALSITE_CSP_DASHBOARD,
    )
    page.wait_for_function("() => window.Plotly !== undefined")
    rendering = page.evaluate("""async () => {
        const el = document.body.appendChild(document.createElement("div"));
        await Plotly.newPlot(el, [{
            type: "heatmap", x: ["1", "2", "3"], y: ["a", "b"], z: [[1, 2, 3], [3, 2, 1]],
            colorbar: {title: {text: "%"}, thickness: 10},
        }]);
        el.id = "extra-plot";
        return getComputedStyle(el.querySelector(".hm image")).imageRendering;
    }""")
    assert rendering == "pixelated"
    # The plot's "download as PNG" button (drawn from a blob URL of the plot's SVG).
    page.hover("#extra-plot .nsewdrag")
    with page.expect_download() as download:
        page.click("#extra-plot .modebar-btn[data-title='Download plot as a PNG']")
    assert download.value.suggested_filename.endswith(".png")


def test_the_harness_catches_an_inline_script_and_style_under_the_policy(browser) -> None:  # type: ignore[no-untyped-def]
    # A page served with the site's policy that breaks it: every browser test would fail so.
    context = browser.new_context()
    page = context.new_page()
    body = "<p style='color: red'>x</p><script>document.title = 'ran'</script>"
    headers = {
        "content-type": "text/html",
        "content-security-policy": csp_header(settings.EVALSITE_CSP),
    }
    page.route("http://csp.test/", lambda route: route.fulfill(headers=headers, body=body))
    page.goto("http://csp.test/")
    page.wait_for_function("() => document.readyState === 'complete'")
    assert page.title() == ""  # the inline script did not run
    context.close()
    caught = "\n".join(browser.violations)
    assert '"directive":"style-src-attr"' in caught
    assert '"directive":"script-src-elem"' in caught
    browser.violations.clear()  # caught on purpose: this test must not fail for them
