"""Old names in stored metric parameters, read knowingly: a job or result document stored before
a campaign had one resample count names it ``bootstrap_samples``. The only module, with the
migrations, that spells that name."""

from __future__ import annotations

from typing import Any

PARAMS_RENAMED = {"bootstrap_samples": "resamples"}
"""Old names of stored parameters: new name by old."""


def params_read(params: dict[str, Any]) -> dict[str, Any]:
    """Stored ``params`` (a job's, or a result document's) under today's names; a ValueError
    when they have both names of one parameter (which of the two counts would be a guess)."""
    out = dict(params)
    for old, new in PARAMS_RENAMED.items():
        if old in out:
            if new in out:
                raise ValueError(f"params: {old!r} and {new!r} are one parameter")
            out[new] = out.pop(old)
    return out
