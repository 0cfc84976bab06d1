"""The submit cost benchmark (benchmarks/submit_cost.py) on a tiny run, so it keeps working:
requests handed to Django's handler in-process, CPU per kind printed, the load benchmark's
database checks passed. It drops and creates a database of its own beside the test database.
No timing is asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from benchmarks.dashboard import drop_database

ROOT = Path(__file__).resolve().parents[2]


def test_a_tiny_run_prints_the_cost_of_each_kind(test_database_url: str, redis_url: str) -> None:
    parts = urlsplit(test_database_url)
    name = f"{parts.path.lstrip('/')}_cost"
    url = urlunsplit(parts._replace(path=f"/{name}"))
    try:
        done = subprocess.run(
            [
                sys.executable,
                "benchmarks/submit_cost.py",
                "--annotators=2",
                "--items=6",
                "--task-size=4",
                "--reference-requests=20",
                f"--database-url={url}",
                f"--redis-url={redis_url}",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        drop_database(url)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"reference /healthz: +\d+ µs of web CPU per request", out), out
    # 2 annotators x 6 fresh answers; repeats and stale submits at the default shares.
    assert re.search(
        r"new answer +\d+ µs of web CPU per request \(\d+\.\d+ × /healthz, n=12\)", out
    )
    assert re.search(r"every kind +\d+ µs of web CPU per request .*PostgreSQL \d+ µs", out), out
    assert "checked: 12 judgments, every acknowledged one stored once" in out, out
