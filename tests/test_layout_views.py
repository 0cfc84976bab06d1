"""A view module serves its own sub-package's pages or API: no module imports another
sub-package's views (``views.py``, ``api.py``, ``*_views.py``, ``*_api.py``); what several
share lives in a public non-view module (``annotation/permissions.py`` for access,
``annotation/analysis/query.py`` and ``serializers.py`` for the analysis settings of a request).
URL modules, which route to views, are the exception. A source scan, as for the layout."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")


def python_files() -> Iterator[Path]:
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts and "__pycache__" not in path.parts:
                yield path


def sub_package(module: str) -> str:
    """``annotation.<name>`` for the annotation app, else the top-level package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "annotation" else parts[0]


def is_view_module(module: str) -> bool:
    last = module.rpartition(".")[2]
    return last in ("views", "api") or last.endswith(("_views", "_api"))


def view_imports(tree: ast.AST, module: str) -> Iterator[str]:
    """Every view module of another sub-package that ``module`` imports."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if (
                name.split(".")[0] in PACKAGES
                and is_view_module(name)
                and sub_package(name) != sub_package(module)
            ):
                yield name


def test_no_module_imports_another_sub_packages_views() -> None:
    found = []
    for path in python_files():
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if parts[-1].endswith("urls"):
            continue
        found += [
            f"{module} imports {name}" for name in view_imports(ast.parse(path.read_text()), module)
        ]
    assert not found, "views imported across sub-packages:\n" + "\n".join(sorted(found))


def test_the_scan_finds_a_view_import_across_sub_packages() -> None:
    tree = ast.parse(
        "from annotation.analysis.api import CampaignAPIView\n"
        "from annotation.reports import views\n"
        "from annotation.analysis.query import settings_from\n"
    )
    found = list(view_imports(tree, "annotation.reports.api"))
    assert found == ["annotation.analysis.api"]
    assert list(view_imports(tree, "metrics.api")) == [
        "annotation.analysis.api",
        "annotation.reports.views",
    ]
