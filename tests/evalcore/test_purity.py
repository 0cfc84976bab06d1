"""The numerical core stands alone: importing every module of ``evalcore`` in a fresh interpreter
loads neither Django, Celery nor any of EvalSite's apps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import evalcore

FORBIDDEN = ("django", "celery", "kombu", "rest_framework", "evalsite", "annotation", "metrics")


def core_modules() -> list[str]:
    root = Path(evalcore.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_the_core_imports_neither_django_nor_celery_nor_the_apps() -> None:
    modules = core_modules()
    assert "evalcore.scoring.sacre" in modules
    assert "evalcore.human.qc" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
    )
    assert set(modules) <= set(loaded)
    leaks = [name for name in loaded if name.split(".")[0] in FORBIDDEN]
    assert leaks == []
