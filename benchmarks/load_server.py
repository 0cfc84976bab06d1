"""gunicorn for the load benchmark (``benchmarks/load.py``), started with the web command of
``docker-compose.yml`` and production settings, on a free loopback port."""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def interpolate(word: str, env: dict[str, str]) -> str:
    """Compose's variable interpolation of one word: ``${NAME}``, ``${NAME:-default}``,
    ``${NAME-default}`` and ``$NAME``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        operator, default = match.group(2), match.group(3) or ""
        current = env.get(name)
        if operator == ":-" and not current:
            return default
        if operator == "-" and current is None:
            return default
        return current or ""

    return re.sub(r"\$\{(\w+)(?:(:?-)([^}]*))?\}|\$(\w+)", value, word)


def web_command(*, port: int, workers: int, env: dict[str, str]) -> list[str]:
    """The compose file's web command, bound to ``127.0.0.1:port`` with ``workers`` processes:
    an explicit ``--workers``/``-w`` value is replaced, otherwise gunicorn reads
    ``WEB_CONCURRENCY`` from ``env`` (set here)."""
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    words = command.split() if isinstance(command, str) else [str(w) for w in command]
    env["WEB_CONCURRENCY"] = str(workers)
    words = [interpolate(w, env) for w in words]
    if words[:2] in (["sh", "-c"], ["/bin/sh", "-c"]):
        words = words[2:]
    out: list[str] = []
    skip = False
    for n, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in ("--workers", "-w"):
            out += [word, str(workers)]
            skip = True
        elif word.startswith("--workers="):
            out.append(f"--workers={workers}")
        elif word in ("--bind", "-b") and n + 1 < len(words):
            out += [word, f"127.0.0.1:{port}"]
            skip = True
        elif word.startswith("--bind="):
            out.append(f"--bind=127.0.0.1:{port}")
        else:
            out.append(word)
    if f"127.0.0.1:{port}" not in " ".join(out):
        raise SystemExit(f"no --bind in the compose web command: {command!r}")
    tool = Path(sys.executable).parent / out[0]
    return [str(tool) if tool.exists() else out[0], *out[1:]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def web_environment(
    *, database_url: str, redis_url: str, folder: Path, auto_analysis: bool = True
) -> dict[str, str]:
    """Production settings, as ``.env.example`` sets them, on this machine's services."""
    (folder / "static").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "EVALSITE_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "DEBUG": "0",
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_RESULT_BACKEND": redis_url,
        "CACHE_URL": redis_url,
        "EVALSITE_AUTO_ANALYSIS": "1" if auto_analysis else "0",
        "EVALSITE_VAR_DIR": str(folder / "var"),
        "STATIC_ROOT": str(folder / "static"),
        "LOG_LEVEL": "WARNING",
    }


def start_web(
    *, env: dict[str, str], workers: int, log: Path
) -> tuple[subprocess.Popen[bytes], str, list[str]]:
    """gunicorn started and answering /healthz; returns the process, its base URL, command."""
    port = free_port()
    command = web_command(port=port, workers=workers, env=env)
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return server, base, command
        except OSError:
            time.sleep(0.3)
    stop_web(server)
    raise SystemExit(f"gunicorn did not answer /healthz within 60 s:\n{log.read_text()}")


def stop_web(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
