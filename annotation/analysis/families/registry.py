"""The registry of analysis families: one list, and lookups by the kind's ``analysis``
attribute, by a table's kind and by a stored result's ``kind``."""

from __future__ import annotations

from typing import Any

from annotation.analysis.families.base import AnalysisFamily
from annotation.analysis.families.pairwise import PairwiseFamily
from annotation.analysis.families.scores import ScoresFamily
from annotation.protocols import PROTOCOLS

FAMILIES: list[AnalysisFamily] = [ScoresFamily(), PairwiseFamily()]


def family_named(key: str) -> AnalysisFamily:
    """The family a kind's ``analysis`` attribute names."""
    for family in FAMILIES:
        if family.key == key:
            return family
    raise KeyError(f"no analysis family {key!r}")


def family_of_protocol(protocol: str) -> AnalysisFamily:
    """The family of a registered protocol kind (by its key)."""
    return family_named(PROTOCOLS[protocol].analysis)


def family_of_result(result: Any) -> AnalysisFamily:
    """The family that computed a stored result: anything with the ``kind`` of a
    :class:`annotation.analysis.results.CriterionAnalysis` (the document keeps that name)."""
    for family in FAMILIES:
        if family.result_kind == result.kind:
            return family
    raise KeyError(f"no analysis family computes {result.kind!r} results")
