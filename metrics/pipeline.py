"""The background analysis of a campaign, as plain functions the Celery tasks call.

1. :func:`plan` splits the metric statistics into chunks: a range of segments for every system
   and run (identical (hypothesis, references) pairs inside a chunk are computed once);
2. :func:`chunk_compute` stores the statistics of one chunk for every metric (idempotent: a chunk
   computed twice, e.g. after a worker died, overwrites itself with the same numbers);
3. :func:`finalize` assembles the arrays and stores three result documents: metric scores with
   bootstrap CIs, MultEval's table and the pairwise significance matrices; the human analysis;
   and the metric–human correlations.

Every random procedure is seeded from the campaign's settings, so a job run twice (or redelivered
half-way) stores the same numbers.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings as django_settings
from django.db.models import Count
from django.utils import timezone

from annotation.analysis.selectors import campaign_analysis_settings
from annotation.campaigns.selectors import campaign_inputs_stamp, content_hash
from annotation.models import (
    Reference,
    Run,
    Segment,
    System,
    Translation,
)
from evalcore.numbers import finite_or_none
from evalcore.scoring import (
    Metric,
    MetricOptions,
    MetricUnavailableError,
    Source,
    make_metric,
    metric_names,
    registered_options,
)
from evalcore.scoring.extraction import extract_all
from evalcore.stats.allpairs import AllPairs, all_pairs_tests
from evalcore.stats.multirun import MultiRunComparison, compare_runs
from evalcore.stats.resampling import (
    BootstrapCI,
    bootstrap_ci,
)
from evalcore.version import evalsite_version, library_versions
from metrics.compat import params_read
from metrics.documents import (
    MetricScores,
    MetricsDocument,
    Named,
    Pairwise,
    RunScore,
    SystemRuns,
    SystemScore,
)
from metrics.models import (
    AnalysisJob,
    AnalysisResult,
    MetricSettings,
    SegmentScores,
    StatsChunk,
)

logger = logging.getLogger(__name__)

Progress = Callable[[int], None]


# --------------------------------------------------------------------------------------------
# Parameters and fingerprint


def metric_settings(campaign_id: Any) -> MetricSettings:
    ms, _ = MetricSettings.objects.get_or_create(campaign_id=campaign_id)
    return ms


def analysis_params(*, campaign: Any) -> dict[str, Any]:
    """The settings of an analysis as plain JSON (stored with every result). The resample
    count and the seed are the campaign's one count and seed, as the human analysis uses them."""
    ms = metric_settings(campaign.pk)
    one = campaign_analysis_settings(campaign=campaign)
    baseline = ms.baseline or System.objects.filter(campaign=campaign).order_by("name").first()
    return {
        "metrics": [m for m in ms.metrics if m in metric_names()],
        **setting_params(ms),
        "target_language": campaign.target_language,
        "baseline": baseline.pk if baseline else None,
        "resamples": one.resamples,
        "ar_trials": ms.ar_trials,
        "seed": one.seed,
        "chunk_segments": django_settings.EVALSITE_CHUNK_SEGMENTS,
        "version": evalsite_version(),
        "libraries": dict(library_versions()),
    }


def campaign_fingerprint(*, campaign: Any, params: dict[str, Any]) -> str:
    """A content hash of everything an analysis reads, from a few aggregate queries: the
    parameters, the campaign's uploads, judgments and decisions (:func:`campaign_inputs_stamp`)
    and the ids of its systems and runs, a human system's runs marked (the correlations leave
    them out; an unmarked run hashes as before the flag existed)."""
    runs = Run.objects.filter(system__campaign=campaign).order_by("pk")
    state = {
        "params": params,
        **campaign_inputs_stamp(campaign=campaign),
        "runs": [
            (pk, system_id, "human") if human else (pk, system_id)
            for pk, system_id, human in runs.values_list("pk", "system_id", "system__human")
        ],
    }
    return content_hash(state)


