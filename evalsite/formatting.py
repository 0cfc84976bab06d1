"""How numbers, intervals, p-values and durations are written on pages and in reports, in the
active language's number format."""

from __future__ import annotations

from django.utils.formats import get_format
from django.utils.translation import gettext as _


def number_text(value: float | None, digits: int) -> str:
    """A number with ``digits`` decimals and the active language's decimal separator, as the
    template filter ``floatformat`` shows it; "—" when missing. The dashboard has thousands of
    numbers and ``floatformat`` (through ``Decimal``) was the largest cost of rendering it."""
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    separator = get_format("DECIMAL_SEPARATOR")
    return text if separator == "." else text.replace(".", separator)


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
    return _("%(hours).1f h") % {"hours": seconds / 3600}
