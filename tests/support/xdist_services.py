"""Each pytest-xdist worker gets a Redis database of its own, as pytest-django gives it a test
database of its own (``test_<name>_gw0``, …): the suite's Redis database is flushed when a
session starts and holds the Celery queues of the workers the tests start, which two test
processes must not share. Worker ``gwN`` takes the database ``N`` below the configured one (15,
14, … with ``make test``'s 15), never database 0."""

from __future__ import annotations

import os
import re
from typing import Any


def worker_broker_url(url: str, worker: str) -> str:
    """The broker URL of the xdist worker ``worker`` (``gw0``, …; ``""`` outside xdist)."""
    match = re.fullmatch(r"(redis://[^/]+)/(\d+)", url)
    if not worker.startswith("gw") or match is None:
        return url
    database = int(match.group(2)) - int(worker[2:])
    if database < 1:
        raise RuntimeError(
            f"test worker {worker} would use Redis database {database} below {url}: "
            "configure a higher database number or run fewer workers"
        )
    return f"{match.group(1)}/{database}"


def redis_database_per_worker(settings: Any) -> None:
    """Point this test process (Django's cache, the Celery app) and the processes it starts (by
    the environment) at its worker's Redis database. Called before any test connects."""
    old = settings.CELERY_BROKER_URL
    new = worker_broker_url(old, os.environ.get("PYTEST_XDIST_WORKER", ""))
    if new == old:
        return
    from evalsite.celery import app

    os.environ["CELERY_BROKER_URL"] = new
    settings.CELERY_BROKER_URL = new
    app.conf.broker_url = new
    if old == settings.CELERY_RESULT_BACKEND:
        settings.CELERY_RESULT_BACKEND = new
        app.conf.result_backend = new
    if settings.CACHES["default"].get("LOCATION") == old:
        settings.CACHES = {
            **settings.CACHES,
            "default": {**settings.CACHES["default"], "LOCATION": new},
        }
