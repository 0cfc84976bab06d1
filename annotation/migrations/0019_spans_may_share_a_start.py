# Imported MQM judgments may hold several spans of one output with the same start (Google's files
# mark several errors on the same words, and several source errors each on the missing-content
# marker): the unique start becomes a plain index, added first so lookups by judgment keep one.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0018_protocol_choices_from_the_registry"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="judgmentspan",
            index=models.Index(fields=["judgment", "output", "start"], name="judgmentspan_start"),
        ),
        migrations.RemoveConstraint(
            model_name="judgmentspan",
            name="judgmentspan_unique_start",
        ),
    ]