def metric_options(params: dict[str, Any]) -> MetricOptions:
    """The metric options an analysis with ``params`` scores with, each from where its
    declaration says a campaign sets it (:class:`evalcore.scoring.Source`)."""
    chosen = params.get("sacrebleu", {})
    values: dict[str, Any] = {}
    for option in registered_options():
        if option.source is Source.SETTING:
            values[option.name] = params[option.name]
        elif option.source is Source.SACREBLEU_SETTING and option.name in chosen:
            values[option.name] = chosen[option.name]
        elif option.source is Source.TARGET_LANGUAGE:
            values[option.name] = params["target_language"].split("-")[0]
    defaults = {option.name: option.default for option in registered_options()}
    for option in registered_options():
        if option.source is Source.FOLLOWS:
            values[option.name] = values.get(option.follows, defaults[option.follows])
    return MetricOptions(**values)


def setting_params(ms: MetricSettings) -> dict[str, Any]:
    """The metric options a campaign sets, as the analysis parameters store them: each
    ``SETTING`` under its name, and the ``SACREBLEU_SETTING`` ones that differ from sacreBLEU's
    defaults as ``{"sacrebleu": {…}}`` (nothing when none does, so the parameters — and the
    fingerprint — of campaigns that keep the defaults are what they were before these options
    existed)."""
    params: dict[str, Any] = {}
    chosen: dict[str, Any] = {}
    for option in registered_options():
        if option.source is Source.SETTING:
            params[option.name] = getattr(ms, option.name)
        elif option.source is Source.SACREBLEU_SETTING:
            value = getattr(ms, option.name)
            if value != option.default:
                chosen[option.name] = value
    return {**params, "sacrebleu": chosen} if chosen else params


def usable_metrics(params: dict[str, Any]) -> tuple[dict[str, Metric], dict[str, str]]:
    """The metrics that can run here, and why the others cannot (missing optional packages)."""
    usable: dict[str, Metric] = {}
    unavailable: dict[str, str] = {}
    options = metric_options(params)
    for name in params["metrics"]:
        try:
            usable[name] = make_metric(name, options)
        except MetricUnavailableError as exc:
            unavailable[name] = str(exc)
    return usable, unavailable


# --------------------------------------------------------------------------------------------
# Chunks


@dataclass(frozen=True)
class ChunkSpec:
    start: int
    stop: int


def plan(*, campaign: Any, params: dict[str, Any]) -> list[ChunkSpec]:
    """Segment ranges; each chunk covers every system and run on its range."""
    n = Segment.objects.filter(campaign=campaign).count()
    size = max(1, int(params["chunk_segments"]))
    return [ChunkSpec(start, min(start + size, n)) for start in range(0, n, size)]


def _references(campaign: Any, start: int, stop: int) -> list[list[str | None]]:
    rows = list(
        Reference.objects.filter(
            segment__campaign=campaign, segment__position__gte=start, segment__position__lt=stop
        ).values_list("segment__position", "index", "text")
    )
    n_refs = max((index for _, index, _ in rows), default=-1) + 1
    streams: list[list[str | None]] = [[None] * (stop - start) for _ in range(n_refs)]
    for position, index, text in rows:
        streams[index][position - start] = text
    return streams


def _references_per_segment(campaign: Any) -> int | str:
    """References per segment as sacreBLEU's signature gives it: a count, or ``var`` where
    documents have fewer references than others."""
    counts = set(
        Segment.objects.filter(campaign=campaign)
        .annotate(n=Count("references"))
        .values_list("n", flat=True)
        .distinct()
    )
    if len(counts) > 1:
        return "var"
    return counts.pop() if counts else 0


def _signature_refs(value: Any) -> int | str:
    return value if value == "var" else int(value)


