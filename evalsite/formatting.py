"""How numbers, intervals, p-values and durations are written on pages and in reports, in the
active language's number format."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from django.utils.formats import get_format, number_format
from django.utils.translation import gettext as _


def fixed_text(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals and a decimal point, rounded as the template filter
    ``floatformat`` rounds (half away from zero on the shortest decimal that reads back as the
    value: 4.125 gives 4.13, where formatting the binary value gives 4.12); for files such as
    the LaTeX report, and under :func:`number_text` for pages.

    Pages have thousands of numbers and ``Decimal`` was the largest cost of rendering the
    dashboard: only a value whose shortest decimal ends in a 5 just past ``digits`` (a tie,
    where binary rounding may go down) takes the ``Decimal`` path."""
    text = f"{value:.{digits}f}"
    shortest = repr(float(value))
    point = shortest.find(".")
    tie = point >= 0 and "e" not in shortest and len(shortest) - point - 1 == digits + 1
    if tie and shortest[-1] == "5":
        text = str(Decimal(shortest).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP))
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # -0.02 shows as 0.0, not -0.0
    return text


def number_text(value: float | None, digits: int) -> str:
    """A number with ``digits`` decimals (:func:`fixed_text`) and the active language's decimal
    separator; "—" when missing or not finite (a page never shows "nan"). Every page writes
    numbers through this function (templates by ``{% load numbers %}``), so that one value shows
    the same digits everywhere."""
    if value is None or not math.isfinite(value):
        return "—"
    text = fixed_text(value, digits)
    separator = get_format("DECIMAL_SEPARATOR")
    return text if separator == "." else text.replace(".", separator)


def count_text(value: int | None) -> str:
    """A count with the active language's thousands separator (12,345 in English, 12.345 in
    German); "—" when missing. Counts on pages go through this (templates: ``|count``), so that
    a WMT-size campaign's numbers can be read at a glance."""
    if value is None:
        return "—"
    return number_format(int(value), force_grouping=True)


def interval_text(low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None:
        return "—"
    return f"[{number_text(low, digits)}, {number_text(high, digits)}]"


def p_text(value: float | None) -> str:
    """A p-value with two significant digits (``stringformat:".2g"``); "—" when missing."""
    return "—" if value is None else f"{value:.2g}"


def duration_display(seconds: float | None) -> str:
    """``42 min`` below two hours, ``3.5 h`` above; ``—`` when unknown."""
    if seconds is None:
        return "—"
    if seconds < 7200:
        return _("%(minutes)d min") % {"minutes": round(seconds / 60)}
    return _("%(hours)s h") % {"hours": number_text(seconds / 3600, 1)}


# What a spreadsheet takes for the start of a formula (or, tab and carriage return, a way to
# hide one) at the beginning of a cell: OWASP's list for CSV injection.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(text: str) -> str:
    """A text cell of a CSV or TSV download that no spreadsheet runs as a formula: one that
    begins with ``= + - @``, a tab or a carriage return gets a leading apostrophe, which
    spreadsheets read as "this is text" (a system named ``=cmd|' /c calc'!A1`` shows as written).
    Only texts that people typed (names, ids) pass here; numbers EvalSite writes never do, so
    a score of -0.5 stays a number."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
