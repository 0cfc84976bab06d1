"""The code keeps the shape the README's layout describes: no module over 600 lines and no
function over 80 (migrations aside; the app, the benchmarks and the tests alike), no import
cycle between EvalSite's modules nor between its sub-packages (imports inside functions count
too), no module that imports another sub-package's private name, and no test module that
imports another (shared helpers live in ``tests/support/`` and the factories). The core's
purity has its own test (``tests/evalcore/test_purity.py``)."""

from __future__ import annotations

import ast
from collections import deque
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


def sub_package(module: str) -> str:
    """The unit a module belongs to: ``annotation.<name>`` (a package such as
    ``annotation.judging``, or a module such as ``annotation.permissions``), else its top-level
    package (``evalsite``, ``evalcore``, ``metrics``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "annotation" else parts[0]


def shortest_cycle(graph: dict[str, dict[str, str]], start: str) -> list[str] | None:
    """The units of the shortest way from ``start`` back to itself (``start`` first), or None."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        unit = queue.popleft()
        for target in sorted(graph.get(unit, {})):
            if target == start:
                units = [unit]
                while unit != start:
                    unit = came_from[unit]
                    units.append(unit)
                return units[::-1]
            if target not in came_from:
                came_from[target] = unit
                queue.append(target)
    return None


def test_no_import_cycle_between_sub_packages() -> None:
    paths = {module_name(p): p for p in python_files(PACKAGES)}
    known = set(paths)
    # unit -> unit it imports -> the first import that makes the edge (for the message).
    graph: dict[str, dict[str, str]] = {}
    for module, path in sorted(paths.items()):
        for imported in sorted(imported_modules(path, known)):
            source, target = sub_package(module), sub_package(imported)
            if source != target:
                graph.setdefault(source, {}).setdefault(target, f"{module} imports {imported}")
    assert "annotation.models" in graph["annotation.judging"]
    cycles = set()
    for start in sorted(graph):
        units = shortest_cycle(graph, start)
        if units is not None:
            # One entry per cycle, whichever of its units it was found from.
            at = units.index(min(units))
            units = units[at:] + units[:at]
            edges = zip(units, [*units[1:], units[0]], strict=True)
            why = ", ".join(graph[a][b] for a, b in edges)
            cycles.add(f"{' -> '.join([*units, units[0]])} ({why})")
    assert not cycles, "import cycles between sub-packages:\n" + "\n".join(sorted(cycles))


def private_names(tree: ast.AST, known: set[str]) -> Iterator[tuple[str, str]]:
    """(module, name) of every private name the code imports from a module of ours: ``from m
    import _x``, or ``m._x`` of a module ``m`` it imported (dunder names are not private)."""

    def private(name: str) -> bool:
        return name.startswith("_") and not name.endswith("__")

    modules: dict[str, str] = {}  # a name bound to a module of ours -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:
                    modules[alias.asname or alias.name] = full
                if private(alias.name):
                    yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in known:
                    modules[alias.asname] = alias.name
                parts = alias.name.split(".")
                for i, part in enumerate(parts):
                    if private(part):
                        yield ".".join(parts[:i]), part
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and private(node.attr)
        ):
            yield modules[node.value.id], node.attr


def test_no_module_imports_a_private_name_of_another_sub_package() -> None:
    paths = {module_name(p): p for p in python_files(PACKAGES)}
    known = set(paths)
    imports = sorted(
        f"{module} imports {name} from {source}"
        for module, path in paths.items()
        for source, name in private_names(ast.parse(path.read_text()), known)
        if source.split(".")[0] in PACKAGES and sub_package(source) != sub_package(module)
    )
    assert not imports, "private names of other sub-packages:\n" + "\n".join(imports)


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


# The format registries and the modules of the formats they list: the only places that may
# decide something by a format's key.
FORMAT_HOMES = (
    "annotation/judgment_import/formats.py",
    "annotation/judgment_import/evalsite.py",
    "annotation/judgment_import/appraise.py",
    "annotation/judgment_import/wmt.py",
    "annotation/judgment_import/mqm_tsv.py",
    "annotation/judgment_import/appraise_spans.py",
    "annotation/campaigns/parse.py",
    "annotation/campaigns/formats/",
    "annotation/reports/registry.py",
    "annotation/reports/text.py",
)


def format_keys() -> dict[str, set[str]]:
    """Per package, the format keys it may not test: the import layouts' and upload forms'
    everywhere, the report formats' extensions in the app (the metrics have exports of
    their own)."""
    from annotation.campaigns.parse import UPLOAD_FORMATS
    from annotation.judgment_import.formats import JUDGMENT_FORMATS
    from annotation.reports.registry import REPORT_FORMATS

    keys = {f.key for f in JUDGMENT_FORMATS} | {f.key for f in UPLOAD_FORMATS}
    extensions = {f.extension for formats in REPORT_FORMATS.values() for f in formats}
    return {
        package: keys | (extensions if package == "annotation" else set()) for package in PACKAGES
    }


def format_tests(tree: ast.AST, keys: set[str]) -> Iterator[tuple[int, str]]:
    """(line, code) of every comparison with a format's key, spelled out (``== "mqm"``, ``in
    ("csv", "tsv")``) or by a key constant (``== FORMAT_WMT``, ``== FORM_PLAIN``). A test of
    a protocol's key is left to the kinds' own scan (the MQM protocol and Google's MQM TSV
    share the name)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or "protocol" in ast.unparse(node):
            continue
        for operand in (node.left, *node.comparators):
            items = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else []
            named = operand.id if isinstance(operand, ast.Name) else getattr(operand, "attr", "")
            if any(isinstance(v, ast.Constant) and v.value in keys for v in (operand, *items)) or (
                named.startswith("FORMAT_") and named != "FORMAT_AUTO"
            ):
                yield node.lineno, ast.unparse(node)
                break


def test_no_module_outside_the_format_registries_branches_on_a_format_key() -> None:
    """A new import or export format is its own module and one registry entry: no other module
    asks which format it has."""
    keys = format_keys()
    found = [
        f"{path.relative_to(ROOT)}:{line}: {code}"
        for path in python_files(PACKAGES)
        if not str(path.relative_to(ROOT)).startswith(FORMAT_HOMES)
        for line, code in format_tests(
            ast.parse(path.read_text()), keys[module_name(path).split(".")[0]]
        )
    ]
    assert found == []
