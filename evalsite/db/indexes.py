"""Migration helpers: drop a foreign key's own index where a longer index starts with its column.

Django gives every foreign key an index of its own. Where a unique constraint or an index on
(that column, …) exists too, it serves the same lookups, and the single-column index only costs
every insert (and every update that is not HOT) one more index entry. The migrations that drop
them mark the fields ``db_index=False`` in the state only and run these functions on the
database: they drop just the index, found by introspection whatever its name, because Django's
own ``AlterField`` would also drop and re-add the foreign key, and re-adding one checks every row
under a lock that blocks writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

RunPythonCode = Callable[[Any, Any], None]


def _single_column_indexes(schema_editor: Any, table: str, column: str) -> list[str]:
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["index"]
        and not info["unique"]
        and not info["primary_key"]
        and info["columns"] == [column]
    ]


def prefix_index_drops(
    app_label: str, fields: Sequence[tuple[str, str]]
) -> tuple[RunPythonCode, RunPythonCode]:
    """``RunPython``'s forward and backward code for the (model name, column) pairs whose own
    index goes: forward drops it, backward creates it again."""

    def drop(apps: Any, schema_editor: Any) -> None:
        for model_name, column in fields:
            model = apps.get_model(app_label, model_name)
            for name in _single_column_indexes(schema_editor, model._meta.db_table, column):
                schema_editor.execute(schema_editor._delete_index_sql(model, name))

    def create(apps: Any, schema_editor: Any) -> None:
        for model_name, column in fields:
            model = apps.get_model(app_label, model_name)
            if not _single_column_indexes(schema_editor, model._meta.db_table, column):
                field = next(f for f in model._meta.concrete_fields if f.column == column)
                schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))

    return drop, create
