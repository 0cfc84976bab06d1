"""In a real Chromium: static/metrics/plotly.css holds exactly the style rules the installed
plotly.js would insert as an inline <style> element (which the Content-Security-Policy refuses),
the dashboard suppresses every <style> element plotly would insert, and the dashboard's policy
allows by hash every style attribute plotly sets on the dashboard's kinds of plots; so upgrading
plotly cannot leave the dashboard's plots with stale or missing rules."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from tests.conftest import ROOT

pytestmark = [pytest.mark.browser]

# Records every rule a script inserts into a style sheet, with the index it asks for.
RECORD_INSERTED_RULES = """
window.insertedRules = [];
const insertRule = CSSStyleSheet.prototype.insertRule;
CSSStyleSheet.prototype.insertRule = function (rule, index) {
  window.insertedRules.push([rule, index]);
  return insertRule.call(this, rule, index);
};
"""


def _rules_of(css: str) -> list[str]:
    """The rules of our copy: one a line, after the leading comment."""
    return [line for line in css.split("*/", 1)[1].splitlines() if line.strip()]


def test_the_dashboards_copy_of_plotlys_rules_matches_the_installed_plotly(
    browser,  # type: ignore[no-untyped-def]
    output_dir: Path,
) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><html><head></head><body></body></html>")
    page.add_script_tag(content=RECORD_INSERTED_RULES)
    page.add_script_tag(path=finders.find("plotly/plotly.min.js"))
    inserted = page.evaluate("window.insertedRules")
    context.close()
    # Each rule goes in at the top, so the sheet holds them in the reverse order.
    assert {index for _, index in inserted} == {0}
    installed = [rule for rule, _ in reversed(inserted)]
    assert len(installed) > 20
    ours = _rules_of((ROOT / "static" / "metrics" / "plotly.css").read_text())
    if ours != installed:
        (output_dir / "plotly.css").write_text("\n".join(installed) + "\n")
    assert ours == installed, (
        "static/metrics/plotly.css differs from the installed plotly's rules; they are in "
        "test-output/plotly.css (keep the file's leading comment)"
    )


def test_the_dashboard_holds_an_element_for_every_style_element_plotly_would_insert(
    browser,  # type: ignore[no-untyped-def]
) -> None:
    # Plotly inserts each of its <style> elements only when no element has that element's id
    # (and, for its own rules, the class no-inline-styles): the dashboard puts them in its head.
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><html><head></head><body></body></html>")
    page.add_script_tag(path=finders.find("plotly/plotly.min.js"))
    inserted = page.evaluate("Array.from(document.querySelectorAll('style'), (s) => s.id)")
    context.close()
    assert "plotly.js-style-global" in inserted
    dashboard = (ROOT / "templates" / "metrics" / "dashboard.html").read_text()
    missing = [style_id for style_id in inserted if f'id="{style_id}"' not in dashboard]
    assert missing == [], f"plotly inserts <style> elements the dashboard does not hold: {missing}"
    assert 'id="plotly.js-style-global" class="no-inline-styles"' in dashboard


# Records the value of every style attribute a script sets.
RECORD_STYLE_ATTRIBUTES = """
window.styleAttributes = [];
const setAttribute = Element.prototype.setAttribute;
Element.prototype.setAttribute = function (name, value) {
  if (name === "style") window.styleAttributes.push(String(value));
  return setAttribute.call(this, name, value);
};
"""

# The dashboard's kinds of plots (static/metrics/dashboard.js): a heatmap of shares per annotator
# on category axes with a colour bar, a significance heatmap with gaps and text, grouped bars, a
# scatter plot with its line.
DRAW_THE_DASHBOARDS_PLOTS = """() => {
  const plot = () => document.body.appendChild(document.createElement("div"));
  Plotly.newPlot(plot(), [{
    type: "heatmap", x: ["1", "2", "3"], y: ["a", "b"], z: [[1, 2, 3], [3, 2, 1]],
    colorbar: {title: {text: "%"}, thickness: 10},
  }], {yaxis: {autorange: "reversed"}});
  Plotly.newPlot(plot(), [{
    type: "heatmap", x: ["a", "b"], y: ["a", "b"], z: [[null, 1], [-1, null]], showscale: false,
    xgap: 1, ygap: 1, text: [["", "0.01"], ["0.01", ""]], texttemplate: "%{text}",
  }]);
  Plotly.newPlot(plot(), [
    {type: "bar", name: "a", x: ["1", "2"], y: [40, 60]},
    {type: "bar", name: "b", x: ["1", "2"], y: [30, 70]},
  ], {barmode: "group", legend: {orientation: "h"}});
  Plotly.newPlot(plot(), [
    {type: "scatter", mode: "markers+text", x: [1, 2, 3], y: [2, 1, 3], text: ["x", "y", "z"]},
    {type: "scatter", mode: "lines", x: [1, 3], y: [1.5, 2.5]},
  ]);
}"""


def _hash_source(value: str) -> str:
    digest = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
    return f"'sha256-{digest}'"


def test_the_dashboards_policy_allows_every_style_attribute_plotly_sets_there(
    browser,  # type: ignore[no-untyped-def]
) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><html><head></head><body></body></html>")
    page.add_script_tag(content=RECORD_STYLE_ATTRIBUTES)
    page.add_script_tag(path=finders.find("plotly/plotly.min.js"))
    page.evaluate(DRAW_THE_DASHBOARDS_PLOTS)
    values = set(page.evaluate("window.styleAttributes"))
    context.close()
    assert "" in values  # the colour bar's
    assert any("pixelated" in value for value in values)  # the heatmap drawn a pixel a cell
    allowed = settings.EVALSITE_CSP_DASHBOARD["style-src-attr"]
    assert allowed[0] == "'unsafe-hashes'"
    assert {_hash_source(value) for value in values} == set(allowed[1:]), sorted(values)
