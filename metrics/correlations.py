"""Metric–human correlations of a campaign (the meta-evaluation of DESIGN §9), as one JSON
document for the dashboard (:class:`metrics.documents.CorrelationsDocument`).

For every human criterion that has judgments (adequacy, fluency, DA score, rank) and every metric:

- **system level**: Pearson, Spearman and Kendall τ-b between the human system scores and the
  metric's corpus scores (mean over runs), each with a bootstrap interval over segments
  (:func:`evalcore.stats.meta.system_correlation_bootstrap`), and pairwise accuracy; the points
  and the least-squares line of the scatter plot. The bootstrap resamples the statistic of the
  point: for score criteria the human analysis' system score (mean of segment scores in its
  space, REAL and REPEAT judgments of included annotators), for rankings Expected Wins of the
  per-segment pairwise win counts (REAL comparisons of included annotators);
- **segment level**: Pearson between each translation's mean z-score (the same judgments) and its
  sentence score (score criteria), and the WMT DARR Kendall-like τ — DA pairs of translations of
  one segment whose mean raw scores differ by more than 25, or rank pairs of one screen (REAL
  outputs of included annotators) with different ranks;
- **Williams test** between every two metrics' system-level Pearson correlations.

Error metrics (TER, WER, PER) are negated first, so that a metric that agrees with the humans
always correlates positively. Human translations rated as systems (``System.human``: Google's
``ref-A``, WMT's ``Human-B``) are left out at both levels, as the metrics tasks leave them out,
and named in the document (``human_systems_left_out``).

Everything is whole-array numpy: one numeric query per criterion for the judgments (the human
analysis' table) and one for their outputs' runs, filtered by protocol config and criterion (no
list of judgment ids is sent to the database).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from annotation.analysis.families.registry import family_of_result
from annotation.analysis.results import CriterionAnalysis, HumanDocument
from annotation.analysis.tables import (
    CriterionTable,
    criterion_table_load,
    criterion_values,
    values_array,
)
from annotation.models import ProtocolConfig, Run, Segment, System
from evalcore.numbers import finite_or_none
from evalcore.stats.correlation import (
    DarrTau,
    darr_kendall,
    pairwise_accuracy,
    pearson,
    williams_test,
)
from evalcore.stats.meta import least_squares_line, system_correlation_bootstrap
from metrics.documents import (
    CorrelationParams,
    CorrelationsDocument,
    CriterionCorrelations,
    Darr,
    Fit,
    Interval,
    MetricCorrelation,
    MetricScores,
    Named,
    PearsonZ,
    Point,
    SegmentLevel,
    SystemLevel,
    Williams,
)

DA_PAIR_THRESHOLD = 25.0

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class _CriterionInputs:
    """What one criterion contributes: the human side of the system-level bootstrap and, per
    judgment row, what the segment-level correlations need.

    ``human`` and ``human_fn`` are the arguments of
    :func:`evalcore.stats.meta.system_correlation_bootstrap`: ``(systems, segments, 2)`` ratios
    of ``[segment score, 1]`` (``human_fn`` None), or ``(segments, y·y)`` per-segment pairwise
    win counts with Expected Wins of the chosen systems as ``human_fn``. ``rows`` are the
    judgment rows of the segment level, ``run`` the run id of each row's output (−1 for a
    reference) and ``position`` each row's segment position in the campaign (−1 if unknown).
    """

    table: CriterionTable
    human: FloatArray
    human_fn: Callable[[FloatArray], FloatArray] | None
    rows: NDArray[np.bool_]
    run: IntArray
    position: IntArray
    z: FloatArray | None


def _row_runs(table: CriterionTable) -> IntArray:
    """The run id of each row's output (−1 for references shown as outputs), in row order.

    One numeric query over the criterion's values (a binary COPY on PostgreSQL), aligned with the
    table by value id; a value added since the table was read is simply not looked up.
    """
    data = values_array(
        criterion_values(config=table.config, criterion=table.criterion).order_by("id"),
        ("id", "output__run_id"),
    )
    ids = data[:, 0].astype(np.int64)
    runs = np.where(np.isfinite(data[:, 1]), data[:, 1], -1).astype(np.int64)
    out = np.full(table.value_ids.shape[0], -1, dtype=np.int64)
    if ids.size:
        at = np.minimum(np.searchsorted(ids, table.value_ids), ids.size - 1)
        found = ids[at] == table.value_ids
        out[found] = runs[at[found]]
    # Rows crediting a merged output to another system: that system's run.
    credited = table.credited_runs.shape[0]
    if credited:
        out[-credited:] = table.credited_runs
    return out


def _criterion_inputs(
    config: ProtocolConfig,
    crit: CriterionAnalysis,
    chosen: list[System],
    segment_index: dict[int, int],
) -> _CriterionInputs | None:
    """The human statistics of one criterion, defined exactly as the human analysis defines the
    point values the correlations use (``crit``: its entry in the human document):

    * scores: the system score is the mean over segments of the segment scores in the analysis'
      space, from the judgments of included annotators on REAL and REPEAT items (the default of
      :func:`evalcore.human.systems.system_scores`), normalised on the analysis' basis;
    * rankings: Expected Wins of the REAL pairwise comparisons of included annotators.

    The criterion's analysis family computes them (:meth:`AnalysisFamily.human_side`).
    """
    table = criterion_table_load(config=config, criterion=crit.criterion)
    j = table.judgments
    if len(j.score) == 0:
        return None
    n_segments = len(segment_index)
    included_ids = [a.annotator_id for a in crit.annotators if a.included]
    include = np.isin(table.annotator_ids, np.asarray(included_ids, dtype=np.int64))
    seg_pos = np.array([segment_index.get(int(s), -1) for s in table.segment_ids], np.int64)
    run = _row_runs(table)
    position = seg_pos[j.segment] if len(j.segment) else np.zeros(0, np.int64)
    code_of = {int(pk): code for code, pk in enumerate(table.system_ids.tolist())}
    chosen_codes = np.array([code_of.get(s.pk, -1) for s in chosen], dtype=np.int64)

    side = family_of_result(crit).human_side(
        table, crit, include, seg_pos, chosen_codes, n_segments
    )
    return _CriterionInputs(
        table=table,
        human=side.human,
        human_fn=side.human_fn,
        rows=side.rows,
        run=run,
        position=position,
        z=side.z,
    )


def _sentence_lookup(
    sentence: dict[int, np.ndarray], run: IntArray, position: IntArray
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Each row's sentence score of its (run, segment), and where there is one."""
    run_ids = np.array(sorted(sentence), dtype=np.int64)
    if run_ids.size == 0:
        return np.full(run.shape, np.nan), np.zeros(run.shape, dtype=bool)
    table = np.stack([np.asarray(sentence[int(r)], dtype=np.float64) for r in run_ids])
    at = np.minimum(np.searchsorted(run_ids, run), run_ids.size - 1)
    known = (run_ids[at] == run) & (position >= 0) & (position < table.shape[1])
    values = np.full(run.shape, np.nan)
    values[known] = table[at[known], position[known]]
    return values, known


