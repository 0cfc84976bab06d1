"""The background analysis on real Celery worker processes and Redis: the whole pipeline stores
the numbers the scoring core gives when called directly (corpus and segment scores, intervals,
MultEval, the all-pairs matrices, the human analysis and the correlations); a worker killed with
SIGKILL in the middle of a chunk does not stop the job, and the results equal an uninterrupted
run; a worker that starts again under the dead one's name sends its chunks again at once."""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

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
from metrics.documents import CorrelationsDocument, MetricScores, MetricsDocument
from metrics.models import AnalysisJob, AnalysisResult, SegmentScores, StatsChunk, TaskClaim
from metrics.services import analysis_request
from tests.support.workers import chunks_held, settings_for, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

CHUNK = "metrics.analysis_chunk"


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


def _check_the_metric(
    entry: dict[str, Any],
    job: AnalysisJob,
    hyps: dict[int, list[str]],
    refs: list[list[str]],
    segment_scores: dict[tuple[int, str], np.ndarray],
    systems: list[System],
    baseline: str,
) -> list[np.ndarray]:
    """One metric's stored scores, intervals, MultEval and all pairs against the core's; returns
    the statistics the core computes directly from the texts, per system."""
    params = job.params
    metric = make_metric(entry["key"], pipeline.metric_options(params))
    run_ids = [run["id"] for system in entry["systems"] for run in system["runs"]]
    assert {k for k in segment_scores if k[1] == entry["key"]} == {
        (r, entry["key"]) for r in run_ids
    }
    if entry["key"] == "bertr":
        # A spot check (the model is slow on a CPU): one run, scored directly.
        run = entry["systems"][0]["runs"][0]
        stats = metric.statistics(hyps[run["id"]], refs)
        direct = metric.corpus_score_from_statistics(stats, n_refs=2).score
        assert run["score"] == pytest.approx(direct, **tolerance("bertr"))
        assert segment_scores[(run["id"], "bertr")].tolist() == pytest.approx(
            metric.sentence_score_from_statistics(stats).tolist(), **tolerance("bertr")
        )
        return pipeline.metric_arrays(job, "bertr", metric, systems).arrays
    arrays = []
    for system in entry["systems"]:
        stats = [metric.statistics(hyps[run["id"]], refs) for run in system["runs"]]
        arrays.append((system["name"], np.stack(stats)))
        for run, run_stats in zip(system["runs"], stats, strict=True):
            direct = metric.corpus_score_from_statistics(run_stats, n_refs=2).score
            assert run["score"] == pytest.approx(direct, abs=1e-9), run
            # The stored segment scores are the core's sentence scores of this run.
            sentence = metric.sentence_scores(hyps[run["id"]], refs)
            assert segment_scores[(run["id"], entry["key"])].tolist() == pytest.approx(
                list(sentence), abs=1e-9
            )
    stacked = np.concatenate([a for _, a in arrays])
    ci = bootstrap_ci(stacked, metric.score_from_statistics, n_samples=200, rng=params["seed"])
    flat_runs = [run for system in entry["systems"] for run in system["runs"]]
    assert [r["ci_low"] for r in flat_runs] == pytest.approx(ci.low.tolist(), abs=1e-9)
    assert [r["ci_high"] for r in flat_runs] == pytest.approx(ci.high.tolist(), abs=1e-9)
    multeval = compare_runs(
        arrays,
        metric.score_from_statistics,
        baseline=baseline,
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
    _check_all_pairs(entry, metric, [a for _, a in arrays], params["seed"])
    return [a for _, a in arrays]


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


def _check_the_correlations(
    campaign: Campaign,
    job: AnalysisJob,
    keys: list[str],
    metric_docs: list[MetricScores],
    direct_stats: dict[str, list[np.ndarray]],
    systems: list[System],
    direct_human: dict[str, Any],
) -> None:
    params = job.params
    correlations = AnalysisResult.objects.get(job=job, kind="correlations").data
    # The correlation document assembled in this process from the core's own statistics and
    # sentence scores and the directly computed human analysis: the same seed, the same numbers.
    metrics = {key: make_metric(key, pipeline.metric_options(params)) for key in keys}
    direct_correlations = correlations_compute(
        campaign=campaign,
        params=params,
        metrics=metrics,
        metric_docs=metric_docs,
        metric_stats=direct_stats,
        sentence={
            key: {
                run.pk: metric.sentence_score_from_statistics(array[k])
                for system, array in zip(systems, direct_stats[key], strict=True)
                for k, run in enumerate(system.runs.all())
            }
            for key, metric in metrics.items()
        },
        systems=systems,
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
    assert n_system_level >= len(keys) * 3

    adequacy = next(c for c in correlations["criteria"] if c["criterion"] == "adequacy")
    bleu = next(m for m in adequacy["metrics"] if m["key"] == "bleu")
    points = bleu["system"]["points"]
    assert len(points) == 4
    # The demo's systems differ clearly; humans and BLEU agree on their order.
    assert bleu["system"]["pearson"]["value"] > 0.8


def test_a_worker_runs_the_whole_pipeline_and_stores_what_the_core_computes(
    celery_worker_process,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    call_command("load_demo", stdout=StringIO())
    campaign = Campaign.objects.get()
    settings_for(campaign, resamples=200, ar_trials=1000)
    settings.EVALSITE_CHUNK_SEGMENTS = 25  # 60 segments: three chunks
    celery_worker_process(name="pipeline")

    request = analysis_request(campaign=campaign)
    assert request.queued
    assert not request.reused
    job = wait_for(request.job.pk)
    assert job.status == AnalysisJob.Status.DONE, job.error
    assert job.progress_done == job.progress_total
    assert StatsChunk.objects.filter(job=job).values("start").distinct().count() == 3

    doc = AnalysisResult.objects.get(job=job, kind="metrics").data
    hyps, refs = texts(campaign)
    keys = [m["key"] for m in doc["metrics"]]
    assert keys == list(pipeline.analysis_params(campaign=campaign)["metrics"])
    assert "bertr" in keys  # make test installs the neural extra: every metric runs
    systems = list(
        System.objects.filter(campaign=campaign).prefetch_related("runs").order_by("name")
    )
    segment_scores = {
        (row.run_id, row.metric): pipeline.load_array(row.data)
        for row in SegmentScores.objects.filter(job=job)
    }
    # The statistics the core computes directly from the texts, per metric and system, for the
    # correlations below (BERTR's are the stored ones: see the spot check).
    direct_stats: dict[str, list[np.ndarray]] = {}
    for entry in doc["metrics"]:
        direct_stats[entry["key"]] = _check_the_metric(
            entry, job, hyps, refs, segment_scores, systems, doc["baseline"]["name"]
        )

    human = AnalysisResult.objects.get(job=job, kind="human").data
    # The campaign's analysis setting, as the analysis page and the reports use it.
    direct_human = campaign_analysis_compute(
        campaign=campaign, settings=campaign_analysis_settings(campaign=campaign)
    ).to_json()
    assert human["analysis"] == direct_human
    assert human["histograms"]
    stored = MetricsDocument.from_json(doc)
    assert stored.to_json() == doc
    _check_the_correlations(
        campaign, job, keys, stored.metrics, direct_stats, systems, direct_human
    )

    # Unchanged inputs: a second request reuses the finished job.
    again = analysis_request(campaign=campaign)
    assert again.reused
    assert again.job.pk == job.pk


def test_a_worker_killed_in_the_middle_of_a_chunk_does_not_stop_the_job(
    celery_worker_process, campaign
) -> None:  # type: ignore[no-untyped-def]
    settings_for(campaign, metrics=["bleu", "chrf", "ter"], resamples=100, ar_trials=500)
    # Redis delivers the killed worker's chunk again once it has gone unacknowledged for longer
    # than the visibility timeout, which must exceed the time limits: short ones, for a short
    # test (this campaign's tasks take a fraction of a second).
    fast_redelivery = {
        "CELERY_VISIBILITY_TIMEOUT": "6",
        "CELERY_TASK_TIME_LIMIT": "5",
        "CELERY_TASK_SOFT_TIME_LIMIT": "4",
    }
    request = analysis_request(campaign=campaign)
    job_id = request.job.pk
    # The chunk waits at its write while the worker is killed: in the middle, however fast.
    with chunks_held(request.job):
        first = celery_worker_process(name="doomed", env=fast_redelivery)
        deadline = time.monotonic() + 60
        while not (claims := TaskClaim.objects.filter(job_id=job_id, task=CHUNK)):
            assert time.monotonic() < deadline, "the chunk did not start within 60 s"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    assert AnalysisJob.objects.get(pk=job_id).status == AnalysisJob.Status.RUNNING
    assert StatsChunk.objects.filter(job_id=job_id).count() == 0

    # A worker looks for such chunks when it starts, then every 100 s (kombu's Redis
    # transport): the rescuer starts once the chunk has been unacknowledged that long.
    overdue = claims[0].started + timedelta(
        seconds=int(fast_redelivery["CELERY_VISIBILITY_TIMEOUT"]) + 1
    )
    time.sleep(max(0.0, (overdue - timezone.now()).total_seconds()))
    celery_worker_process(name="rescuer", env=fast_redelivery)
    job = wait_for(job_id, timeout=120)
    assert job.status == AnalysisJob.Status.DONE, job.error
    assert not TaskClaim.objects.filter(job_id=job_id).exists()

    # The same analysis without interruption, in this process, gives the same documents.
    reference = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint=job.fingerprint,
        params=job.params,
        status=AnalysisJob.Status.RUNNING,
    )
    for chunk in pipeline.plan(campaign=campaign, params=job.params):
        pipeline.chunk_compute(job=reference, start=chunk.start, stop=chunk.stop)
    pipeline.finalize(reference)
    for kind in ("metrics", "human", "correlations"):
        assert (
            AnalysisResult.objects.get(job=job, kind=kind).data
            == AnalysisResult.objects.get(job=reference, kind=kind).data
        ), kind


def test_a_worker_started_again_under_its_name_sends_its_dead_predecessors_chunks_at_once(
    celery_worker_process,
    campaign,
    settings,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """As compose's restart policy or systemd's Restart=always does: the same node name, a new
    process. Redis's visibility timeout is left at its default (2,400 s): the job finishes long
    before it would deliver the chunks again."""
    settings_for(campaign, metrics=["bleu", "chrf", "ter"], resamples=100, ar_trials=500)
    settings.EVALSITE_CHUNK_SEGMENTS = 2  # two chunks of the campaign's four segments
    two_processes = {"CELERY_WORKER_CONCURRENCY": "2"}  # one per chunk: both start at once
    job = analysis_request(campaign=campaign).job
    job_id = job.pk
    # Both chunks wait at their writes while the worker is killed: in the middle, however fast.
    with chunks_held(job):
        first = celery_worker_process(name="restarted", env=two_processes)
        deadline = time.monotonic() + 120
        while TaskClaim.objects.filter(job_id=job_id, task="metrics.analysis_chunk").count() < 2:
            assert time.monotonic() < deadline, (tmp_path / "worker-restarted.log").read_text()
            time.sleep(0.05)
        claims = {c.key: c for c in TaskClaim.objects.filter(job_id=job_id)}
        assert {c.starts for c in claims.values()} == {1}
        assert {c.node.split("@")[0] for c in claims.values()} == {"restarted"}
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    killed = time.monotonic()
    assert StatsChunk.objects.filter(job_id=job_id).count() == 0
    assert AnalysisJob.objects.get(pk=job_id).status == AnalysisJob.Status.RUNNING

    celery_worker_process(name="restarted", env=two_processes)
    job = wait_for(job_id, timeout=240)
    assert job.status == AnalysisJob.Status.DONE, job.error
    assert time.monotonic() - killed < 240  # the visibility timeout is 2,400 s
    log = (tmp_path / "worker-restarted.log").read_text()
    assert log.count("sent again: this worker's previous process died with it") == 2, log
    # Every task ended in a living process: no claim is left.
    assert not TaskClaim.objects.filter(job_id=job_id).exists()
