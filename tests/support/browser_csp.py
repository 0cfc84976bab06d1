"""Browser tests run under the site's Content-Security-Policy and fail on any violation of it.

Every browser context the tests open gets a script, run in each document before the page's own,
that reports each ``securitypolicyviolation`` event to the console with a marker (directive,
what was blocked, where); Chromium's own console error for each violation ("... violates the
following Content Security Policy directive ...") is caught too, as it also covers violations
that raise no event in the page, such as a refused frame. A blocked script or style often breaks
nothing a test looks at (a missing rule, a plot without its tooltip styles), so a passing test
alone would not prove that the pages work under the policy.
"""

from __future__ import annotations

from typing import Any

MARKER = "[csp-violation]"

# A violation event names the directive, what was blocked (a URL, "inline" or "eval"), where,
# and the first characters of an inline sample.
LISTENER = f"""
document.addEventListener("securitypolicyviolation", (event) => {{
  console.error({MARKER!r} + " " + JSON.stringify({{
    directive: event.effectiveDirective,
    blocked: event.blockedURI,
    source: event.sourceFile,
    line: event.lineNumber,
    sample: event.sample,
    page: document.location.pathname,
  }}));
}});
"""


def is_violation(text: str) -> bool:
    """Whether a console message reports a Content-Security-Policy violation."""
    return text.startswith(MARKER) or "Content Security Policy directive" in text


def watch(context: Any, violations: list[str]) -> Any:
    """Collect the CSP violations of every page of ``context`` into ``violations``."""
    context.add_init_script(LISTENER)
    context.on(
        "console",
        lambda message: violations.append(message.text) if is_violation(message.text) else None,
    )
    return context


class CspCheckedBrowser:
    """A Playwright browser whose new contexts (and pages) are watched for CSP violations;
    everything else is the browser's own."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser
        self.violations: list[str] = []

    def new_context(self, **options: Any) -> Any:
        return watch(self._browser.new_context(**options), self.violations)

    def new_page(self, **options: Any) -> Any:
        return self.new_context(**options).new_page()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)