def _segment_level(
    inputs: _CriterionInputs,
    sentence: dict[int, np.ndarray],
    oriented: float,
    slider: bool,
) -> SegmentLevel:
    j = inputs.table.judgments
    metric_of_row, known = _sentence_lookup(sentence, inputs.run, inputs.position)
    if inputs.z is None:  # ranking: pairs of outputs ranked on one screen
        use = inputs.rows & known
        if use.any():
            darr = darr_kendall(
                -j.score[use],  # rank 1 is best
                oriented * metric_of_row[use],
                j.screen[use],
                threshold=0.0,
            )
            return SegmentLevel(darr=_darr(darr, 0.0, "ranks on one screen"))
        return SegmentLevel()
    z = inputs.z
    use = inputs.rows & known & np.isfinite(z)
    # One point per translation (run, segment): the mean of its judgments.
    width = int(inputs.position.max()) + 1 if use.any() else 1
    key = inputs.run[use] * width + inputs.position[use]
    translations, first, which = np.unique(key, return_index=True, return_inverse=True)
    if translations.size < 3:
        return SegmentLevel()
    count = np.bincount(which, minlength=translations.size)
    mean_z = np.bincount(which, weights=z[use], minlength=translations.size) / count
    metric = oriented * metric_of_row[use][first]  # one sentence score per translation
    pearson_z = PearsonZ(value=finite_or_none(pearson(mean_z, metric)), n=int(translations.size))
    if not slider:
        return SegmentLevel(pearson_z=pearson_z)
    raw = np.bincount(which, weights=j.score[use], minlength=translations.size) / count
    darr = darr_kendall(raw, metric, translations % width, threshold=DA_PAIR_THRESHOLD)
    return SegmentLevel(
        darr=_darr(darr, DA_PAIR_THRESHOLD, "DA translations of one segment"), pearson_z=pearson_z
    )


