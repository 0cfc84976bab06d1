"""``manage.py serve``: the web server and a Celery worker, started and stopped together.

This is what ``make run`` uses for the embedded default: with no ``CELERY_BROKER_URL`` the worker
reads a file-system queue under ``var/``, so no Redis or other server is needed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

# How long the worker may take to finish its current task after SIGTERM (a warm shutdown) before
# it is killed; with acks_late a killed task is delivered again on Redis.
WORKER_GRACE_SECONDS = 20


class Command(BaseCommand):
    help = "Run the development web server together with a background Celery worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")

    def handle(self, *args: Any, addrport: str, concurrency: int, **options: Any) -> None:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "evalsite",
                "worker",
                "--loglevel=INFO",
                f"--concurrency={concurrency}",
            ],
            # Its own process group, so that stopping it reaches its pool processes too.
            start_new_session=True,
        )
        self.stdout.write(f"Background worker started (pid {worker.pid}).")

        def stop(signum: int, frame: Any) -> None:
            # Python's default SIGTERM handling skips ``finally``; exit properly instead so the
            # worker is stopped with the server.
            raise SystemExit(0)

        signal.signal(signal.SIGTERM, stop)
        try:
            # No autoreload: the reloader would re-run this command and start a second worker.
            call_command("runserver", addrport, use_reloader=False)
        finally:
            # The worker's main process stops its pool itself (a warm shutdown); a SIGTERM to
            # the whole group would kill the pool under it, logged as errors at every stop.
            worker.terminate()
            try:
                worker.wait(timeout=WORKER_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            # Whatever of its group is left (a pool process of a killed worker) goes with it.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