def _save(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def load_array(data: bytes | memoryview) -> np.ndarray:
    """An array stored by this module (statistics chunks, segment scores)."""
    return _load(data)


def _load(data: bytes | memoryview) -> np.ndarray:
    return np.load(io.BytesIO(bytes(data)), allow_pickle=False)


def chunk_compute(*, job: AnalysisJob, start: int, stop: int) -> int:
    """Statistics of every metric for segments ``[start, stop)`` of every run; rows stored."""
    campaign = job.campaign
    params = job.params
    runs = list(Run.objects.filter(system__campaign=campaign).order_by("system__name", "position"))
    texts: dict[int, list[str]] = {run.pk: [""] * (stop - start) for run in runs}
    for run_id, position, text in Translation.objects.filter(
        run__in=runs, segment__position__gte=start, segment__position__lt=stop
    ).values_list("run_id", "segment__position", "text"):
        texts[run_id][position - start] = text
    references = _references(campaign, start, stop)
    metrics, _ = usable_metrics(params)
    rows: list[StatsChunk] = []
    outputs = [texts[run.pk] for run in runs]
    # A segment without one of the references has None there, as sacreBLEU takes it.
    for name, stats in extract_all(metrics, outputs, references).items():  # type: ignore[arg-type]
        rows.extend(
            StatsChunk(job=job, run=run, metric=name, start=start, stop=stop, data=_save(stats[k]))
            for k, run in enumerate(runs)
        )
    StatsChunk.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["job", "run", "metric", "start"],
        update_fields=["stop", "data"],
    )
    return len(rows)


