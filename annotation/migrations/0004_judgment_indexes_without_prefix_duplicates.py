"""Drop the single-column indexes of Judgment.annotator and JudgmentValue.judgment: the unique
indexes (annotator, item) and (judgment, output, criterion) start with those columns and serve
the same lookups, while each extra index cost every submit an insert.

Only the indexes are dropped (found by introspection, whatever their names): Django's own
AlterField would also drop and re-add the foreign keys, and re-adding one checks every row
under a lock that blocks writes, which on a large campaign's tables takes a while."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from evalsite.db.indexes import prefix_index_drops

# (model, column) whose own index goes.
drop_indexes, create_indexes = prefix_index_drops(
    "annotation", [("judgment", "annotator_id"), ("judgmentvalue", "judgment_id")]
)


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
