"""Small helpers for numbers that cross from the core to results, pages and JSON."""

from __future__ import annotations

import math
from typing import Any


def finite_or_none(value: Any) -> float | None:
    """A finite float, or None for a missing value, NaN or ±inf (not numbers to show or to
    store in JSON)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None
