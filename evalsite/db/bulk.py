"""Bulk writes without a model instance per row: ids reserved ahead of the rows that use them, then
COPY on PostgreSQL or one prepared INSERT on SQLite."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from django.db import connection, models

from evalsite.db import features
from evalsite.db.rawsql import model_field


def reserve_ids(model: type[models.Model], n: int) -> list[int]:
    """``n`` new primary keys of ``model``, in increasing order, for rows this transaction
    inserts with :func:`insert_rows`. PostgreSQL draws them from the table's sequence, so that
    concurrent inserts elsewhere never collide; SQLite serialises writers (EvalSite opens its
    transactions IMMEDIATE), so the ids above the highest ever used stay ours until commit."""
    if n == 0:
        return []
    table = model._meta.db_table
    column = _column(model._meta.pk)
    quoted = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The sequence looked up once: pg_get_serial_sequence is not folded into a constant.
            cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [quoted(table), column])
            sequence = cursor.fetchone()[0]
            cursor.execute(
                "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [sequence, n]
            )
            return [row[0] for row in cursor.fetchall()]
        if connection.vendor != "sqlite":
            raise NotImplementedError(f"no id reservation for {connection.vendor}")
        cursor.execute(f"SELECT MAX({quoted(column)}) FROM {quoted(table)}")
        top = cursor.fetchone()[0] or 0
        # AUTOINCREMENT never reuses the ids of deleted rows; neither do we.
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        used = cursor.fetchone()
        top = max(top, used[0] if used else 0)
        return list(range(top + 1, top + n + 1))


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (values of ``fields``, foreign keys as ids) without a model instance
    per row: COPY on PostgreSQL, one prepared INSERT on SQLite. Every column the model has is
    given here or has a database-side value; the values are converted for the database as
    the model's fields convert them (JSON, date-times, UUIDs)."""
    meta = model._meta
    columns = [model_field(model, name) for name in fields]
    missing = [f.name for f in meta.concrete_fields if f not in columns and not f.primary_key]
    if missing:
        raise ValueError(f"{meta.label}: no value for {', '.join(missing)}")
    quoted = connection.ops.quote_name
    table = quoted(meta.db_table)
    names = ", ".join(quoted(_column(f)) for f in columns)
    postgresql = features.copies_binary()
    # psycopg adapts numbers, strings, date-times and UUIDs itself and COPY parses JSON from
    # its text; SQLite gets what the fields would give it.
    converters: list[tuple[int, Callable[[Any], Any]]] = []
    for index, f in enumerate(columns):
        # A foreign key's values are its target's (an assignment's UUID).
        kind = (f.target_field if f.is_relation else f).get_internal_type()  # type: ignore[attr-defined]
        if postgresql and kind == "JSONField":
            converters.append((index, partial(json.dumps, cls=f.encoder)))  # type: ignore[attr-defined]
        elif not postgresql and kind in ("DateTimeField", "UUIDField", "JSONField"):
            converters.append((index, partial(_db_value, f)))
    if converters:
        rows = (_converted(row, converters) for row in rows)
    with connection.cursor() as cursor:
        if postgresql:
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        placeholders = ", ".join(["%s"] * len(columns))
        # Rows stream from the iterable (sqlite3 takes any; the stubs ask for a sequence).
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", rows)  # type: ignore[arg-type]


def _column(field: models.Field[Any, Any] | None) -> str:
    """The database column of a concrete field."""
    if field is None or field.column is None:
        raise ValueError(f"{field} has no column")
    return field.column


def _db_value(field: models.Field[Any, Any], value: Any) -> Any:
    return None if value is None else field.get_db_prep_save(value, connection)


def _converted(row: Sequence[Any], converters: list[tuple[int, Callable[[Any], Any]]]) -> list[Any]:
    values = list(row)
    for index, convert in converters:
        values[index] = convert(values[index])
    return values
