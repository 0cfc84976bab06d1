"""The PostgreSQL backend's health check (evalsite/db/postgresql): a persistent connection that
is idle passes without a round trip; one the server has ended fails, is closed, and the next
query connects afresh."""

from __future__ import annotations

import tempfile
import time

import pytest
from django.db import connection, connections
from django.db.backends.postgresql import base

pytestmark = pytest.mark.django_db(transaction=True)


def traced(db, check):  # type: ignore[no-untyped-def]
    with tempfile.TemporaryFile() as trace:
        db.connection.pgconn.trace(trace.fileno())
        try:
            result = check()
        finally:
            db.connection.pgconn.untrace()
        trace.seek(0)
        return result, trace.read()


def backend_pid(db) -> int:  # type: ignore[no-untyped-def]
    with db.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def test_an_idle_connection_passes_without_a_round_trip_and_an_ended_one_is_replaced() -> None:
    assert connection.vendor == "postgresql"
    assert type(connections["default"]).__module__ == "evalsite.db.postgresql.base"
    other = connection.copy()
    try:
        first = backend_pid(other)
        # libpq's protocol trace of the check: nothing sent, nothing received; Django's own
        # check (the control) sends SELECT 1 and reads its answer.
        assert traced(other, other.is_usable) == (True, b"")
        usable, messages = traced(other, lambda: base.DatabaseWrapper.is_usable(other))
        assert usable is True
        assert b"SELECT 1" in messages
        # The server ends the connection (as a restart or an administrator would).
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [first])
        deadline = time.monotonic() + 5
        while other.is_usable():
            assert time.monotonic() < deadline, "the ended connection still looks usable"
            time.sleep(0.05)
        # As at the start of a request: the failed check closes it, the next query reconnects.
        other.health_check_enabled = True
        other.health_check_done = False
        other.close_if_health_check_failed()
        assert other.connection is None
        assert backend_pid(other) != first
    finally:
        other.close()


def test_a_healthy_connection_that_received_a_message_gets_the_real_test() -> None:
    other = connection.copy()
    try:
        backend_pid(other)
        # A notification arrives on the idle connection: readable, yet alive.
        with other.cursor() as cursor:
            cursor.execute("LISTEN evalsite_health_check")
        with connection.cursor() as cursor:
            cursor.execute("NOTIFY evalsite_health_check")
        time.sleep(0.2)
        assert other.is_usable() is True
        assert backend_pid(other) > 0
    finally:
        other.close()
