"""Which code produced a result: EvalSite's release with a digest of its running source.

Every analysis stores this version in its parameters (and so in its fingerprint), reports and
the signatures of metrics that are ours carry it, and the human analysis's cache key includes
it. The release number alone changes only when someone bumps it: a deployment of changed code
under the same number would keep serving what the old code computed as current. The digest
changes with any change to the code, wherever and however it is installed (the same sources give
the same digest in a checkout, a wheel or the Docker image).

Each process reads it once, when Django starts (``MetricsConfig.ready``), so that it names the
code the process loaded even if the files change on disk afterwards.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# The packages of EvalSite's own code, found where Python imports them from.
CODE_PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")


def source_digest(folders: Iterable[Path]) -> str:
    """The first 12 hex digits of a SHA-256 over the Python sources under ``folders`` (each
    file's path relative to its folder's parent, then its bytes). Left out: migrations, and
    what is not a regular file or is hidden (an editor's lock file such as ``.#views.py``)."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder.parent)
            if "migrations" in relative.parts or path.name.startswith("."):
                continue
            if not path.is_file():  # a dangling link
                continue
            digest.update(relative.as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def code_folders() -> list[Path]:
    """The folders ``CODE_PACKAGES`` are imported from."""
    folders = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"EvalSite's package {name!r} cannot be found")
        folders.append(Path(next(iter(spec.submodule_search_locations))))
    return folders


@cache
def evalsite_version() -> str:
    """The release and the source digest, e.g. ``0.1.0+src.3f9a0c21b7de`` (5–15 ms, once)."""
    try:
        release = version("evalsite")
    except PackageNotFoundError:  # a source tree that was never installed
        release = "unknown"
    return f"{release}+src.{source_digest(code_folders())}"


@cache
def library_versions() -> dict[str, str]:
    """The versions of the libraries whose arithmetic and random streams the statistics rest
    on, as loaded: another version may give other numbers from the same inputs and seed."""
    import numpy
    import sacrebleu
    import scipy
    import trueskill

    return {
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sacrebleu": sacrebleu.__version__,
        "trueskill": trueskill.__version__,
    }


def code_stamp(version: str | None = None, libraries: Mapping[str, str] | None = None) -> str:
    """The one way a result, a report or a message names the code behind it: EvalSite's version
    and the libraries', e.g. ``evalsite 0.1.0+src.3f9a0c21b7de; numpy 2.4.6; sacrebleu 2.6.0;
    scipy 1.17.1; trueskill 0.4.5``. Defaults: this process's (:func:`evalsite_version`,
    :func:`library_versions`); a stored job's versions give the code that requested it."""
    libraries = library_versions() if libraries is None else libraries
    named = [f"evalsite {version or evalsite_version()}"]
    named += [f"{name} {number}" for name, number in sorted(libraries.items())]
    return "; ".join(named)


def signature_version() -> str:
    """The same code in the field syntax of a sacreBLEU signature (``version:…``), for the
    metrics that are ours: ``evalsite-0.1.0+src.3f9a0c21b7de+sacrebleu-2.6.0``."""
    return f"evalsite-{evalsite_version()}+sacrebleu-{library_versions()['sacrebleu']}"
