"""A campaign's seed and resample count have one name each: ``seed`` and ``resamples`` (and the
distinct quantities ``trueskill_runs`` and ``ar_trials``), in the code, the API, the forms, the
templates, the stored params, the command line and the docs. The old names are spelt only where
stored data under them is read knowingly (the ``compat`` modules) and in the migrations.

The numerical core keeps ``n_bootstrap``/``n_samples`` as the names of its functions'
parameters (internal; the docs describe them there): the app may pass them as keywords and read
them from the core's results, but never names a setting, a field, a variable or a key so."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

OLD = re.compile(
    r"\b(bootstrap_samples|ranking_bootstrap|trueskill_bootstrap|boot_samples|ar_shuffles"
    r"|paired_bs_n|n_boot)\b|--(boot-samples|ar-shuffles|trueskill-bootstrap)\b"
)
CORE_NAME = re.compile(r"\bn_bootstrap\b")
APP = ("evalsite", "annotation", "metrics")
COMPAT = {
    "annotation/analysis/compat.py",
    "metrics/compat.py",
    # The tests of what the compat modules and the migration read.
    "tests/annotation/analysis/test_campaign_setting.py",
    "tests/annotation/analysis/test_results.py",
    "tests/evalsite/db/test_seed_migration.py",
    "tests/metrics/test_one_seed_per_campaign.py",
    "tests/test_resampling_names.py",
}
# The command's aliases are sacreBLEU's flag names (e.g. --paired-bs-n), allowed as flags.


def scanned(folders: tuple[str, ...], suffixes: tuple[str, ...]) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            relative = str(path.relative_to(ROOT))
            if (
                path.suffix in suffixes
                and "migrations" not in path.parts
                and "__pycache__" not in path.parts
                and relative not in COMPAT
            ):
                yield path


def texts() -> Iterator[Path]:
    yield from scanned((*APP, "evalcore", "benchmarks", "tests"), (".py",))
    yield from scanned(("templates", "static"), (".html", ".js", ".txt"))
    yield ROOT / "README.md"
    for path in sorted((ROOT / "docs").glob("*.md")):
        if path.name != "benchmarks-history.md":  # a record of what was measured then
            yield path


def test_the_old_names_of_the_seed_and_the_counts_are_gone() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group()}"
        for path in texts()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        for match in OLD.finditer(line)
    ]
    assert not found, "old names (use resamples, trueskill_runs, ar_trials):\n" + "\n".join(found)


def core_names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Where the app names something ``n_bootstrap`` itself: a name, an argument, a string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "n_bootstrap":
            yield node.lineno, "a name"
        elif isinstance(node, ast.arg) and node.arg == "n_bootstrap":
            yield node.lineno, "an argument"
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and CORE_NAME.search(node.value)
        ):
            yield node.lineno, "a string"


def test_the_app_passes_the_cores_n_bootstrap_but_names_nothing_so() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in scanned(APP, (".py",))
        for line, what in core_names(ast.parse(path.read_text()))
    ]
    found += [
        f"{path.relative_to(ROOT)}: n_bootstrap"
        for path in scanned(("templates", "static"), (".html", ".js", ".txt"))
        if CORE_NAME.search(path.read_text())
    ]
    assert not found, "n_bootstrap named in the app (use resamples):\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for() -> None:
    assert OLD.search("ms.bootstrap_samples")
    assert OLD.search("evaluate --boot-samples 10")
    assert not OLD.search("n_bootstrap=settings.resamples")
    assert not OLD.search("evaluate --paired-bs-n 10")
    assert not OLD.search("def _bootstrap_samples(")
    code = "n_bootstrap = 1\ndef f(n_bootstrap): pass\nx = {'n_bootstrap': 1}\ng(n_bootstrap=2)"
    assert [what for _, what in core_names(ast.parse(code))] == [
        "a name",
        "an argument",
        "a string",
    ]
