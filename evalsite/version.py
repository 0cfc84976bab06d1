"""Which code produced a result: EvalSite's release with a digest of its running source.

Every analysis stores this version in its parameters (and so in its fingerprint), reports and
the signatures of metrics that are ours carry it, and the human analysis's cache key includes
it. The release number alone changes only when someone bumps it: a deployment of changed code
under the same number would keep serving what the old code computed as current. The digest
changes with any change to the code, wherever and however it is installed (the same sources give
the same digest in a checkout, a wheel or the Docker image).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# The packages of EvalSite's own code, found where Python imports them from.
CODE_PACKAGES = ("evalsite", "annotation", "metrics")

# The libraries whose arithmetic and random streams the statistics rest on: another version may
# give other numbers from the same inputs and seed.
NUMERICAL_LIBRARIES = ("numpy", "scipy", "sacrebleu")


def source_digest(folders: Iterable[Path]) -> str:
    """The first 12 hex digits of a SHA-256 over the Python sources under ``folders`` (each
    file's path relative to its folder's parent, then its bytes), migrations left out."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder.parent)
            if "migrations" in relative.parts:
                continue
            digest.update(relative.as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def code_folders() -> list[Path]:
    """The folders ``CODE_PACKAGES`` are imported from."""
    folders = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders.append(Path(next(iter(spec.submodule_search_locations))))
    return folders


@cache
def evalsite_version() -> str:
    """The release and the source digest, e.g. ``0.1.0+src.3f9a0c21b7de`` (computed once per
    process: about 5 ms)."""
    try:
        release = version("evalsite")
    except PackageNotFoundError:  # a source tree that was never installed
        release = "unknown"
    return f"{release}+src.{source_digest(code_folders())}"


def library_versions() -> dict[str, str]:
    """The installed versions of ``NUMERICAL_LIBRARIES``."""
    return {name: version(name) for name in NUMERICAL_LIBRARIES}
