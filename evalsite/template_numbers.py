"""Template filters of the one number formatter (``evalsite.formatting``): ``{% load numbers %}``
then ``{{ value|number:3 }}``, ``{{ n|count }}`` (thousands
separated); "—" for a missing value."""

from __future__ import annotations

from typing import Any

from django import template

from evalsite.formatting import count_text, number_text

register = template.Library()


@register.filter
def number(value: Any, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals, as every page and report writes it."""
    return number_text(None if value is None or value == "" else float(value), int(digits))


@register.filter
def count(value: Any) -> str:
    """A whole number with the active language's thousands separator: 12,345 (German 12.345)."""
    return count_text(None if value is None or value == "" else int(value))
