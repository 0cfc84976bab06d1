"""The migration to one seed and one resample count per campaign carries every campaign's values
into its analysis settings by the rule its docstring states (the value an organizer chose;
when both were chosen, the human analysis's), and going back writes the one value into both
places."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.analysis.settings import AnalysisSettings

BEFORE = [("metrics", "0007_sacrebleu_options")]
AFTER = [("metrics", "0008_one_seed_and_resample_count")]
one_seed = importlib.import_module("metrics.migrations.0008_one_seed_and_resample_count")


def test_the_rule_keeps_the_value_an_organizer_chose() -> None:
    def seed(human: int | None, metric: int | None) -> int:
        return int(one_seed.chosen(human, metric, default=12345, human_default=None))

    def count(human: int | None, metric: int | None) -> int:
        return int(one_seed.chosen(human, metric, default=1000, human_default=1000))

    assert seed(None, None) == seed(None, 12345) == 12345
    assert seed(7, 12345) == seed(7, None) == 7
    assert seed(None, 9) == 9
    assert seed(7, 9) == 7  # both chosen: the human analysis's
    assert count(None, None) == count(1000, 1000) == 1000
    assert count(1000, 500) == count(None, 500) == 500
    assert count(2000, 1000) == count(2000, 500) == 2000


def _executor(metrics: list[tuple[str, str]]) -> MigrationExecutor:
    """The database migrated to ``metrics`` (and every other app to its latest)."""
    executor = MigrationExecutor(connection)
    executor.migrate(_target(executor, metrics))
    return MigrationExecutor(connection)


def _target(executor: MigrationExecutor, metrics: list[tuple[str, str]]) -> list[tuple[str, str]]:
    others = [key for key in executor.loader.graph.leaf_nodes() if key[0] != "metrics"]
    return others + metrics


def _apps(executor: MigrationExecutor, metrics: list[tuple[str, str]]) -> Any:
    return executor.loader.project_state(_target(executor, metrics)).apps


@pytest.mark.django_db(transaction=True)
def test_the_migration_carries_every_campaigns_values_over_and_back() -> None:
    executor = _executor(BEFORE)
    try:
        apps = _apps(executor, BEFORE)
        user_app, user_model = settings.AUTH_USER_MODEL.split(".")
        owner = apps.get_model(user_app, user_model).objects.create(username="owner")
        Campaign = apps.get_model("annotation", "Campaign")
        MetricSettings = apps.get_model("metrics", "MetricSettings")

        def campaign(name: str, analysis: dict[str, Any], **metric: Any) -> str:
            made = Campaign.objects.create(
                name=name,
                owner=owner,
                source_language="de",
                target_language="en",
                analysis_settings=analysis,
            )
            if metric:
                MetricSettings.objects.create(campaign=made, **metric)
            return str(made.pk)

        ids = {
            "untouched": campaign("untouched", {}),
            "metric": campaign("metric", {}, seed=7, bootstrap_samples=500),
            "human": campaign(
                "human",
                {"n_bootstrap": 2000, "ranking_bootstrap": 50, "seed": 3, "test": "sign"},
                seed=12345,
                bootstrap_samples=1000,
            ),
            "both": campaign(
                "both", {"n_bootstrap": 2000, "seed": 3}, seed=7, bootstrap_samples=500
            ),
            # No bootstrap in the human analysis (0) is no count for the metric analysis.
            "no intervals": campaign(
                "no intervals", {"n_bootstrap": 0, "seed": None}, seed=7, bootstrap_samples=500
            ),
        }
        executor = _executor(AFTER)
        apps = _apps(executor, AFTER)
        stored = {
            str(pk): data
            for pk, data in apps.get_model("annotation", "Campaign").objects.values_list(
                "pk", "analysis_settings"
            )
        }
        one = {name: AnalysisSettings.from_dict(stored[pk]) for name, pk in ids.items()}
        assert {name: (s.seed, s.resamples) for name, s in one.items()} == {
            "untouched": (12345, 1000),
            "metric": (7, 500),
            "human": (3, 2000),
            "both": (3, 2000),
            "no intervals": (7, 500),
        }
        assert (one["human"].trueskill_runs, one["human"].test) == (50, "sign")
        assert all("n_bootstrap" not in data and "seed" in data for data in stored.values())
        metric_fields = {f.name for f in apps.get_model("metrics", "MetricSettings")._meta.fields}
        assert not metric_fields & {"seed", "bootstrap_samples"}

        executor = _executor(BEFORE)
        apps = _apps(executor, BEFORE)
        back = apps.get_model("metrics", "MetricSettings").objects.get(campaign_id=ids["both"])
        assert (back.seed, back.bootstrap_samples) == (3, 2000)
        data = apps.get_model("annotation", "Campaign").objects.get(pk=ids["human"])
        assert data.analysis_settings["n_bootstrap"] == 2000
        assert data.analysis_settings["ranking_bootstrap"] == 50
    finally:
        _executor([key for key in executor.loader.graph.leaf_nodes() if key[0] == "metrics"])