def chunks_stored(job: AnalysisJob) -> int:
    """How many chunk ranges are complete (every run and metric stored)."""
    per_range = (
        StatsChunk.objects.filter(job=job)
        .values("start")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    metrics, _ = usable_metrics(job.params)
    expected = len(metrics) * Run.objects.filter(system__campaign=job.campaign_id).count()
    return sum(1 for n in per_range if n >= expected)


def statistics_arrays(job: AnalysisJob, metric: str) -> dict[int, np.ndarray]:
    """Per run: the full ``(n_segments, n_stats)`` statistics of ``metric``."""
    parts: dict[int, list[tuple[int, np.ndarray]]] = {}
    for run_id, start, data in (
        StatsChunk.objects.filter(job=job, metric=metric)
        .values_list("run_id", "start", "data")
        .iterator()
    ):
        parts.setdefault(run_id, []).append((start, _load(data)))
    return {
        run_id: np.concatenate([a for _, a in sorted(chunks, key=lambda c: c[0])], axis=0)
        for run_id, chunks in parts.items()
    }


# --------------------------------------------------------------------------------------------
# Finalize: metric scores, significance


def _matrix(values: np.ndarray) -> list[list[float | None]]:
    return [[finite_or_none(v) for v in row] for row in values]


@dataclass
class MetricArrays:
    """The statistics of one metric: per system ``(n_runs, n_segments, n_stats)``."""

    metric: Metric
    systems: list[System]
    arrays: list[np.ndarray]


def metric_arrays(
    job: AnalysisJob, name: str, metric: Metric, systems: list[System]
) -> MetricArrays:
    per_run = statistics_arrays(job, name)
    arrays = [np.stack([per_run[run.pk] for run in system.runs.all()]) for system in systems]
    return MetricArrays(metric, systems, arrays)


def metric_scores(data: MetricArrays, params: dict[str, Any], baseline: System) -> MetricScores:
    """Corpus scores per run with bootstrap CIs, MultEval's table against the baseline, and the
    all-pairs paired bootstrap and approximate randomisation matrices."""
    metric = data.metric
    score_fn = metric.score_from_statistics
    seed = params["seed"]
    resamples = params["resamples"]
    n_trials = params["ar_trials"]
    stacked = np.concatenate(data.arrays, axis=0)
    ci = bootstrap_ci(stacked, score_fn, n_samples=resamples, rng=seed)
    # All pairs: each system's runs pooled (segments × runs), as MultEval pools them; systems
    # with fewer runs than the others are compared on their first runs only.
    n_runs = min(a.shape[0] for a in data.arrays)
    pooled = np.stack([a[:n_runs].transpose(1, 0, 2).reshape(-1, a.shape[2]) for a in data.arrays])
    # Every row of the matrices is one system against all, each test seeded alike (as
    # sacreBLEU tests every system); all_pairs_tests draws and multiplies once for all rows.
    tests = all_pairs_tests(pooled, score_fn, n_samples=resamples, n_trials=n_trials, seed=seed)
    same_runs = all(a.shape[0] == n_runs for a in data.arrays)
    multeval = compare_runs(
        [(s.name, a) for s, a in zip(data.systems, data.arrays, strict=True)],
        score_fn,
        baseline=baseline.name,
        n_bootstrap=resamples,
        n_trials=n_trials,
        rng=seed,
        # ci drew the same resamples; with as many runs everywhere, MultEval's AR against the
        # baseline is the baseline's row of the all-pairs AR. Neither is computed twice.
        boot_std=ci.std,
        baseline_tests=_baseline_row(data, tests, baseline) if same_runs else None,
    )
    return MetricScores(
        key=metric.name,
        label=metric.label,
        signature=metric.signature(n_refs=_signature_refs(params.get("n_references", 1)))
        .with_resampling(bootstrap=resamples, trials=n_trials, seed=seed)
        .format(),
        higher_is_better=metric.higher_is_better,
        systems=_system_scores(data, ci, multeval),
        pairwise=_pairwise(data, tests, n_runs),
    )


def _system_scores(
    data: MetricArrays, ci: BootstrapCI, multeval: MultiRunComparison
) -> list[SystemScore]:
    """Per system: every run's score with its bootstrap CI (``ci`` has one entry per run, in the
    order of ``data.arrays``) and the system's MultEval row."""
    by_name = {row.name: row for row in multeval.systems}
    scores = []
    offset = 0
    for system, array in zip(data.systems, data.arrays, strict=True):
        runs = []
        for k, run in enumerate(system.runs.all()):
            i = offset + k
            runs.append(
                RunScore(
                    id=run.pk,
                    name=run.name,
                    score=finite_or_none(ci.score[i]),
                    ci_low=finite_or_none(ci.low[i]),
                    ci_high=finite_or_none(ci.high[i]),
                    boot_std=finite_or_none(ci.std[i]),
                )
            )
        offset += array.shape[0]
        row = by_name[system.name]
        scores.append(
            SystemScore(
                id=system.pk,
                name=system.name,
                runs=runs,
                mean=finite_or_none(row.mean),
                s_sel=finite_or_none(row.s_sel),
                s_opt=finite_or_none(row.s_opt),
                p_baseline=finite_or_none(row.p_value),
                delta_baseline=finite_or_none(row.observed_delta),
            )
        )
    return scores


def _baseline_row(
    data: MetricArrays, tests: AllPairs, baseline: System
) -> dict[int, tuple[float, float]]:
    """MultEval's tests against the baseline, read from the all-pairs row of the baseline."""
    b = next(i for i, s in enumerate(data.systems) if s.pk == baseline.pk)
    return {
        j: (float(tests.ar_p[b, j]), float(tests.observed_delta[b, j]))
        for j in range(len(data.systems))
        if j != b
    }


def _pairwise(data: MetricArrays, tests: AllPairs, n_runs: int) -> Pairwise:
    """Paired bootstrap and approximate randomisation of every pair of systems."""
    boot_p = tests.bootstrap_p.copy()
    ar_p = tests.ar_p.copy()
    # Share of resamples in which system i did better than system j.
    wins = (tests.wins if data.metric.higher_is_better else tests.losses).copy()
    delta = tests.observed_delta
    np.fill_diagonal(boot_p, np.nan)
    np.fill_diagonal(ar_p, np.nan)
    np.fill_diagonal(wins, np.nan)
    return Pairwise(
        systems=[s.pk for s in data.systems],
        pooled_runs=n_runs,
        bootstrap_p=_matrix(boot_p),
        ar_p=_matrix(ar_p),
        delta=_matrix(delta),
        win_share=_matrix(wins),
    )


def finalize(job: AnalysisJob, *, progress: Progress | None = None) -> None:
    """Compute and store the three result documents of a job whose chunks are all stored."""
    from metrics.correlations import correlations_compute
    from metrics.human import human_compute

    campaign = job.campaign
    # A job queued before the parameters had today's names reads them under those names.
    params = params_read(job.params)
    systems = list(
        System.objects.filter(campaign=campaign).prefetch_related("runs").order_by("name")
    )
    baseline = next((s for s in systems if s.pk == params["baseline"]), systems[0])
    params["n_references"] = _references_per_segment(campaign)
    metrics, unavailable = usable_metrics(params)
    n_segments = Segment.objects.filter(campaign=campaign).count()
    scored = _score_metrics(job, metrics, systems, baseline, params, progress)
    metrics_doc = MetricsDocument(
        version=params["version"],
        params=params,
        n_segments=n_segments,
        systems=[
            SystemRuns(
                id=s.pk, name=s.name, runs=[Named(id=r.pk, name=r.name) for r in s.runs.all()]
            )
            for s in systems
        ],
        baseline=Named(id=baseline.pk, name=baseline.name),
        unavailable=unavailable,
        metrics=scored.docs,
    )
    human_doc = human_compute(campaign=campaign)
    if progress:
        progress(1)
    correlations_doc = correlations_compute(
        campaign=campaign,
        params=params,
        metrics=metrics,
        metric_docs=scored.docs,
        metric_stats=scored.stats,
        sentence=scored.sentence,
        systems=systems,
        human_doc=human_doc,
    )
    if progress:
        progress(1)
    for kind, data in (
        (AnalysisResult.Kind.METRICS, metrics_doc.to_json()),
        (AnalysisResult.Kind.HUMAN, human_doc),
        (AnalysisResult.Kind.CORRELATIONS, correlations_doc.to_json()),
    ):
        AnalysisResult.objects.update_or_create(
            job=job,
            kind=kind,
            defaults={"campaign": campaign, "fingerprint": job.fingerprint, "data": data},
        )
    logger.info("analysis %s of %s finished at %s", job.pk, campaign.pk, timezone.now())


@dataclass
class _ScoredMetrics:
    """Per metric: its scores document, its statistics per system and its sentence scores per
    run (keyed by metric name, except ``docs``, in the metrics' order)."""

    docs: list[MetricScores]
    stats: dict[str, list[np.ndarray]]
    sentence: dict[str, dict[int, np.ndarray]]


def _score_metrics(
    job: AnalysisJob,
    metrics: dict[str, Metric],
    systems: list[System],
    baseline: System,
    params: dict[str, Any],
    progress: Progress | None,
) -> _ScoredMetrics:
    """Every metric's scores document, and its sentence scores, stored per run (one progress
    step per metric)."""
    metric_docs = []
    sentence: dict[str, dict[int, np.ndarray]] = {}
    metric_stats: dict[str, list[np.ndarray]] = {}
    for name, metric in metrics.items():
        data = metric_arrays(job, name, metric, systems)
        metric_docs.append(metric_scores(data, params, baseline))
        metric_stats[name] = data.arrays
        sentence[name] = {
            run.pk: np.asarray(metric.sentence_score_from_statistics(array[k]), dtype=np.float64)
            for system, array in zip(systems, data.arrays, strict=True)
            for k, run in enumerate(system.runs.all())
        }
        SegmentScores.objects.bulk_create(
            [
                SegmentScores(job=job, run_id=run_id, metric=name, data=_save(scores))
                for run_id, scores in sentence[name].items()
            ],
            update_conflicts=True,
            unique_fields=["job", "run", "metric"],
            update_fields=["data"],
        )
        if progress:
            progress(1)
    return _ScoredMetrics(docs=metric_docs, stats=metric_stats, sentence=sentence)
