# A human translation rated as a system (Google's ref-A, WMT's Human-B) is flagged, so that the
# metric–human correlations can leave it out by default (annotation.campaigns.systems).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0019_spans_may_share_a_start"),
    ]

    operations = [
        migrations.AddField(
            model_name="system",
            name="human",
            field=models.BooleanField(default=False),
        ),
    ]
