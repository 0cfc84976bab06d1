import django.utils.timezone
from django.db import migrations, models
from django.db.models.functions import Coalesce


def from_timestamps(apps, schema_editor):  # type: ignore[no-untyped-def]
    # Existing jobs last moved when they finished, started or were created.
    job = apps.get_model("metrics", "AnalysisJob")
    job.objects.update(progressed=Coalesce("finished", "started", "created"))


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0003_segment_scores"),
    ]

    operations = [
        migrations.AddField(
            model_name="analysisjob",
            name="progressed",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunPython(from_timestamps, migrations.RunPython.noop),
    ]
