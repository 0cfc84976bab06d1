"""Drop the own indexes of the foreign keys that a unique index starts with: the campaign,
document, segment, system, run, config, task, item and judgment columns of the tables below,
each the first column of a unique (…, position), (…, name) or similar index that serves the
same lookups. Each cost every insert at build, upload and import time an index entry, and the
assignment's task index one on every submit (the submit's update changes indexed columns, so
it is not a HOT update and every index of the row gets a new entry). See
``evalsite/db/indexes.py`` for why only the indexes are dropped."""

import django.db.models.deletion
from django.db import migrations, models

from evalsite.db.indexes import prefix_index_drops

# (model, column) whose own index goes.
drop_indexes, create_indexes = prefix_index_drops(
    "annotation",
    [
        ("annotatordecision", "campaign_id"),
        ("annotatorpseudonym", "campaign_id"),
        ("assignment", "task_id"),
        ("document", "campaign_id"),
        ("item", "task_id"),
        ("itemoutput", "item_id"),
        ("judgmentrevision", "judgment_id"),
        ("protocolconfig", "campaign_id"),
        ("reference", "segment_id"),
        ("run", "system_id"),
        ("segment", "campaign_id"),
        ("segment", "document_id"),
        ("system", "campaign_id"),
        ("task", "config_id"),
        ("translation", "run_id"),
    ],
)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_judgment_indexes_without_prefix_duplicates"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="annotatordecision",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="annotator_decisions",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="annotatorpseudonym",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="annotator_pseudonyms",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="assignment",
                    name="task",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assignments",
                        to="annotation.task",
                    ),
                ),
                migrations.AlterField(
                    model_name="document",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="documents",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="item",
                    name="task",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="items",
                        to="annotation.task",
                    ),
                ),
                migrations.AlterField(
                    model_name="itemoutput",
                    name="item",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="outputs",
                        to="annotation.item",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentrevision",
                    name="judgment",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="revisions",
                        to="annotation.judgment",
                    ),
                ),
                migrations.AlterField(
                    model_name="protocolconfig",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="protocols",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="reference",
                    name="segment",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="references",
                        to="annotation.segment",
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="system",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="runs",
                        to="annotation.system",
                    ),
                ),
                migrations.AlterField(
                    model_name="segment",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="segments",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="segment",
                    name="document",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="segments",
                        to="annotation.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="system",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="systems",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="task",
                    name="config",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="tasks",
                        to="annotation.protocolconfig",
                    ),
                ),
                migrations.AlterField(
                    model_name="translation",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="translations",
                        to="annotation.run",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
        ),
    ]
