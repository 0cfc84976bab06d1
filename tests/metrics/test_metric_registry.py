"""A metric registered in one place — here a fixture of the test suite; no module of EvalSite
names it — is built by ``make_metric``, offered by the settings form, computed by the background
analysis and taken by ``manage.py evaluate`` with its own option. The options a campaign sets
are the columns of its metric settings, and the other way round."""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.db import models
from django.test import Client
from django.urls import reverse

from annotation.models import Run, Segment, Translation
from evalcore.scoring import (
    METRICS,
    Metric,
    MetricOptions,
    MetricSpec,
    Option,
    References,
    check_corpus,
    make_metric,
    register,
    registered_options,
)
from metrics import pipeline
from metrics.models import AnalysisResult, MetricSettings
from tests.dashboard_factories import analysis_run_sync
from tests.factories import PASSWORD, make_rich_campaign


class ExactMatch(Metric):
    """Segments whose output equals one of their references, in percent; with ``ignore_case``
    compared lowercased."""

    name = "exact_match"
    display_name = "Exact"

    def __init__(self, *, ignore_case: bool = False) -> None:
        self.ignore_case = ignore_case

    @property
    def stat_names(self) -> tuple[str, ...]:
        return ("exact", "segments")

    def _fold(self, text: str) -> str:
        return text.lower() if self.ignore_case else text

    def statistics(self, hypotheses: Any, references: References) -> np.ndarray:
        check_corpus(hypotheses, references)
        rows = [
            [float(any(r is not None and self._fold(r) == self._fold(h) for r in refs)), 1.0]
            for h, refs in zip(hypotheses, zip(*references, strict=True), strict=True)
        ]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

    def score_from_statistics(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        result: np.ndarray = 100.0 * summed[..., 0] / np.maximum(summed[..., 1], 1.0)
        return result

    def signature_info(self, n_refs: int | str) -> dict[str, Any]:
        return {"nrefs": n_refs, "case": "lc" if self.ignore_case else "mixed"}


IGNORE_CASE = Option(
    "exact_ignore_case",
    bool,
    False,
    keyword="ignore_case",
    label="Exact match ignores case",
    help="compare outputs and references lowercased",
    signature="case",
)
EXACT_MATCH = MetricSpec(ExactMatch, (IGNORE_CASE,))


@pytest.fixture
def exact_match() -> Iterator[MetricSpec]:
    register(EXACT_MATCH)
    try:
        yield EXACT_MATCH
    finally:
        del METRICS[EXACT_MATCH.name]


def test_make_metric_builds_a_registered_metric_with_its_option(exact_match: MetricSpec) -> None:
    refs = [["a b", "c d"]]
    assert make_metric("exact_match").corpus_score(["A b", "c d"], refs).score == 50.0
    lowered = make_metric("exact_match", MetricOptions(exact_ignore_case=True))
    assert lowered.corpus_score(["A b", "c d"], refs).score == 100.0


def test_evaluate_takes_a_registered_metric_and_its_option(
    exact_match: MetricSpec, tmp_path: Path
) -> None:
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    ref.write_text("a b\nc d\ne f\nno\n", encoding="utf-8")
    hyp.write_text("A B\nc d\nx\nNO\n", encoding="utf-8")

    def evaluate(*flags: str) -> dict[str, Any]:
        out = StringIO()
        call_command(
            "evaluate",
            *("--refs", str(ref), "--system", "a", str(hyp), "--metrics", "exact_match"),
            *("--resamples", "20", "--ar-trials", "20", "-f", "json", *flags),
            stdout=out,
        )
        return json.loads(out.getvalue())

    assert evaluate()["metrics"]["exact_match"]["a"]["mean"] == 25.0
    lowered = evaluate("--exact-ignore-case")
    assert lowered["metrics"]["exact_match"]["a"]["mean"] == 75.0
    assert lowered["signatures"]["exact_match"].startswith("Exact|nrefs:1|bs:20|ar:20|")
    assert "|case:lc" in lowered["signatures"]["exact_match"]


@pytest.mark.django_db
def test_the_settings_form_and_the_analysis_take_a_registered_metric(
    exact_match: MetricSpec, owner: Any
) -> None:
    campaign = make_rich_campaign(owner=owner)
    client = Client()
    assert client.login(username=owner.get_username(), password=PASSWORD)
    url = reverse("analysis_settings", args=[campaign.pk])
    assert 'value="exact_match"' in client.get(url).content.decode()
    form = {"metrics": ["exact_match"], "tokenize": "13a", "resamples": "20"}
    saved = client.post(url, {**form, "ar_trials": "20", "seed": "1"})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert pipeline.analysis_params(campaign=campaign)["metrics"] == ["exact_match"]

    # A quarter of one run's outputs are its segments' first references.
    segments = list(Segment.objects.filter(campaign=campaign).order_by("position"))
    run = Run.objects.filter(system__campaign=campaign).order_by("pk").first()
    for segment in segments[:15]:
        Translation.objects.filter(run=run, segment=segment).update(
            text=segment.references.get(index=0).text
        )
    job = analysis_run_sync(campaign=campaign, metrics=("exact_match",), resamples=20, ar_trials=20)
    [entry] = AnalysisResult.objects.get(job=job, kind="metrics").data["metrics"]
    assert entry["key"] == "exact_match"
    scores = {r["id"]: r["score"] for s in entry["systems"] for r in s["runs"]}
    assert set(scores) == set(
        Run.objects.filter(system__campaign=campaign).values_list("pk", flat=True)
    )
    for run_id, score in scores.items():
        exact = sum(
            Translation.objects.get(run_id=run_id, segment=s).text
            in {r.text for r in s.references.all()}
            for s in segments
        )
        assert score == pytest.approx(100.0 * exact / len(segments), abs=1e-12), run_id
    assert scores[run.pk] >= 25.0


# The columns of the metric settings that are not metric options.
NOT_OPTIONS = {"id", "campaign", "metrics", "baseline", "ar_trials"}
NOT_OPTIONS |= {"updated"}
COLUMN_TYPES: dict[type[Any], type[models.Field[Any, Any]]] = {
    bool: models.BooleanField,
    int: models.IntegerField,
    float: models.FloatField,
    str: models.CharField,
}


def test_every_option_a_campaign_sets_is_a_metric_settings_column_and_back() -> None:
    columns = {
        field.name: field
        for field in MetricSettings._meta.concrete_fields
        if field.name not in NOT_OPTIONS
    }
    options = {option.name: option for option in registered_options() if option.campaign_setting}
    assert set(columns) == set(options)
    for name, option in options.items():
        column = columns[name]
        assert isinstance(column, COLUMN_TYPES[option.value_type]), name
        assert column.get_default() == option.default, name
        assert column.null == option.nullable, name
        if column.choices:
            assert [value for value, _ in column.choices] == list(option.choices), name
        if option.choices and isinstance(column, models.CharField):
            assert max(len(value) for value in option.choices) <= column.max_length, name
