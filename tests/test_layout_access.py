"""Who may see what is decided in one module, ``annotation/permissions.py``: no other module reads
a user's staff flags or permissions, raises its own 403 or writes a DRF permission class, and no
view or API module looks an object up through the requesting user itself (it asks the access
module for the campaign, config or assignment instead). A source scan, as for the layout."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("evalsite", "evalcore", "annotation", "metrics")
ACCESS_MODULE = ROOT / "annotation" / "permissions.py"
# Reading these is deciding who may do what.
RIGHTS = {"is_staff", "is_superuser", "has_perm", "has_perms", "annotation.add_campaign"}
PERMISSION_HOOKS = {"has_permission", "has_object_permission"}
# Lookups that bind an object to a person: made with the requesting user, they are an access check.
PERSON_FIELDS = {"annotator", "annotators", "owner", "organizers"}
LOOKUPS = {"get_object_or_404", "get_list_or_404", "filter", "get", "exclude"}


def python_files() -> Iterator[Path]:
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts and "__pycache__" not in path.parts:
                yield path


def is_view_module(path: Path) -> bool:
    """HTML views and API views: ``views.py``, ``api.py``, ``*_views.py``, ``*_api.py``."""
    return path.stem in ("views", "api") or path.stem.endswith(("_views", "_api"))


def access_decisions(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, what) of every place that decides access on its own."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in RIGHTS:
            yield node.lineno, node.attr
        elif isinstance(node, ast.Constant) and node.value in RIGHTS:
            yield node.lineno, repr(node.value)
        elif isinstance(node, ast.Raise) and "PermissionDenied" in ast.unparse(node.exc or node):
            yield node.lineno, "raises PermissionDenied"
        elif isinstance(node, ast.ClassDef) and any(
            "BasePermission" in ast.unparse(base) for base in node.bases
        ):
            yield node.lineno, f"permission class {node.name}"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.name in PERMISSION_HOOKS
        ):
            yield node.lineno, f"defines {node.name}"


def is_requesting_user(node: ast.AST) -> bool:
    """Whether the expression mentions ``request.user`` (or ``self.request.user``)."""
    return any(
        isinstance(n, ast.Attribute) and n.attr == "user" and "request" in ast.unparse(n.value)
        for n in ast.walk(node)
    )


def user_lookups(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, call) of every lookup that filters by a person field with the requesting user."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in LOOKUPS:
            continue
        for keyword in node.keywords:
            field = (keyword.arg or "").split("__")
            by_person = bool(PERSON_FIELDS & set(field)) or field[0] == "campaign"
            if by_person and is_requesting_user(keyword.value):
                yield node.lineno, f"{name}({keyword.arg}=…request.user…)"


def test_only_the_access_module_decides_who_may_do_what() -> None:
    found = sorted(
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in python_files()
        if path != ACCESS_MODULE
        for line, what in access_decisions(ast.parse(path.read_text()))
    )
    assert not found, "access decided outside annotation/permissions.py:\n" + "\n".join(found)


def test_the_scan_finds_the_access_modules_own_checks() -> None:
    found = {what for _, what in access_decisions(ast.parse(ACCESS_MODULE.read_text()))}
    assert {"has_perm", "'is_staff'", "raises PermissionDenied"} <= found
    assert "permission class IsOrganizer" in found


def test_no_view_looks_an_object_up_through_the_requesting_user() -> None:
    views = [path for path in python_files() if is_view_module(path)]
    assert ROOT / "annotation" / "judging" / "views.py" in views
    assert ROOT / "metrics" / "settings_views.py" in views
    found = sorted(
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in views
        for line, call in user_lookups(ast.parse(path.read_text()))
    )
    assert not found, "ask annotation/permissions.py instead:\n" + "\n".join(found)


def test_the_scan_finds_a_lookup_through_the_requesting_user() -> None:
    tree = ast.parse(
        "get_object_or_404(Assignment, pk=pk, annotator=request.user)\n"
        "Campaign.objects.filter(campaign__in=campaigns_annotated_by(self.request.user))\n"
        "task_assign_next(config=config, annotator=request.user)\n"
    )
    assert [line for line, _ in user_lookups(tree)] == [1, 2]