def _darr(darr: DarrTau, threshold: float, pairs_from: str) -> Darr:
    return Darr(
        tau=finite_or_none(darr.tau),
        concordant=darr.concordant,
        discordant=darr.discordant,
        pairs=darr.pairs,
        threshold=threshold,
        pairs_from=pairs_from,
    )


def correlations_compute(
    *,
    campaign: Any,
    params: dict[str, Any],
    metrics: dict[str, Any],
    metric_docs: list[MetricScores],
    metric_stats: dict[str, list[np.ndarray]],
    sentence: dict[str, dict[int, np.ndarray]],
    systems: list[System],
    human_doc: HumanDocument | Mapping[str, Any],
) -> CorrelationsDocument:
    """The correlation document; see the module docstring. ``human_doc`` is the ``human``
    document (:class:`HumanDocument` or its stored JSON)."""
    segments = list(
        Segment.objects.filter(campaign=campaign).order_by("position").values_list("pk", flat=True)
    )
    segment_index = {pk: i for i, pk in enumerate(segments)}
    seed = params["seed"]
    resamples = params["resamples"]
    configs = {c.pk: c for c in ProtocolConfig.objects.filter(campaign=campaign)}
    human = [s for s in systems if s.human]
    if human:
        # Their rows drop out of the segment level with their runs' sentence scores; the
        # system level leaves them out of its chosen systems (_criterion_correlations).
        left_out = set(Run.objects.filter(system__in=human).values_list("pk", flat=True))
        sentence = {
            key: {run: v for run, v in runs.items() if run not in left_out}
            for key, runs in sentence.items()
        }
    out_criteria = []
    for crit in HumanDocument.read(human_doc).analysis.criteria:
        config = configs.get(crit.config_id)
        if config is None:
            continue
        criterion = _criterion_correlations(
            config,
            crit,
            metrics=metrics,
            metric_docs=metric_docs,
            metric_stats=metric_stats,
            sentence=sentence,
            systems=systems,
            segment_index=segment_index,
            resamples=resamples,
            seed=seed,
        )
        if criterion is not None:
            out_criteria.append(criterion)
    return CorrelationsDocument(
        version=params["version"],
        params=CorrelationParams(
            resamples=resamples, seed=seed, da_pair_threshold=DA_PAIR_THRESHOLD
        ),
        criteria=out_criteria,
        human_systems_left_out=[Named(id=s.pk, name=s.name) for s in human],
    )


