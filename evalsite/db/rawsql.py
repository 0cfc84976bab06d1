"""Hot reads in SQL, their rows turned into model instances as the ORM would make them.

The SQL of a request on the annotation hot path (the token lookup, a submit's reads) is fixed,
while building it with the ORM (filters, select_related over several tables) cost more CPU than
the rest of the request. Such queries are written once per process; their rows become model
instances as select_related makes them: every concrete column, the database's converters
applied, related instances cached.

On PostgreSQL they also run on a cursor with server-side binding (``hot_cursor``, ``hot_rows``),
so that each connection prepares them once (the settings' ``prepare_threshold``) instead of
planning their joins on every request. Every other query keeps Django's client-side binding,
which never prepares.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Field, ForeignObject, Model
from django.db.models.base import ModelState
from django.db.models.expressions import Col
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.signals import post_init, pre_init


class Columns:
    """The select list of every concrete column of a model under a table alias, and how to
    turn those values back into an instance."""

    def __init__(self, model: type[Model], alias: str):
        self.model = model
        self.fields: list[Field[Any, Any]] = list(model._meta.concrete_fields)
        self.attnames = [f.attname for f in self.fields]
        self.sql = ", ".join(f'{alias}."{f.column}"' for f in self.fields)
        self.plain = _plain(model)
        self._plans: WeakKeyDictionary[BaseDatabaseWrapper, list[tuple[int, Col, list[Any]]]] = (
            WeakKeyDictionary()
        )

    def __len__(self) -> int:
        return len(self.fields)

    def _plan(self, db: BaseDatabaseWrapper) -> list[tuple[int, Col, list[Any]]]:
        """``_conversions`` of the fields, kept per connection."""
        plan = self._plans.get(db)
        if plan is None:
            plan = self._plans[db] = _conversions(self.fields, db)
        return plan

    def instance(self, values: Sequence[Any], db: BaseDatabaseWrapper) -> Any:
        """The instance ``Model.from_db`` makes of a row of every concrete field. For a model
        with Django's own ``__init__``, plain attributes and no ``pre_init``/``post_init``
        receivers, the same instance is made directly: ``Model.__init__`` (a loop over the
        fields with two signals) was the largest single cost of turning rows into instances."""
        values = _converted_with(values, self._plan(db), db)
        model = self.model
        if (
            not self.plain
            # A signal with no receiver at all (the usual case) needs no look at its senders.
            or (pre_init.receivers and pre_init.has_listeners(model))
            or (post_init.receivers and post_init.has_listeners(model))
        ):
            # None: every concrete field, in order (as Django's own rows are).
            return model.from_db(db.alias, None, values)  # type: ignore[arg-type]
        new = model.__new__(model)
        state = new._state = ModelState()
        state.adding = False
        state.db = db.alias
        new.__dict__.update(zip(self.attnames, values, strict=True))
        return new


def _plain(model: type[Model]) -> bool:
    """Whether ``Model.__init__`` would do no more for this model than set each field's
    attribute: it does not override ``__init__``, and no field's attribute is a descriptor that
    acts on assignment (a foreign key's id only clears a related cache, empty here)."""
    if model.__init__ is not Model.__init__:
        return False
    for model_field in model._meta.concrete_fields:
        descriptor = inspect.getattr_static(model, model_field.attname, None)
        if hasattr(type(descriptor), "__set__") and not isinstance(
            descriptor, ForeignKeyDeferredAttribute
        ):
            return False
    return True


# Per connection (the converters are the backend's), per list of fields (keyed by their ids, as
# a field's own hash is computed in Python): the fields that have converters, with them.
_CONVERSIONS: WeakKeyDictionary[
    BaseDatabaseWrapper, dict[tuple[int, ...], list[tuple[int, Col, list[Any]]]]
] = WeakKeyDictionary()


def _conversions(
    fields: Sequence[Field[Any, Any]], db: BaseDatabaseWrapper
) -> list[tuple[int, Col, list[Any]]]:
    """(position, column, converters) of each of ``fields`` that the ORM converts on reading."""
    known = _CONVERSIONS.get(db)
    if known is None:
        known = _CONVERSIONS[db] = {}
    key = tuple(map(id, fields))
    plan = known.get(key)
    if plan is None:
        plan = []
        for position, field in enumerate(fields):
            col = field.get_col(field.model._meta.db_table)
            converters = db.ops.get_db_converters(col) + col.get_db_converters(db)
            if converters:
                plan.append((position, col, converters))
        known[key] = plan
    return plan


def converted(
    values: Sequence[Any], fields: Sequence[Field[Any, Any]], db: BaseDatabaseWrapper
) -> list[Any]:
    """Values as the database returned them for ``fields``, as the ORM would read them. Most
    columns have no converter (on PostgreSQL, all but JSON): only those that do are touched."""
    if len(values) != len(fields):
        raise ValueError(f"{len(values)} values for {len(fields)} fields")
    return _converted_with(values, _conversions(fields, db), db)


def _converted_with(
    values: Sequence[Any], plan: list[tuple[int, Col, list[Any]]], db: BaseDatabaseWrapper
) -> list[Any]:
    """``values`` with the converters of ``plan`` (``_conversions``) applied."""
    result = list(values)
    for position, col, converters in plan:
        value = result[position]
        for convert in converters:
            value = convert(value, col, db)
        result[position] = value
    return result


def model_field(model: type[Model], name: str) -> Field[Any, Any]:
    return model._meta.get_field(name)  # type: ignore[return-value]


def model_column(model: type[Model], name: str) -> str:
    """The column of the concrete field ``name`` of ``model`` (a TypeError if it has none)."""
    column = model_field(model, name).column
    if column is None:
        raise TypeError(f"{model.__name__}.{name} has no column")
    return column


def relation_field(model: type[Model], name: str) -> ForeignObject[Any, Any]:
    """The relation ``name`` of ``model`` (a TypeError if it is a plain column)."""
    field = model._meta.get_field(name)
    if not isinstance(field, ForeignObject):
        raise TypeError(f"{model.__name__}.{name} is not a relation")
    return field


def chain_rows(
    rows: Sequence[Sequence[Any]],
    columns: list[Columns],
    links: list[str],
    db: BaseDatabaseWrapper,
) -> list[tuple[Any, Sequence[Any]]]:
    """``chain`` of each row, where rows that select the same values after the first columns
    (the outputs of one item: the same item, task and config) share one instance of those: a
    row's instances were the larger part of reading it."""
    if not columns:
        return [((), row) for row in rows]
    head = len(columns[0])
    tail = head + sum(len(part) for part in columns[1:])
    result: list[tuple[Any, Sequence[Any]]] = []
    shared: tuple[Sequence[Any], Any] | None = None
    link = relation_field(columns[0].model, links[0]) if len(columns) > 1 else None
    for row in rows:
        if link is None or shared is None or row[head:tail] != shared[0]:
            first, rest = chain(row, columns, links, db)
            if link is not None:
                shared = (row[head:tail], link.get_cached_value(first))
            result.append((first, rest))
            continue
        first = columns[0].instance(row[:head], db)
        link.set_cached_value(first, shared[1])
        result.append((first, row[tail:]))
    return result


def chain(
    row: Sequence[Any], columns: list[Columns], links: list[str], db: BaseDatabaseWrapper
) -> tuple[Any, Sequence[Any]]:
    """The first instance of a row that selects ``columns`` one after the other, each of them
    cached as the ``links`` relation of the one before (as ``select_related("a__b__c")``
    does); and the rest of the row."""
    start = 0
    instances = []
    for part in columns:
        instances.append(part.instance(row[start : start + len(part)], db))
        start += len(part)
    for parent, child, name in zip(instances[:-1], instances[1:], links, strict=True):
        relation_field(type(parent), name).set_cached_value(parent, child)
    return instances[0], row[start:]


class _LoggedHotCursor(CursorDebugWrapper):
    """Logs a hot query as Django's server-side-binding mode does: the SQL with its parameters
    composed in (the client-side reading of it finds no query text on a prepared statement)."""

    @contextmanager
    def debug_sql(
        self,
        sql: str | None = None,
        params: Any = None,
        use_last_executed_query: bool = False,
        many: bool = False,
    ) -> Iterator[None]:
        if use_last_executed_query and sql is not None and not many:
            sql = self.db.ops.compose_sql(sql, params)
        with super().debug_sql(sql, params, use_last_executed_query=False, many=many):
            yield


@contextmanager
def hot_cursor(db: BaseDatabaseWrapper) -> Iterator[CursorWrapper]:
    """A cursor for fixed hot-path SQL: on PostgreSQL with server-side binding (the connection
    prepares a statement once it has run it ``prepare_threshold`` times), elsewhere the
    ordinary cursor. Wrapped as ``db.cursor()`` wraps its cursors (database errors, query
    logging), so tests count its queries as any other."""
    if db.vendor != "postgresql":
        with db.cursor() as cursor:
            yield cursor
        return
    connection = _checked_connection(db)
    with db.wrap_database_errors:
        raw = _server_binding_cursor(connection)
    wrapper = _LoggedHotCursor if db.queries_logged else CursorWrapper
    with wrapper(raw, db) as cursor:
        yield cursor


def _checked_connection(db: BaseDatabaseWrapper) -> Any:
    """The driver's connection, after the checks ``db.cursor()`` makes before it hands out a
    cursor: the thread, a failed health check (which reconnects), a connection opened."""
    db.validate_thread_sharing()
    db.close_if_health_check_failed()
    db.ensure_connection()
    return db.connection


def _server_binding_cursor(connection: Any) -> Any:
    from django.db.backends.postgresql.base import ServerBindingCursor

    return ServerBindingCursor(connection)  # type: ignore[call-arg]


def _numbering_cursor(connection: Any) -> Any:
    """A server-binding cursor that takes SQL with PostgreSQL's own ``$1, $2, …`` placeholders
    (``numbered``'s), which the driver sends as it is."""
    import psycopg

    return psycopg.RawCursor(connection)


_PLACEHOLDER = re.compile(r"%(.|$)", re.DOTALL)


@lru_cache(maxsize=1024)
def numbered(sql: str, encoding: str) -> bytes | None:
    """``sql`` with its ``%s`` placeholders numbered ``$1, $2, …`` in order and ``%%`` read as
    ``%``, encoded: the statement psycopg sends for it. psycopg works this out on every execute
    and keeps it only for statements of at most 50 parameters, and a submit's write (the
    judgment with its values, its error spans and the next item's read) has more: the split
    of such a statement cost more CPU than the rest of its execute. Worked out here once per
    text. None for SQL with any other use of ``%``, which then goes to the driver as usual."""
    count = 0
    unknown = False

    def number(match: re.Match[str]) -> str:
        nonlocal count, unknown
        if match.group(1) == "%":
            return "%"
        if match.group(1) != "s":
            unknown = True
            return match.group(0)
        count += 1
        return f"${count}"

    text = _PLACEHOLDER.sub(number, sql)
    return None if unknown else text.encode(encoding)


# Per connection: the raw connection, the server-binding cursor that ``hot_rows`` reuses on
# it and the one for numbered SQL, and the connection's encoding (a new raw connection, after
# a close or a failure, gets new cursors).
_HOT_CURSORS: WeakKeyDictionary[BaseDatabaseWrapper, tuple[Any, Any, Any, str]] = (
    WeakKeyDictionary()
)


def hot_rows(db: BaseDatabaseWrapper, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Every row of one fixed hot-path query, as ``hot_cursor`` runs it and with the same
    checks and error translation (the thread, a failed health check, a broken transaction,
    the driver's errors raised as Django's), but on PostgreSQL without Django's cursor wrapper
    around it and on one server-binding cursor kept per connection: the wrapper (a context
    manager, an attribute lookup and an error wrapper per call) and a new cursor per query
    cost about as much CPU as the driver's own execute and fetch. Whenever queries are logged
    (``DEBUG``, tests counting them) or an ``execute_wrapper`` is installed, the query goes
    through ``hot_cursor``, so both see it as any other."""
    if db.vendor != "postgresql" or db.queries_logged or db.execute_wrappers:
        with hot_cursor(db) as wrapped:
            wrapped.execute(sql, params)
            return wrapped.fetchall()
    raw = _checked_connection(db)
    db.validate_no_broken_transaction()
    kept = _HOT_CURSORS.get(db)
    if kept is None or kept[0] is not raw:
        kept = _HOT_CURSORS[db] = (
            raw,
            _server_binding_cursor(raw),
            _numbering_cursor(raw),
            raw.info.encoding,
        )
    query = numbered(sql, kept[3])
    cursor = kept[1] if query is None else kept[2]
    with db.wrap_database_errors:
        cursor.execute(sql if query is None else query, params)
        return cursor.fetchall()
