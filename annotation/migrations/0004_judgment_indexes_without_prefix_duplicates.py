"""Drop the single-column indexes of Judgment.annotator and JudgmentValue.judgment: the unique
indexes (annotator, item) and (judgment, output, criterion) start with those columns and serve
the same lookups, while each extra index cost every submit an insert.

Only the indexes are dropped (found by introspection, whatever their names): Django's own
AlterField would also drop and re-add the foreign keys, and re-adding one checks every row
under a lock that blocks writes, which on a large campaign's tables takes a while."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# (model, column) whose own index goes.
PREFIX_INDEXES = [("judgment", "annotator_id"), ("judgmentvalue", "judgment_id")]


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


def drop_indexes(apps: Any, schema_editor: Any) -> None:
    for model_name, column in PREFIX_INDEXES:
        model = apps.get_model("annotation", model_name)
        for name in _single_column_indexes(schema_editor, model._meta.db_table, column):
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def create_indexes(apps: Any, schema_editor: Any) -> None:
    for model_name, column in PREFIX_INDEXES:
        model = apps.get_model("annotation", model_name)
        if not _single_column_indexes(schema_editor, model._meta.db_table, column):
            field = next(f for f in model._meta.concrete_fields if f.column == column)
            schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_judgment_import_and_pseudonyms"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="judgment",
                    name="annotator",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judgments",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentvalue",
                    name="judgment",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="values",
                        to="annotation.judgment",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
        ),
    ]
