"""The code keeps the shape the README's layout describes: no module over 600 lines and no
function over 80 (migrations aside; the app, the benchmarks and the tests alike), no import
cycle between EvalSite's modules (imports inside functions count too), and no test module that
imports another (shared helpers live in ``tests/support/`` and the factories). The core's
purity has its own test (``tests/evalcore/test_purity.py``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")
CHECKED = (*PACKAGES, "benchmarks", "tests")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def python_files(folders: tuple[str, ...]) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts and "__pycache__" not in path.parts:
                yield path


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The modules of ours that ``path`` imports, anywhere in it, resolved to the module that
    defines the name (``from a.b import c`` is ``a.b.c`` when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            ]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def test_no_module_is_longer_than_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in python_files(CHECKED)
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_longer_than_80_lines() -> None:
    long = {}
    for path in python_files(CHECKED):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                n = (node.end_lineno or node.lineno) - first + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = n
    assert long == {}


def test_no_import_cycle_between_modules() -> None:
    paths = {module_name(p): p for p in python_files(PACKAGES)}
    known = set(paths)
    graph = {m: imported_modules(p, known) - {m} for m, p in paths.items()}
    assert "annotation.analysis.results" in graph["annotation.reports.systems"]
    # Every module reachable from each module; a module that reaches itself is in a cycle.
    cycles = []
    for start in sorted(graph):
        seen: set[str] = set()
        stack = list(graph[start])
        while stack:
            module = stack.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                stack.extend(graph[module])
    assert cycles == []


def test_no_test_module_imports_another() -> None:
    imports = {}
    for path in python_files(("tests",)):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("tests.")
            ) and node.module.rpartition(".")[2].startswith("test_"):
                imports[str(path.relative_to(ROOT))] = node.module
    assert imports == {}
