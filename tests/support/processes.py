"""Running settings and servers in child processes: the production environment, the settings a
fresh interpreter reads, child process ids."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, compose_file


def settings_in_subprocess(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    """Import the settings in a clean process with exactly ``env`` (plus PATH)."""
    return subprocess.run(
        [sys.executable, "-c", f"import evalsite.settings as s\n{code}"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def production_environment(**overrides: str) -> dict[str, str]:
    """What the compose file gives its app containers: `.env` (copied from `.env.example` with a
    generated SECRET_KEY, as the README says), then the compose `environment:` block, then the
    Dockerfile's ENV where `.env` leaves it unset; `overrides` stand for this machine's services
    and folders."""
    env: dict[str, str] = {"PATH": os.environ["PATH"]}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    assert env["SECRET_KEY"] == "", ".env.example must not ship a usable secret key"
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    env.update({k: str(v) for k, v in compose_file()["x-app"]["environment"].items()})
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("ENV "):
            for pair in line[4:].split():
                key, _, value = pair.partition("=")
                env.setdefault(key, value)
    env.update(overrides)
    return env


def child_pids(pid: int) -> list[int]:
    """The direct children of a process (Linux /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children]
