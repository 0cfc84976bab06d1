"""The whole background analysis of the demo campaign on a real Celery worker process and Redis:
the pipeline stores the numbers the scoring core gives when called directly (corpus and segment
scores, intervals, MultEval, the all-pairs matrices, the human analysis and the correlations).

The demo is loaded, and analysed by the worker, once for all the tests of this module (committed,
so that the worker sees it); each test reads what the job stored, in a transaction rolled back
after it, and the database is emptied after the module's last test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings

from annotation.analysis.selectors import campaign_analysis_compute, campaign_analysis_settings
from annotation.models import Campaign, Reference, System, Translation
from evalcore.scoring import Metric, make_metric
from evalcore.stats.correlation import correlation, pairwise_accuracy
from evalcore.stats.multirun import compare_runs
from evalcore.stats.resampling import (
    bootstrap_ci,
    paired_approximate_randomization,
    paired_bootstrap,
)
from metrics import pipeline
from metrics.correlations import correlations_compute
from metrics.documents import CorrelationsDocument, MetricsDocument
from metrics.models import AnalysisJob, AnalysisResult, SegmentScores, StatsChunk
from metrics.services import AnalysisRequest, analysis_request
from tests.conftest import CeleryWorkers
from tests.support.workers import settings_for, wait_for

pytestmark = [pytest.mark.django_db, pytest.mark.shared_setup]

# 60 segments: three chunks.
CHUNK_SEGMENTS = 25


@pytest.fixture(scope="module")
def demo_request(  # type: ignore[no-untyped-def]
    module_celery_workers: CeleryWorkers, django_db_blocker
) -> Iterator[AnalysisRequest]:
    """The demo campaign loaded and committed, a worker running, and its analysis requested."""
    # The chunk size is part of the analysis parameters: the same for the whole module, so that
    # a second request finds the job of the first.
    with override_settings(EVALSITE_CHUNK_SEGMENTS=CHUNK_SEGMENTS):
        try:
            with django_db_blocker.unblock():
                # The worker starts while the demo loads.
                worker = module_celery_workers.start(name="pipeline", wait=False)
                call_command("load_demo", stdout=StringIO())
                campaign = Campaign.objects.get()
                settings_for(campaign, resamples=200, ar_trials=1000)
                module_celery_workers.wait_ready(worker, name="pipeline")
                request = analysis_request(campaign=campaign)
            yield request
        finally:
            # What a transactional test leaves behind it: an empty database.
            with django_db_blocker.unblock():
                call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="module")
def demo_job(demo_request: AnalysisRequest, django_db_blocker) -> AnalysisJob:  # type: ignore[no-untyped-def]
    """The worker's job, once it has ended."""
    with django_db_blocker.unblock():
        return wait_for(demo_request.job.pk)


@dataclass
class Stored:
    """What the job stored, and the texts it scored."""

    campaign: Campaign
    job: AnalysisJob
    doc: dict[str, Any]
    keys: list[str]
    systems: list[System]
    hyps: dict[int, list[str]]
    refs: list[list[str]]
    segment_scores: dict[tuple[int, str], np.ndarray]

    def entry(self, key: str) -> dict[str, Any]:
        return next(m for m in self.doc["metrics"] if m["key"] == key)

    def metric(self, key: str) -> Metric:
        return make_metric(key, pipeline.metric_options(self.job.params))


@pytest.fixture
def stored(demo_job: AnalysisJob) -> Stored:
    campaign = demo_job.campaign
    doc = AnalysisResult.objects.get(job=demo_job, kind="metrics").data
    hyps, refs = texts(campaign)
    return Stored(
        campaign=campaign,
        job=demo_job,
        doc=doc,
        keys=[m["key"] for m in doc["metrics"]],
        systems=list(
            System.objects.filter(campaign=campaign).prefetch_related("runs").order_by("name")
        ),
        hyps=hyps,
        refs=refs,
        segment_scores={
            (row.run_id, row.metric): pipeline.load_array(row.data)
            for row in SegmentScores.objects.filter(job=demo_job)
        },
    )


def texts(campaign: Campaign) -> tuple[dict[int, list[str]], list[list[str]]]:
    """Every run's hypotheses and the reference streams, in test-set order."""
    hyps: dict[int, list[str]] = {}
    for run_id, text in (
        Translation.objects.filter(run__system__campaign=campaign)
        .order_by("run_id", "segment__position")
        .values_list("run_id", "text")
    ):
        hyps.setdefault(run_id, []).append(text)
    refs: dict[int, list[str]] = {}
    for index, text in (
        Reference.objects.filter(segment__campaign=campaign)
        .order_by("index", "segment__position")
        .values_list("index", "text")
    ):
        refs.setdefault(index, []).append(text)
    return hyps, [refs[i] for i in sorted(refs)]


def tolerance(metric: str) -> dict[str, float]:
    """Exact to 1e-9, but BERTR: its float32 embeddings depend slightly on how sentences are
    batched (a chunk's batch differs from the whole corpus's), in the 7th digit."""
    return {"rel": 1e-5} if metric == "bertr" else {"abs": 1e-9}


