"""Threads with a database connection of their own: callables run at the same moment, and rows
held locked while a process meets them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from django.db import connections, transaction
from django.db.models import QuerySet


def run_together(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Start every job at the same moment in its own thread (own connection); results or
    exceptions in order."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def worker(i: int, job: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[i] = job()
        except Exception as exc:
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def started(job: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run ``job`` in a thread of its own (own connection, closed after) and return the running
    thread and the list its result lands in once it ends."""
    ended: list[Any] = []

    def work() -> None:
        try:
            ended.append(job())
        finally:
            connections.close_all()

    thread = threading.Thread(target=work)
    thread.start()
    return thread, ended


@contextmanager
def held_in_a_transaction(take: Callable[[], Any]) -> Iterator[None]:
    """Run ``take`` (it locks or writes rows) in a transaction of another thread and keep that
    transaction open for as long as the block lasts; then roll it back. Another process that
    meets those rows waits there, however fast it got there."""
    holding, release = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                take()
                holding.set()
                release.wait(300)
                transaction.set_rollback(True)
        except BaseException as exc:
            failure.append(exc)
            holding.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(30), "the rows were not held within 30 s"
    assert not failure, failure
    try:
        yield
    finally:
        release.set()
        thread.join(30)


def rows_locked(rows: QuerySet[Any]) -> AbstractContextManager[None]:
    """Hold ``SELECT … FOR UPDATE`` on ``rows`` in another thread's transaction for as long as
    the block lasts: a process that inserts a row referring to one of them waits at the
    insert's foreign-key check (``FOR KEY SHARE``)."""

    def lock() -> None:
        assert list(rows.select_for_update(of=("self",))), "no rows to hold"

    return held_in_a_transaction(lock)
