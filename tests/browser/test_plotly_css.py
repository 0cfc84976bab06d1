"""In a real Chromium: static/metrics/plotly.css holds exactly the style rules the installed
plotly.js would insert as an inline <style> element (which the Content-Security-Policy refuses),
so that upgrading plotly cannot leave the dashboard's plots with stale or missing rules."""

from __future__ import annotations

from pathlib import Path

import pytest
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