def same_document(stored: Any, direct: Any, where: str = "") -> None:
    """The same document: the same keys, lists, strings and whole numbers, and the same floats
    up to the last bits: the worker builds its inputs chunk by chunk in another process, and a
    coefficient computed from them differed from the test's in its 16th digit on fresh venvs
    (0.9712048695480597 against 0.9712048695480598), which says nothing about the analysis."""
    if isinstance(direct, float) and isinstance(stored, float):
        assert stored == pytest.approx(direct, rel=1e-12, abs=1e-15, nan_ok=True), where
        return
    assert type(stored) is type(direct), where
    if isinstance(direct, dict):
        assert stored.keys() == direct.keys(), where
        for key in direct:
            same_document(stored[key], direct[key], f"{where}.{key}")
    elif isinstance(direct, list):
        assert len(stored) == len(direct), where
        for i, (a, b) in enumerate(zip(stored, direct, strict=True)):
            same_document(a, b, f"{where}[{i}]")
    else:
        assert stored == direct, where


def direct_statistics(stored: Stored, key: str) -> list[np.ndarray]:
    """Per system, ``(n_runs, n_segments, n_stats)``: the statistics the core computes directly
    from the texts; BERTR's are the stored ones (the model is slow on a CPU: see its spot
    check)."""
    metric = stored.metric(key)
    if key == "bertr":
        return pipeline.metric_arrays(stored.job, "bertr", metric, stored.systems).arrays
    return [
        np.stack([metric.statistics(stored.hyps[run["id"]], stored.refs) for run in system["runs"]])
        for system in stored.entry(key)["systems"]
    ]


def _check_the_metric(stored: Stored, key: str) -> None:
    """One metric's stored scores, intervals, MultEval and all pairs against the core's."""
    entry = stored.entry(key)
    params = stored.job.params
    metric = stored.metric(key)
    run_ids = [run["id"] for system in entry["systems"] for run in system["runs"]]
    assert {k for k in stored.segment_scores if k[1] == key} == {(r, key) for r in run_ids}
    arrays = direct_statistics(stored, key)
    for system, stats in zip(entry["systems"], arrays, strict=True):
        for run, run_stats in zip(system["runs"], stats, strict=True):
            direct = metric.corpus_score_from_statistics(run_stats, n_refs=2).score
            assert run["score"] == pytest.approx(direct, abs=1e-9), run
            # The stored segment scores are the core's sentence scores of this run.
            sentence = metric.sentence_scores(stored.hyps[run["id"]], stored.refs)
            assert stored.segment_scores[(run["id"], key)].tolist() == pytest.approx(
                list(sentence), abs=1e-9
            )
    stacked = np.concatenate(arrays)
    ci = bootstrap_ci(stacked, metric.score_from_statistics, n_samples=200, rng=params["seed"])
    flat_runs = [run for system in entry["systems"] for run in system["runs"]]
    assert [r["ci_low"] for r in flat_runs] == pytest.approx(ci.low.tolist(), abs=1e-9)
    assert [r["ci_high"] for r in flat_runs] == pytest.approx(ci.high.tolist(), abs=1e-9)
    multeval = compare_runs(
        [(system["name"], a) for system, a in zip(entry["systems"], arrays, strict=True)],
        metric.score_from_statistics,
        baseline=stored.doc["baseline"]["name"],
        n_bootstrap=200,
        n_trials=1000,
        rng=params["seed"],
    )
    for system, direct in zip(entry["systems"], multeval.systems, strict=True):
        assert system["mean"] == pytest.approx(direct.mean, abs=1e-9)
        assert system["s_sel"] == pytest.approx(direct.s_sel, abs=1e-9)
        assert system["s_opt"] == pytest.approx(direct.s_opt, abs=1e-9)
        assert system["p_baseline"] == direct.p_value
    assert entry["signature"].startswith(metric.label)
    _check_all_pairs(entry, metric, arrays, params["seed"])


def _check_all_pairs(
    entry: dict[str, Any], metric: Metric, arrays: list[np.ndarray], seed: int
) -> None:
    # All pairs: each system's runs pooled (segment-major), one paired bootstrap and one AR
    # per row system from the job's seed; the same draws, so exactly the same numbers.
    pairwise = entry["pairwise"]
    assert pairwise["systems"] == [system["id"] for system in entry["systems"]]
    assert pairwise["pooled_runs"] == 3
    pooled = np.stack([a.transpose(1, 0, 2).reshape(-1, a.shape[2]) for a in arrays])
    for i in range(len(arrays)):
        boot = paired_bootstrap(
            pooled[i], pooled, metric.score_from_statistics, n_samples=200, rng=seed
        )
        ar = paired_approximate_randomization(
            pooled[i], pooled, metric.score_from_statistics, n_trials=1000, rng=seed
        )
        wins = boot.wins if metric.higher_is_better else boot.losses
        for j in range(len(arrays)):
            if i == j:
                assert pairwise["bootstrap_p"][i][j] is None
                assert pairwise["ar_p"][i][j] is None
                continue
            assert pairwise["bootstrap_p"][i][j] == float(boot.p_value[j])
            assert pairwise["ar_p"][i][j] == float(ar.p_value[j])
            assert pairwise["win_share"][i][j] == float(wins[j])
            assert pairwise["delta"][i][j] == float(boot.observed_delta[j])


