"""Drop the own indexes of the analysis tables' foreign keys that a longer index starts with
(the job's unique indexes of chunks, segment scores and results; the results' and jobs' indexes
by campaign): each cost every stored chunk, score row and result an index entry. See
``evalsite/db/indexes.py`` for why only the indexes are dropped."""

import django.db.models.deletion
from django.db import migrations, models

from evalsite.db.indexes import prefix_index_drops

# (model, column) whose own index goes.
drop_indexes, create_indexes = prefix_index_drops(
    "metrics",
    [
        ("analysisjob", "campaign_id"),
        ("analysisresult", "campaign_id"),
        ("analysisresult", "job_id"),
        ("segmentscores", "job_id"),
        ("statschunk", "job_id"),
    ],
)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_foreign_key_indexes_without_prefix_duplicates"),
        ("metrics", "0004_job_progressed"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="analysisjob",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="analysis_jobs",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="analysisresult",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="results",
                        to="annotation.campaign",
                    ),
                ),
                migrations.AlterField(
                    model_name="analysisresult",
                    name="job",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="results",
                        to="metrics.analysisjob",
                    ),
                ),
                migrations.AlterField(
                    model_name="segmentscores",
                    name="job",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="segment_scores",
                        to="metrics.analysisjob",
                    ),
                ),
                migrations.AlterField(
                    model_name="statschunk",
                    name="job",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="chunks",
                        to="metrics.analysisjob",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop_indexes, create_indexes)],
        ),
    ]
