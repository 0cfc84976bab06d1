# The decision level now belongs to an anytime-valid test (evalcore.human.sequential); only
# the help text changes.

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0021_qc_mix_for_one_output"),
    ]

    operations = [
        migrations.AlterField(
            model_name="protocolconfig",
            name="allocation_level",
            field=models.FloatField(
                default=0.05,
                help_text="Pull: adaptive stops when every adjacent pair of the current ranking is decided at this level (an anytime-valid test: tied systems are declared apart at most this often, however often the pair is tested).",
                validators=[
                    django.core.validators.MinValueValidator(0.0001),
                    django.core.validators.MaxValueValidator(0.5),
                ],
                verbose_name="decision level",
            ),
        ),
    ]
