"""Where the real releases in ``shared/data/`` are: beside the project (``../shared/data``, as
the data's README says), or beside the repository a clean clone was made from (its ``origin``
when that is a folder of this machine), or where ``EVALSITE_SHARED_DATA`` points."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def shared_data(name: str) -> Path | None:
    """The folder ``name`` of the shared data, or None where none of the places holds it."""
    places = []
    if given := os.environ.get("EVALSITE_SHARED_DATA"):
        places.append(Path(given))
    places.append(ROOT.parent / "shared" / "data")
    origin = subprocess.run(
        ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if origin and Path(origin).is_dir():
        places.append(Path(origin).resolve().parent / "shared" / "data")
    return next((place / name for place in places if (place / name).is_dir()), None)


def shared_data_or_skip(name: str) -> Path:
    """The folder ``name`` of the shared data; where no place holds it, the calling test module
    is skipped, saying where the data is looked for."""
    found = shared_data(name)
    if found is None:
        pytest.skip(
            f"the shared data {name} is neither beside the project nor beside its origin "
            "(set EVALSITE_SHARED_DATA)",
            allow_module_level=True,
        )
    return found
