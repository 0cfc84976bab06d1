"""Every registry is filled in one place, not by importing a module for its side effect: signal
receivers and the annotation screen's hooks (gates, entrances, the stored-analysis reader) in an
``AppConfig.ready``, the protocol kinds from the list in ``annotation/protocols/__init__.py``,
the metrics from ``BUILT_IN`` in ``evalcore/scoring/registry.py``,
and Celery tasks in each app's ``tasks.py`` (which its ``ready`` imports). A source scan, as for
the layout."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from celery.signals import worker_init, worker_ready

from annotation.protocols import KINDS, PROTOCOLS
from metrics.tasks import WORKER_RECEIVERS
from tests.conftest import ROOT

PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")
APPS = ("annotation", "metrics")
# Where each kind of registration may be written (paths relative to the root; "*" any folder).
PLACES = {
    "connect": ("*/apps.py",),
    "receiver": (),
    "gate_register": ("annotation/apps.py",),
    "entrance_register": ("annotation/apps.py",),
    "stored_reader_register": ("metrics/apps.py",),
    "register": ("annotation/protocols/__init__.py", "evalcore/scoring/registry.py"),
    "shared_task": ("annotation/tasks.py", "metrics/tasks.py"),
}


def python_files() -> Iterator[Path]:
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts and "__pycache__" not in path.parts:
                yield path


def registration_name(node: ast.expr) -> str:
    """The registering name ``node`` calls or decorates with ("" if none): ``gate_register(…)``,
    ``signal.connect(…)``, ``@signal.connect``, ``@shared_task(…)``; ``register`` only as a plain
    name (``admin.site.register`` and a router's or a poller's ``register`` are not ours)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name) and node.id in PLACES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in PLACES and node.attr != "register":
        return node.attr
    return ""


def registrations(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, kind) of every call or decorator that registers something (a kind of ``PLACES``)."""
    for node in ast.walk(tree):
        candidates: list[ast.expr] = []
        if isinstance(node, ast.Call):
            candidates = [node]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # A call decorator is a Call the walk finds anyway.
            candidates = [d for d in node.decorator_list if not isinstance(d, ast.Call)]
        for candidate in candidates:
            if name := registration_name(candidate):
                yield candidate.lineno, name


def module_level_fills(tree: ast.Module, imported: set[str]) -> Iterator[tuple[int, str]]:
    """(line, name) of every module-level ``NAME[...] = …`` of a name imported from elsewhere."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in imported
                ):
                    yield node.lineno, target.value.id


def imported_names(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def allowed(path: str, kind: str) -> bool:
    return any(Path(path).match(place) for place in PLACES[kind])


def test_registries_are_filled_in_their_one_place() -> None:
    found = sorted(
        f"{relative}:{line}: {kind}"
        for path in python_files()
        for line, kind in registrations(ast.parse(path.read_text()))
        if not allowed(relative := str(path.relative_to(ROOT)), kind)
    )
    assert not found, "registrations outside their one place:\n" + "\n".join(found)


def test_no_module_fills_another_modules_registry_on_import() -> None:
    found = set()
    for path in python_files():
        tree = ast.parse(path.read_text())
        for _, name in module_level_fills(tree, imported_names(tree)):
            found.add((str(path.relative_to(ROOT)), name))
    assert not found, found


def test_the_scan_finds_registrations_anywhere_in_a_module() -> None:
    tree = ast.parse(
        "@worker_ready.connect\ndef f(**kwargs): ...\n"
        "def g():\n    gate_register(TutorialGate())\n"
        "PARSERS['x'] = (a, b)\n"
        "from annotation.judgment_import.formats import PARSERS\n"
    )
    assert sorted(registrations(tree)) == [(1, "connect"), (4, "gate_register")]
    assert list(module_level_fills(tree, imported_names(tree))) == [(5, "PARSERS")]


def test_each_app_imports_its_tasks_where_django_starts() -> None:
    for app in APPS:
        ready = ast.parse((ROOT / app / "apps.py").read_text())
        assert f"{app}.tasks" in {
            alias.name
            for node in ast.walk(ready)
            if isinstance(node, ast.Import)
            for alias in node.names
        }


def test_the_registries_hold_what_their_place_lists() -> None:
    assert list(PROTOCOLS.values()) == [kind.PROTOCOL for kind in KINDS]
    connected = {
        signal: [ref() if callable(ref) else ref for _, ref in signal.receivers]
        for signal in (worker_init, worker_ready)
    }
    for signal, receiver in WORKER_RECEIVERS:
        assert connected[signal].count(receiver) == 1