def _criterion_correlations(
    config: ProtocolConfig,
    crit: CriterionAnalysis,
    *,
    metrics: dict[str, Any],
    metric_docs: list[MetricScores],
    metric_stats: dict[str, list[np.ndarray]],
    sentence: dict[str, dict[int, np.ndarray]],
    systems: list[System],
    segment_index: dict[int, int],
    resamples: int,
    seed: int,
) -> CriterionCorrelations | None:
    """One criterion's entry: every metric at system and segment level, and the Williams tests
    between them; None when the criterion has no judgments."""
    family = family_of_result(crit)
    point = {s.system_id: family.point(s) for s in crit.systems if s.position > 0}
    chosen = [
        i
        for i, s in enumerate(systems)
        if not s.human and finite_or_none(point.get(s.pk)) is not None
    ]
    inputs = _criterion_inputs(config, crit, [systems[i] for i in chosen], segment_index)
    if inputs is None:
        return None
    slider = crit.scale[1] - crit.scale[0] > 10
    metrics_out = []
    oriented_points: dict[str, np.ndarray] = {}
    human_point = [point[systems[i].pk] for i in chosen]
    for doc in metric_docs:
        key = doc.key
        sign = 1.0 if doc.higher_is_better else -1.0
        system_level = None
        if len(chosen) >= 3:
            system_level, oriented_points[key] = _system_level(
                inputs,
                metrics[key],
                doc,
                sign,
                stats=np.stack([metric_stats[key][i] for i in chosen]),
                chosen=[systems[i] for i in chosen],
                human_point=human_point,
                resamples=resamples,
                seed=seed,
            )
        metrics_out.append(
            MetricCorrelation(
                key=key,
                label=doc.label,
                oriented=sign < 0,
                segment=_segment_level(inputs, sentence[key], sign, slider),
                system=system_level,
            )
        )
    return CriterionCorrelations(
        config_id=crit.config_id,
        config_name=crit.config_name,
        criterion=crit.criterion,
        label=crit.criterion_label,
        kind=crit.kind,
        human_score=family.human_score(crit),
        metrics=metrics_out,
        williams=_williams(human_point, oriented_points, len(chosen)),
    )


def _number(value: float | None, system: str) -> float:
    """A system's mean metric score, which every system in a correlation has."""
    if value is None:
        raise ValueError(f"system {system!r} has no metric score to correlate")
    return value


def _system_level(
    inputs: _CriterionInputs,
    metric: Any,
    doc: MetricScores,
    sign: float,
    *,
    stats: np.ndarray,
    chosen: list[System],
    human_point: list[Any],
    resamples: int,
    seed: int,
) -> tuple[SystemLevel, np.ndarray]:
    """One metric's system-level entry (correlations with bootstrap intervals, pairwise
    accuracy, scatter points and fitted line) and its oriented system scores."""

    # The human side is the statistic whose point value the human analysis reports
    # (mean segment score or Expected Wins), recomputed from every resample.
    def oriented_score(summed: np.ndarray) -> np.ndarray:
        return np.asarray(sign * metric.score_from_statistics(summed), dtype=np.float64)

    result = system_correlation_bootstrap(
        inputs.human,
        stats,
        oriented_score,
        human_score_fn=inputs.human_fn,
        n_samples=resamples,
        rng=seed,
    )
    mean_of = {d.id: d.mean for d in doc.systems}
    metric_point = [sign * _number(mean_of[system.pk], system.name) for system in chosen]
    oriented = np.array(metric_point)
    slope, intercept = least_squares_line(metric_point, human_point)
    interval = {
        m: Interval(
            value=finite_or_none(r.value), low=finite_or_none(r.low), high=finite_or_none(r.high)
        )
        for m, r in result.items()
    }
    entry = SystemLevel(
        n=len(chosen),
        pearson=interval["pearson"],
        spearman=interval["spearman"],
        kendall=interval["kendall"],
        pairwise_accuracy=finite_or_none(pairwise_accuracy(human_point, metric_point)),
        points=[
            Point(system_id=system.pk, name=system.name, human=h, metric=m)
            for system, h, m in zip(chosen, human_point, metric_point, strict=True)
        ],
        fit=Fit(slope=finite_or_none(slope), intercept=finite_or_none(intercept)),
    )
    return entry, oriented


def _williams(
    human_point: list[Any], oriented_points: dict[str, np.ndarray], n_systems: int
) -> Williams:
    """Williams test p-values between every two metrics' system-level Pearson correlations
    (None on the diagonal and where a correlation is undefined)."""
    keys = list(oriented_points)
    if n_systems < 4 or len(keys) < 2:
        return Williams(metrics=[], p=[])
    p = []
    for a in keys:
        row: list[float | None] = []
        for b in keys:
            if a == b:
                row.append(None)
                continue
            r12 = pearson(human_point, oriented_points[a])
            r13 = pearson(human_point, oriented_points[b])
            r23 = pearson(oriented_points[a], oriented_points[b])
            if not all(np.isfinite([r12, r13, r23])):
                row.append(None)
                continue
            row.append(finite_or_none(williams_test(r12, r13, r23, n_systems).p_value))
        p.append(row)
    return Williams(metrics=keys, p=p)
