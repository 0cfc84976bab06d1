"""One seed and one resample count per campaign, in the campaign's analysis settings.

Before, a campaign had two of each: the human analysis's ``n_bootstrap`` and ``seed`` (in
``Campaign.analysis_settings``; a seed of None meant each protocol config's own seed) and the
metric analysis's ``MetricSettings.bootstrap_samples`` and ``seed``. This migration writes one
``resamples`` and one ``seed`` into every campaign's analysis settings, renames
``ranking_bootstrap`` to ``trueskill_runs`` there, and drops the two metric settings.

Which value a campaign keeps (:func:`chosen`), for the seed and the count alike:

1. the human analysis's, when it differs from its default (a seed of None, a count of 1,000)
   and is a valid value of the one setting (a count from 10 to 100,000): only an organizer's
   choice gives it such a value, and it is already where the one value now lives;
2. else the metric analysis's, when it differs from its default (12,345; 1,000): the metric
   settings' form always sends both, so only an organizer's choice changes them;
3. else the default (seed 12,345, 1,000 resamples).

So when an organizer chose both and they differ, the human analysis's wins. A human count
below 10 (0: no bootstrap intervals) is not valid for the metric analysis and is not carried.
Going back writes the one value into both places.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

DEFAULT_SEED = 12345
DEFAULT_RESAMPLES = 1000
RESAMPLES_MIN, RESAMPLES_MAX = 10, 100_000


def chosen(human: int | None, metric: int | None, *, default: int, human_default: Any) -> int:
    """The one value of a campaign, by the rule of the module docstring. ``human`` is the
    human analysis's value (None when absent), ``human_default`` its default; ``metric`` the
    metric settings' (None without a metric settings row)."""
    if human is not None and human != human_default:
        return human
    if metric is not None and metric != default:
        return metric
    return default


def _valid_count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return value if ok and RESAMPLES_MIN <= value <= RESAMPLES_MAX else None


def one_value_each(apps: Any, schema_editor: Any) -> None:
    Campaign = apps.get_model("annotation", "Campaign")
    MetricSettings = apps.get_model("metrics", "MetricSettings")
    metric = {
        ms.campaign_id: ms
        for ms in MetricSettings.objects.only("campaign", "bootstrap_samples", "seed")
    }
    for campaign in Campaign.objects.only("pk", "analysis_settings"):
        settings = dict(campaign.analysis_settings or {})
        ms = metric.get(campaign.pk)
        settings["seed"] = chosen(
            settings.get("seed"),
            ms.seed if ms else None,
            default=DEFAULT_SEED,
            human_default=None,
        )
        settings["resamples"] = chosen(
            _valid_count(settings.pop("n_bootstrap", None)),
            ms.bootstrap_samples if ms else None,
            default=DEFAULT_RESAMPLES,
            human_default=DEFAULT_RESAMPLES,
        )
        if "ranking_bootstrap" in settings:
            settings["trueskill_runs"] = settings.pop("ranking_bootstrap")
        Campaign.objects.filter(pk=campaign.pk).update(analysis_settings=settings)


def both_places(apps: Any, schema_editor: Any) -> None:
    Campaign = apps.get_model("annotation", "Campaign")
    MetricSettings = apps.get_model("metrics", "MetricSettings")
    for campaign in Campaign.objects.only("pk", "analysis_settings"):
        settings = dict(campaign.analysis_settings or {})
        seed = settings.get("seed", DEFAULT_SEED)
        resamples = settings.pop("resamples", DEFAULT_RESAMPLES)
        settings["n_bootstrap"] = resamples
        if "trueskill_runs" in settings:
            settings["ranking_bootstrap"] = settings.pop("trueskill_runs")
        Campaign.objects.filter(pk=campaign.pk).update(analysis_settings=settings)
        MetricSettings.objects.filter(campaign_id=campaign.pk).update(
            seed=seed, bootstrap_samples=resamples
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0016_merged_outputs"),
        ("metrics", "0007_sacrebleu_options"),
    ]

    operations = [
        migrations.RunPython(one_value_each, both_places),
        migrations.RemoveField(model_name="metricsettings", name="bootstrap_samples"),
        migrations.RemoveField(model_name="metricsettings", name="seed"),
    ]
