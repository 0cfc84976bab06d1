"""What the database in use can do, asked by capability: the one place that knows which
database offers what, so that domain modules choose a path by what they need, never by vendor.

PostgreSQL (production and the tests) has all of these; the embedded default, SQLite, none: its
paths are the plainer ones the domain modules keep beside the fast ones.
"""

from __future__ import annotations

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper


def _postgresql(db: BaseDatabaseWrapper | None) -> bool:
    return (db or connection).vendor == "postgresql"


def writes_in_one_statement(db: BaseDatabaseWrapper | None = None) -> bool:
    """Data-modifying ``WITH`` … ``RETURNING``: several tables written and read back in one
    statement, atomic by itself (one round trip for a submit or an expiry)."""
    return _postgresql(db)


def joins_lateral(db: BaseDatabaseWrapper | None = None) -> bool:
    """``LEFT JOIN LATERAL``: a subquery per row of the outer query (the neighbouring
    segments read with the shown outputs)."""
    return _postgresql(db)


def formats_text(db: BaseDatabaseWrapper | None = None) -> bool:
    """Times as ISO 8601 text (``to_char``), doubles as their shortest exact text and whole
    CSV/TSV lines built in SQL, so that a report formats fewer values in Python."""
    return _postgresql(db)


def snapshot_reads(db: BaseDatabaseWrapper | None = None) -> bool:
    """``REPEATABLE READ`` transactions and a per-transaction ``work_mem``: several queries of
    one report see the same rows and sort in memory."""
    return _postgresql(db)


def ordered_set_aggregates(db: BaseDatabaseWrapper | None = None) -> bool:
    """``percentile_cont(…) WITHIN GROUP`` with ``GROUP BY ROLLUP``: medians per group and
    overall in one query."""
    return _postgresql(db)


def copies_binary(db: BaseDatabaseWrapper | None = None) -> bool:
    """``COPY`` and ``string_agg`` over ``float8send``: columns cross as binary buffers, and
    rows are inserted by ``COPY`` (psycopg's)."""
    return _postgresql(db)
