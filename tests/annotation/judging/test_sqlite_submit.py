"""The embedded default (SQLite) stores a new answer with three statements in a transaction,
where PostgreSQL uses one data-modifying WITH statement (annotation/judging/store.py
``answer_insert``), and runs the hot reads on its ordinary cursor. The judging and next-item
tests (error spans among them) run here once more, on a SQLite database, so both paths are
tested."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow  # a pytest run of its own
def test_the_submit_tests_pass_on_sqlite(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "EVALSITE_VAR_DIR": str(tmp_path / "var"),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/annotation/judging/test_judging.py",
            "tests/annotation/judging/test_submit_next_item.py",
            "tests/annotation/judging/test_span_judgments.py",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary, summary
    assert "failed" not in summary, summary
    assert "skipped" not in summary, summary
