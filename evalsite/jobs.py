"""Conventions shared by the Celery tasks of every app (``docs/background.md``): what an
unreachable broker raises, which database errors are retried and how, and a failed task's
reason in words for the page that shows it."""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

# What an unreachable broker or cache raises: kombu's wrapper, redis-py's own errors (not
# subclasses of the builtin ConnectionError), and plain socket errors.
BROKER_ERRORS: tuple[type[BaseException], ...] = (
    BrokerError,
    RedisError,
    ConnectionError,
    OSError,
    TimeoutError,
)

# Transient database trouble (a restart, a dropped connection): retried with backoff.
TRANSIENT = (OperationalError, InterfaceError)

# Results live in the database, not in Celery's result store: ignoring them also keeps a web
# process from touching the result backend when it sends a task (which fails hard while Redis
# is down).
RETRY: dict[str, Any] = {
    "ignore_result": True,
    "autoretry_for": TRANSIENT,
    "retry_backoff": True,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 5,
}


def failure_reason(exc: BaseException, max_retries: int | None) -> str:
    """Why a task failed, in words for the dashboard."""
    if isinstance(exc, SoftTimeLimitExceeded):
        return "took too long (soft time limit)."
    if isinstance(exc, TimeLimitExceeded):
        limit = f" of {exc.args[0]} s" if exc.args else ""
        return f"was stopped at the hard time limit{limit}."
    if isinstance(exc, TRANSIENT):
        return (
            f"failed: the database was unreachable after {max_retries} retries "
            f"({type(exc).__name__}: {exc})."
        )
    return f"failed: {type(exc).__name__}: {exc}"
