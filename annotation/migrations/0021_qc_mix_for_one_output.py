# Twelve bad references per 100 items (four repeats, four references) give a one-output
# direct-assessment task 12 pairs: a careful worker passes the paired t 94 % of the time
# (10 gave 89.8 %); real items stay 80 per 100 (docs/crowd.md).

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0020_system_human"),
    ]

    operations = [
        migrations.AlterField(
            model_name="protocolconfig",
            name="qc_bad_reference",
            field=models.PositiveSmallIntegerField(
                default=12,
                validators=[django.core.validators.MaxValueValidator(50)],
                verbose_name="bad references per 100 items",
            ),
        ),
        migrations.AlterField(
            model_name="protocolconfig",
            name="qc_reference",
            field=models.PositiveSmallIntegerField(
                default=4,
                validators=[django.core.validators.MaxValueValidator(50)],
                verbose_name="references as output per 100 items",
            ),
        ),
        migrations.AlterField(
            model_name="protocolconfig",
            name="qc_repeat",
            field=models.PositiveSmallIntegerField(
                default=4,
                validators=[django.core.validators.MaxValueValidator(50)],
                verbose_name="repeats per 100 items",
            ),
        ),
    ]
