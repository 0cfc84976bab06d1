"""Which systems are human translations rated as systems: a rule on the name, written once."""

from __future__ import annotations

import re

# ref, ref-A, refA, refB, ref_b, Human-A, Human-B.0, human, HumanRef, … (case-insensitive).
_HUMAN_NAME = re.compile(r"^(?:ref(?:[-_.]?(?:[a-z]|\d{1,2}))?|human.*)$", re.IGNORECASE)


def system_name_is_human(name: str) -> bool:
    """Whether a system named ``name`` is a human translation rated as a system.

    The names are those of the releases that rate references like systems: Google's MQM
    releases (WMT 2020 ``Human-A.0``/``Human-B.0``/``Human-P.0``; WMT 2021 TED and newstest
    ``ref-A``, ``ref-B``…; WMT 2022 on ``refA``, ``refB``; the TED set's ``ref``) and WMT's
    findings (``Human-A``, ``Human-B``, ``HUMAN``). A name that only starts with ``ref`` and goes
    on as a word (``refine-mt``) is a system like any other.
    """
    return bool(_HUMAN_NAME.match(name.strip()))
