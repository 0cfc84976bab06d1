"""Old names of the analysis settings and of the stored result, read knowingly: stored settings
and schema-1 documents name the resample counts ``n_bootstrap``, ``ranking_bootstrap`` and
``trueskill_bootstrap`` and may leave the seed to each protocol (None). The only module, with
the migrations, that spells those names."""

from __future__ import annotations

from typing import Any

RENAMED = {"n_bootstrap": "resamples", "ranking_bootstrap": "trueskill_runs"}
"""Old names of settings: new name by old."""

METHOD_RENAMED = {"n_bootstrap": "resamples", "trueskill_bootstrap": "trueskill_runs"}
"""Old names of a criterion's method (schema 1): new name by old."""


def renamed_keys(data: dict[str, Any], renamed: dict[str, str] = RENAMED) -> dict[str, Any]:
    """``data`` with the old names of ``renamed`` under their new names; a ValueError when it
    has both names of one setting (which of the two counts would be a guess)."""
    out = dict(data)
    for old, new in renamed.items():
        if old in out:
            if new in out:
                raise ValueError(f"{old!r} and {new!r} are one setting; give only {new!r}")
            out[new] = out.pop(old)
    return out


def analysis_schema_1_upgraded(doc: dict[str, Any], path: str, default_seed: int) -> dict[str, Any]:
    """A schema-1 analysis document under schema 2's names. Its settings' seed of None (each
    protocol config's own seed) becomes the seed every criterion ran with, as each criterion's
    method records it; ``default_seed`` when there is no criterion (no number was drawn). A
    ValueError refuses a document whose criteria ran with different seeds: no one seed
    describes it."""
    out = dict(doc)
    criteria = [
        {**c, "method": renamed_keys(c["method"], METHOD_RENAMED)}
        if isinstance(c, dict) and isinstance(c.get("method"), dict)
        else c
        for c in out.get("criteria", [])
    ]
    out["criteria"] = criteria
    settings = out.get("settings")
    if not isinstance(settings, dict):
        return out
    settings = renamed_keys(settings)
    if "seed" in settings and settings["seed"] is None:
        seeds = {
            c["method"].get("seed")
            for c in criteria
            if isinstance(c, dict) and isinstance(c.get("method"), dict)
        }
        if len(seeds) > 1:
            raise ValueError(
                f"{path}.settings.seed: each protocol config ran with its own seed "
                f"({', '.join(str(s) for s in sorted(seeds, key=str))}); a campaign now has "
                "one seed: recompute the analysis"
            )
        settings["seed"] = seeds.pop() if seeds else default_seed
    out["settings"] = settings
    return out
