# A crowd link's study URL carries a stored random token (/study/<token>/) instead of a signed
# one that changed with every page load and with the secret key; a campaign says whether its
# own annotators are offered tasks of the protocols its crowd links serve (default: no).

import secrets

from django.db import migrations, models

import annotation.models.crowd


def tokens_fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    links = apps.get_model("annotation", "CrowdLink")
    for link in links.objects.filter(study_token__isnull=True):
        link.study_token = secrets.token_urlsafe(16)
        link.save(update_fields=["study_token"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0022_allocation_level_anytime"),
    ]

    operations = [
        migrations.AddField(
            model_name="crowdlink",
            name="study_token",
            field=models.CharField(editable=False, max_length=32, null=True),
        ),
        migrations.RunPython(tokens_fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="crowdlink",
            name="study_token",
            field=models.CharField(
                default=annotation.models.crowd.study_token_new,
                editable=False,
                max_length=32,
                unique=True,
            ),
        ),
        migrations.AddField(
            model_name="campaign",
            name="crowd_tasks_to_roster",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "Let the campaign's own annotators also take tasks of protocols that a "
                    "crowd link serves."
                ),
                verbose_name="offer crowd tasks to the campaign's annotators",
            ),
        ),
    ]
