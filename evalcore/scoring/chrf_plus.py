"""chrF++ (Popović 2017): chrF with word n-grams up to order 2."""

from __future__ import annotations

from typing import Any

from .chrf import BETA, CHAR_ORDER, CHRF, CHRF_LOWERCASE, EPS_SMOOTHING, WHITESPACE
from .spec import MetricSpec


class CHRFPlusPlus(CHRF):
    """chrF++ (word order 2): chrF under its own name, so that results keyed by the metric's
    name keep chrF and chrF++ apart."""

    name = "chrf++"

    def __init__(self, *, word_order: int = 2, **options: Any) -> None:
        super().__init__(word_order=word_order, **options)


SPEC = MetricSpec(CHRFPlusPlus, (CHAR_ORDER, BETA, WHITESPACE, CHRF_LOWERCASE, EPS_SMOOTHING))
