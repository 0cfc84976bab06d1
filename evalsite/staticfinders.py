"""A static-files finder for single files that ship inside installed packages.

The dashboard's plots use plotly's bundled ``plotly.min.js``; serving the package's whole
``package_data`` folder would also publish (and collect) ten megabytes of other files. This finder
publishes exactly the files listed in ``EVALSITE_PACKAGE_STATIC``: ``{url path: (package,
relative path)}``. The package is located without being imported.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage, Error
from django.core.files.storage import FileSystemStorage


def _package_file(package: str, relative: str) -> Path | None:
    spec = find_spec(package)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / relative
    return path if path.is_file() else None


class PackageFileFinder(BaseFinder):
    def _files(self) -> dict[str, Path | None]:
        return {
            url: _package_file(package, relative)
            for url, (package, relative) in settings.EVALSITE_PACKAGE_STATIC.items()
        }

    def check(self, **kwargs: Any) -> list[CheckMessage]:
        return [
            Error(f"{url}: {package}/{relative} is not installed", id="evalsite.E001")
            for url, (package, relative) in settings.EVALSITE_PACKAGE_STATIC.items()
            if _package_file(package, relative) is None
        ]

    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> Any:
        found = self._files().get(path)
        if found is None:
            return []  # as Django's own finders answer "not here"
        return [str(found)] if find_all else str(found)

    def list(self, ignore_patterns: Any) -> Any:
        for url, path in self._files().items():
            if path is not None:
                storage = FileSystemStorage(location=str(path.parent))
                storage.prefix = str(Path(url).parent)  # type: ignore[attr-defined]
                yield path.name, storage
