"""Conventions shared by the Celery tasks of every app (``docs/background.md``): what an
unreachable broker raises, which database errors are retried and how, a failed task's reason in
words for the page that shows it, the heartbeat of a running job, and when a job record (an
analysis, a task build, a judgment import) whose worker died is taken for dead."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings
from django.core.cache import cache
from django.db import InterfaceError, OperationalError, connection, connections
from django.db.models import Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

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


def registered_task(name: str) -> Task:
    """The Celery task registered under ``name``, for a service that sends a task whose module
    imports the service (``annotation.tasks``, ``metrics.tasks``): each app imports its tasks
    module when Django starts (``AppConfig.ready``), so every process that runs a service has
    them registered, and the same task object answers as an import of it would."""
    from evalsite.celery import app

    return app.tasks[name]


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


def failure_record(
    exc: BaseException,
    args: Any,
    kwargs: Any,
    *,
    key: str,
    subject: str,
    max_retries: int | None,
    fail: Callable[[Any, str], Any],
) -> None:
    """A task's ``on_failure``: mark the record it worked on (its first argument, or the
    keyword ``key``) failed through ``fail(record_id, message)``, the message being ``subject``
    and the reason, so that a record never stays "running" for ever."""
    args = list(args or ())
    record_id = args[0] if args else (kwargs or {}).get(key)
    if record_id is None:
        return
    message = f"{subject} {failure_reason(exc, max_retries)}"
    try:
        fail(record_id, message)
    except Exception:  # the database itself may be what failed; the record goes stale then
        logger.exception("could not mark %s=%s failed (%s)", key, record_id, message)


# A running job whose heartbeat is older than this many beats is taken for dead.
HEARTBEATS_MISSED = 4


def heartbeats_kept() -> bool:
    """Whether running jobs keep a heartbeat: on PostgreSQL. SQLite (the embedded default)
    writes one transaction at a time, so a beat would wait for the job's own transaction."""
    return connection.vendor == "postgresql"


def heartbeat_limit() -> timedelta:
    """How old a running job's heartbeat may be before the job is taken for dead."""
    return timedelta(seconds=HEARTBEATS_MISSED * settings.EVALSITE_JOB_HEARTBEAT_SECONDS)


@contextmanager
def heartbeat(record: QuerySet[Any]) -> Iterator[None]:
    """Move ``progressed`` of ``record`` (one job, filtered by its running status too) every
    ``EVALSITE_JOB_HEARTBEAT_SECONDS`` while the block runs, from a thread with a database
    connection of its own: its updates commit outside the job's transaction and go on during
    one long stage. Wrap the job's transaction in it, never the other way round (the job's last
    update locks the row until it commits, and a beat waiting for that lock would never end)."""
    if not heartbeats_kept():
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.EVALSITE_JOB_HEARTBEAT_SECONDS):
                try:
                    record.update(progressed=timezone.now())
                except Exception:  # a job does not fail for want of a heartbeat
                    logger.warning("heartbeat of %s not written", record.query, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=beat, name="job-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def record_lock(record: QuerySet[Any], *, key: str) -> None:
    """Hold the lock named ``key`` (a job's) until the transaction ends, without locking the
    job's row, which the job's heartbeat updates meanwhile: a second delivery of the job waits
    here for the first one to end. (SQLite's transactions already run one at a time.)"""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
    else:
        list(record.select_for_update().values_list("pk"))


def stale_abandon(
    records: QuerySet[Any],
    *,
    under_way: Collection[str],
    failed: str,
    what: str,
    beating: str | None = None,
    stopped: Callable[[Any], str] | None = None,
) -> int:
    """Mark the queued or running (``under_way``) ``records`` that have not moved for
    ``EVALSITE_JOB_STALE_SECONDS`` as ``failed`` ("abandoned"); the number marked. The records
    have ``status``, ``progressed``, ``error`` and ``finished`` fields. Records in the status
    ``beating`` keep a :func:`heartbeat`: one of them whose heartbeat is older than
    :func:`heartbeat_limit` is failed too, with the message ``stopped(record_id)``."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.EVALSITE_JOB_STALE_SECONDS)
    dead = Q(status__in=under_way, progressed__lt=cutoff)
    beats = beating is not None and stopped is not None and heartbeats_kept()
    if beats:
        dead |= Q(status=beating, progressed__lt=now - heartbeat_limit())
    marked = 0
    for record_id, status, progressed in records.filter(dead).values_list(
        "pk", "status", "progressed"
    ):
        since = timezone.localtime(progressed).strftime("%Y-%m-%d %H:%M:%S %Z")
        if beats and status == beating and stopped is not None:
            error = stopped(record_id)
        else:
            error = f"abandoned: no progress since {since}"
        # Conditional on the moment seen: a record that moved meanwhile is alive after all.
        marked += records.model.objects.filter(
            pk=record_id, status__in=under_way, progressed=progressed
        ).update(status=failed, error=error[:4000], finished=now)
        logger.warning("%s %s abandoned: no progress since %s", what, record_id, since)
    return marked


class RecordTask(Task):  # type: ignore[misc]
    """A task that works on one record (a task build, a judgment import) and marks it failed
    with a readable message when it fails for good — an error that is not retried, retries used
    up, the soft or the hard time limit — so that it never stays "running" for ever. (Celery
    calls ``on_failure`` in the pool process for an exception, and in the worker's main process
    when the hard time limit killed the pool process.) Subclasses name the record's argument
    (``record_key``), the message's subject and ``fail(record_id, message)``."""

    record_key = "record_id"
    subject = "The task"

    @staticmethod
    def fail(record_id: Any, message: str) -> Any:
        raise NotImplementedError

    def on_failure(  # type: ignore[no-untyped-def]
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        failure_record(
            exc,
            args,
            kwargs,
            key=self.record_key,
            subject=self.subject,
            max_retries=self.max_retries,
            fail=self.fail,
        )


def progress_put(key: str, progress: dict[str, Any]) -> None:
    """Write a running job's progress where its page reads it while the job's transaction hides
    everything else (the cache: Redis, or files for the embedded default). Never raises: a job
    does not fail for want of a progress bar."""
    try:
        cache.set(key, progress, timeout=settings.EVALSITE_JOB_STALE_SECONDS)
    except BROKER_ERRORS as exc:
        logger.debug("no progress at %s: %s", key, exc)


def progress_forget(key: str) -> None:
    """Remove a job's progress once it has ended (never raises)."""
    try:
        cache.delete(key)
    except BROKER_ERRORS as exc:
        logger.debug("progress at %s not removed: %s", key, exc)
