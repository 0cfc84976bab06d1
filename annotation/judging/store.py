"""Storing a new answer: the assignment advanced by a conditional ``UPDATE`` and the judgment
with its values inserted, all or nothing — on PostgreSQL in one statement, which can also read
the next item's outputs.

``judging/services.py`` decides what to store; this writes it. The SQL is written once per
process (evalsite/db/rawsql.py says why).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field

from annotation.judging.screens import ContextOutput, ScreenRead, context_rows
from annotation.models import Assignment, Item, ItemOutput, Judgment, JudgmentSpan, JudgmentValue
from annotation.protocols.base import SpanRow
from evalsite.db import features
from evalsite.db.rawsql import hot_rows, model_column, model_field


def answer_insert(
    *,
    judgment: Judgment,
    rows: list[tuple[int, str, float]],
    items_done: int,
    update: dict[str, Any],
    next_position: int | None,
    show: ScreenRead | None = None,
    spans: Sequence[SpanRow] = (),
) -> tuple[bool, list[ContextOutput] | None]:
    """Store a new answer if its assignment still is at ``items_done`` and active or done:
    ``UPDATE`` the assignment with ``update`` (its shown item becomes the task's item at
    ``next_position`` when given), insert ``judgment`` (its pk set here), its values
    ``rows`` of (output id, criterion, value) and its error ``spans`` (rows of output id,
    start, end, length of the shown text, severity, category). False, with nothing written,
    when the assignment has moved on: another submit won the race, or the hold ended.

    On PostgreSQL this is one statement (data-modifying ``WITH``), atomic by itself: one round
    trip instead of BEGIN, three statements and COMMIT. With ``show`` (the next item's
    ``screen_read``) the same statement also reads the next item's outputs, returned beside
    the flag (its snapshot is from before the write, which changes nothing they show). Elsewhere
    (SQLite, which has no data-modifying ``WITH``) the same three statements run in a
    transaction and the outputs are None: the caller reads them."""
    db = transaction.get_connection()
    advance, params = _advance_sql(
        db=db,
        assignment_id=judgment.assignment_id,
        annotator_id=judgment.annotator_id,
        items_done=items_done,
        update=update,
        task_id=judgment.item.task_id,
        next_position=next_position,
    )
    if not features.writes_in_one_statement(db):
        return _answer_insert_steps(db, advance, params, judgment, rows, spans), None
    sql, fields = _answer_sql(advance, len(rows), db.alias, len(spans))
    params += [f.get_db_prep_save(f.pre_save(judgment, True), db) for f in fields]
    for row in rows:
        params += row
    for span in spans:
        params += span
    pk = model_field(Judgment, "id").column
    if show is None:
        sql += f'SELECT stored."{pk}" FROM stored'
    else:
        # Ordered by the output's position: its column in ``SELECT stored.id, shown.*``.
        order = 2 + [f.attname for f in ItemOutput._meta.concrete_fields].index("position")
        sql += (
            f'SELECT stored."{pk}", shown.* FROM stored LEFT JOIN ({show.sql}) shown ON TRUE '
            f"ORDER BY {order}"
        )
        params += show.params
    found = hot_rows(db, sql, params)
    if not found:
        return False, None
    judgment.pk = found[0][0]
    judgment._state.adding = False
    judgment._state.db = db.alias
    if show is None or found[0][1] is None:
        return True, None
    return True, context_rows([row[1:] for row in found], show.near, db)


def _answer_insert_steps(
    db: BaseDatabaseWrapper,
    advance: str,
    params: list[Any],
    judgment: Judgment,
    rows: list[tuple[int, str, float]],
    spans: Sequence[SpanRow],
) -> bool:
    """``answer_insert`` where one statement cannot write it all (SQLite): the three
    statements in a transaction."""
    with transaction.atomic(using=db.alias):
        with db.cursor() as cursor:
            cursor.execute(advance, params)
            if not cursor.rowcount:
                return False
        judgment.save(force_insert=True, using=db.alias)
        JudgmentValue.objects.using(db.alias).bulk_create(
            [
                JudgmentValue(judgment=judgment, output_id=o, criterion=c, value=v)
                for o, c, v in rows
            ]
        )
        JudgmentSpan.objects.using(db.alias).bulk_create(span_instances(judgment.pk, spans))
    return True


def span_instances(judgment_id: int, spans: Sequence[SpanRow]) -> list[JudgmentSpan]:
    """The error spans of a judgment, from their rows, unsaved."""
    return [
        JudgmentSpan(
            judgment_id=judgment_id,
            output_id=o,
            start=start,
            end=end,
            text_length=length,
            severity=severity,
            category=category,
        )
        for o, start, end, length, severity, category in spans
    ]


@cache
def _answer_sql(
    advance: str, n_values: int, alias: str, n_spans: int = 0
) -> tuple[str, list[Field[Any, Any]]]:
    """``answer_insert``'s statement on PostgreSQL around the ``advance`` UPDATE, for a
    judgment of ``n_values`` values (and ``n_spans`` error spans), up to its final SELECT (of
    ``stored``, the new judgment's id); and the judgment's fields in the order of its
    parameters.
    Every parameter is cast to its column's type (server-side binding sends NULLs untyped)."""
    db = connections[alias]
    fields = [f for f in Judgment._meta.concrete_fields if not f.primary_key]
    pk = model_column(Judgment, "id")
    value_columns = [
        model_field(JudgmentValue, n) for n in ("judgment", "output", "criterion", "value")
    ]
    row = "(" + ", ".join(f"%s::{f.db_type(db)}" for f in value_columns[1:]) + ")"
    values_table = JudgmentValue._meta.db_table
    sql = f"""
        WITH advanced AS ({advance} RETURNING 1),
        stored AS (
            INSERT INTO "{Judgment._meta.db_table}" ({_quoted(fields)})
            SELECT {", ".join(f"%s::{f.db_type(db)}" for f in fields)} FROM advanced
            RETURNING "{pk}"
        ),
        answered AS (
            INSERT INTO "{values_table}" ({_quoted(value_columns)})
            SELECT stored."{pk}", v.o, v.c, v.x
            FROM stored CROSS JOIN (VALUES {", ".join(row for _r in range(n_values))})
                AS v (o, c, x)
        ){_spans_sql(db, pk, n_spans)}
    """
    return sql, fields


def _spans_sql(db: BaseDatabaseWrapper, pk: str, n_spans: int) -> str:
    """The part of ``_answer_sql`` that inserts the error spans (nothing without spans)."""
    if not n_spans:
        return ""
    # A span row's fields in order (``SpanRow``), after the statement's new judgment.
    names = ("judgment", "output", "start", "end", "text_length", "severity", "category")
    columns = [model_field(JudgmentSpan, n) for n in names]
    row = "(" + ", ".join(f"%s::{f.db_type(db)}" for f in columns[1:]) + ")"
    return f""",
        marked AS (
            INSERT INTO "{JudgmentSpan._meta.db_table}" ({_quoted(columns)})
            SELECT stored."{pk}", sp.o, sp.s, sp.e, sp.l, sp.sev, sp.cat
            FROM stored CROSS JOIN (VALUES {", ".join(row for _r in range(n_spans))})
                AS sp (o, s, e, l, sev, cat)
        )"""


def _quoted(fields: Iterable[Field[Any, Any]]) -> str:
    return ", ".join(f'"{f.column}"' for f in fields)


def _advance_sql(
    *,
    db: BaseDatabaseWrapper,
    assignment_id: uuid.UUID | str,
    annotator_id: int,
    items_done: int,
    update: dict[str, Any],
    task_id: int,
    next_position: int | None,
) -> tuple[str, list[Any]]:
    """The conditional ``UPDATE`` of a new answer (see ``answer_insert``) and its
    parameters."""
    params: list[Any] = [
        model_field(Assignment, name).get_db_prep_save(value, db) for name, value in update.items()
    ]
    if next_position is not None:
        params += [task_id, next_position]
    params += [
        model_field(Assignment, "id").get_db_prep_value(assignment_id, db),
        annotator_id,
        items_done,
        str(Assignment.Status.ACTIVE),
        str(Assignment.Status.DONE),
    ]
    return _advance_text(tuple(update), next_position is not None), params


@cache
def _advance_text(names: tuple[str, ...], shows_next: bool) -> str:
    """The SQL of ``_advance_sql`` for these assignment fields (and the next shown item), as the
    ORM's ``update()`` would write it (its query building cost more CPU than the rest of the
    submit's write)."""
    columns = [f'"{model_field(Assignment, name).column}" = %s' for name in names]
    if shows_next:
        columns.append(
            f'"{model_field(Assignment, "shown_item").column}" = (SELECT "id" FROM '
            f'"{Item._meta.db_table}" WHERE "task_id" = %s AND "position" = %s)'
        )
    return (
        f'UPDATE "{Assignment._meta.db_table}" SET {", ".join(columns)} '
        'WHERE "id" = %s AND "annotator_id" = %s AND "items_done" = %s AND "status" IN (%s, %s)'
    )
