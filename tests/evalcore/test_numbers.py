"""finite_or_none: what the results, pages and JSON documents show for a number."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.numbers import finite_or_none


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf, np.float64("nan")])
def test_missing_and_non_finite_values_are_none(value: object) -> None:
    assert finite_or_none(value) is None


def test_finite_numbers_become_plain_floats() -> None:
    for value, expected in [(np.float64(4.125), 4.125), (np.int64(3), 3.0), (-0.5, -0.5)]:
        number = finite_or_none(value)
        assert type(number) is float
        assert number == expected