def test_the_demo_s_analysis_is_queued_for_the_worker(demo_request: AnalysisRequest) -> None:
    assert demo_request.queued
    assert not demo_request.reused


def test_the_worker_finishes_the_job_in_three_chunks(demo_job: AnalysisJob) -> None:
    assert demo_job.status == AnalysisJob.Status.DONE, demo_job.error
    assert demo_job.progress_done == demo_job.progress_total
    assert StatsChunk.objects.filter(job=demo_job).values("start").distinct().count() == 3


def test_every_metric_runs_and_the_stored_document_reads_back_whole(stored: Stored) -> None:
    assert stored.keys == list(pipeline.analysis_params(campaign=stored.campaign)["metrics"])
    assert "bertr" in stored.keys  # make test installs the neural extra: every metric runs
    assert MetricsDocument.from_json(stored.doc).to_json() == stored.doc


def test_the_stored_scores_intervals_and_significance_are_the_core_s(stored: Stored) -> None:
    """Every metric but BERTR, recomputed here from the texts (BERTR: the next test)."""
    for key in stored.keys:
        if key != "bertr":
            _check_the_metric(stored, key)


def test_bertr_s_stored_scores_are_the_core_s_on_a_spot_check(stored: Stored) -> None:
    """The model is slow on a CPU: one run, scored directly."""
    metric = stored.metric("bertr")
    entry = stored.entry("bertr")
    run_ids = [run["id"] for system in entry["systems"] for run in system["runs"]]
    assert {k for k in stored.segment_scores if k[1] == "bertr"} == {(r, "bertr") for r in run_ids}
    run = entry["systems"][0]["runs"][0]
    stats = metric.statistics(stored.hyps[run["id"]], stored.refs)
    direct = metric.corpus_score_from_statistics(stats, n_refs=2).score
    assert run["score"] == pytest.approx(direct, **tolerance("bertr"))
    assert stored.segment_scores[(run["id"], "bertr")].tolist() == pytest.approx(
        metric.sentence_score_from_statistics(stats).tolist(), **tolerance("bertr")
    )


def test_the_stored_human_analysis_and_correlations_are_the_core_s(stored: Stored) -> None:
    campaign, job = stored.campaign, stored.job
    human = AnalysisResult.objects.get(job=job, kind="human").data
    # The campaign's analysis setting, as the analysis page and the reports use it.
    direct_human = campaign_analysis_compute(
        campaign=campaign, settings=campaign_analysis_settings(campaign=campaign)
    ).to_json()
    assert human["analysis"] == direct_human
    assert human["histograms"]

    params = job.params
    correlations = AnalysisResult.objects.get(job=job, kind="correlations").data
    # The correlation document assembled in this process from the core's own statistics and
    # sentence scores and the directly computed human analysis: the same seed, the same numbers.
    metrics = {key: stored.metric(key) for key in stored.keys}
    direct_stats = {key: direct_statistics(stored, key) for key in stored.keys}
    direct_correlations = correlations_compute(
        campaign=campaign,
        params=params,
        metrics=metrics,
        metric_docs=MetricsDocument.from_json(stored.doc).metrics,
        metric_stats=direct_stats,
        sentence={
            key: {
                run.pk: metric.sentence_score_from_statistics(array[k])
                for system, array in zip(stored.systems, direct_stats[key], strict=True)
                for k, run in enumerate(system.runs.all())
            }
            for key, metric in metrics.items()
        },
        systems=stored.systems,
        human_doc={"analysis": direct_human},
    )
    same_document(correlations, direct_correlations.to_json())
    # The stored document is the typed one, read back whole.
    assert CorrelationsDocument.from_json(correlations).to_json() == correlations
    n_system_level = 0
    for criterion in correlations["criteria"]:
        for entry in criterion["metrics"]:
            if "system" not in entry:
                continue
            n_system_level += 1
            h = [p["human"] for p in entry["system"]["points"]]
            m = [p["metric"] for p in entry["system"]["points"]]
            for method in ("pearson", "spearman", "kendall"):
                value = entry["system"][method]["value"]
                assert value == pytest.approx(correlation(h, m, method), abs=1e-12)
            assert entry["system"]["pairwise_accuracy"] == pairwise_accuracy(h, m)
    assert n_system_level >= len(stored.keys) * 3

    adequacy = next(c for c in correlations["criteria"] if c["criterion"] == "adequacy")
    bleu = next(m for m in adequacy["metrics"] if m["key"] == "bleu")
    points = bleu["system"]["points"]
    assert len(points) == 4
    # The demo's systems differ clearly; humans and BLEU agree on their order.
    assert bleu["system"]["pearson"]["value"] > 0.8


def test_a_second_request_with_unchanged_inputs_reuses_the_finished_job(
    demo_job: AnalysisJob,
) -> None:
    again = analysis_request(campaign=demo_job.campaign)
    assert again.reused
    assert again.job.pk == demo_job.pk
