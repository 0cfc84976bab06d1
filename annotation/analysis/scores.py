"""The analysis of score criteria (1-5 and 0-100): the numerical core's score analysis turned into
annotator and system rows.

The core reads scores as higher = better. A criterion whose lower scores are better
(``Criterion.higher_is_better=False``: an edit rate such as HTER) is analysed on its negated
scores (:func:`oriented_judgments`), so that its QC expects bad references to score higher
than their originals and its best system is the one with the lowest mean. What that oriented
analysis decides stays as it is: QC verdicts and the test's statistic, p-value and mean
difference (positive: as expected, for every criterion), the order, clusters, rank ranges,
wins and losses, and the significance matrix ("row better than column"). Every figure on the
criterion's own scale is negated back, so it reads as the annotators gave it: a system's
``score``, ``mean_raw``, ``mean_shifted`` and ``mean_z`` (a z mean of HTER is in HTER's
direction too), its t and bootstrap bounds (low and high swap), an annotator's ``mean`` and
``references_mean``. SDs, repeat agreement, α and counts do not depend on the direction.

A protocol config whose scores were imported standardised (a release with z-scores only:
``ProtocolConfig.scores_standardised``) is analysed on its scores as given: in z space
whichever space the settings ask (``Method.space`` says "z", ``Method.scores`` says
"standardised"), its QC test on the given values, and its raw and shifted means, μ_a and σ_a
and repeat share left empty, because the raw scores are not in the release.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from annotation.analysis.families.base import CriterionQC
from annotation.analysis.results import (
    AnnotatorResult,
    CriterionAnalysis,
    Method,
    SystemResult,
    alpha_result,
    annotator_common_fields,
    by_rank,
    significance_matrix,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    repeat_tolerance,
    system_codes,
    system_name,
    system_positions,
)
from annotation.protocols import SCORES_STANDARDISED
from evalcore.human import (
    Judgments,
    ScoreAnalysis,
    SegmentScores,
    SystemScores,
    analyse_scores,
)
from evalcore.human.judgments import FloatArray
from evalcore.numbers import finite_or_none
from evalcore.version import code_stamp


def oriented_judgments(table: CriterionTable) -> Judgments:
    """The table's judgments with higher = better, as the core's score QC, system ranking and
    significance tests read them: negated for a criterion whose lower scores are better, the
    table's own otherwise."""
    judgments = table.judgments
    return judgments if table.definition.higher_is_better else judgments.negated()


def as_given(values: FloatArray, higher_is_better: bool) -> FloatArray:
    """Figures of the oriented analysis back on the criterion's own scale (``0.0 − x`` when
    its lower scores are better, so no −0.0 appears)."""
    return values if higher_is_better else 0.0 - values


def score_analysis(
    table: CriterionTable, settings: AnalysisSettings, names: Names, verdicts: CriterionQC
) -> CriterionAnalysis:
    """The analysis of one score criterion with the QC verdicts and decisions of
    ``verdicts``, computed on :func:`oriented_judgments` (the module's docstring says which
    figures are negated back for a criterion whose lower scores are better)."""
    judgments = table.judgments
    definition = table.definition
    higher_is_better = definition.higher_is_better
    tolerance = repeat_tolerance(definition)
    # Scores imported standardised are analysed as given, in z space (module docstring).
    standardised = judgments.standardised
    space = "z" if standardised else settings.space_for(table.config.definition.analysis_space)
    common: dict[str, Any] = {
        "tolerance": tolerance,
        "qc_test": settings.qc_test,
        "qc_space": "z" if standardised else settings.qc_space,
        "threshold": settings.threshold,
        "basis": settings.basis,
        "idle_cap": settings.idle_cap,
    }
    # The include mask (QC verdicts and decisions) goes to the whole analysis, which runs the
    # same QC again inside (vectorised, cheap) so that its result is self-contained.
    statuses = verdicts.statuses
    result = analyse_scores(
        oriented_judgments(table),
        **common,
        include=verdicts.included,
        space=space,
        test=settings.test,
        alpha=settings.alpha,
        confidence=settings.confidence,
        n_bootstrap=settings.resamples,
        rng=settings.seed,
    )
    return CriterionAnalysis(
        config_id=table.config.pk,
        config_name=table.config.name,
        protocol=table.config.protocol,
        criterion=table.criterion,
        criterion_label=str(definition.label),
        kind="scores",
        scale=(definition.minimum, definition.maximum),
        n_rows=len(judgments),
        n_annotators=judgments.n_annotators,
        n_segments=judgments.n_segments,
        annotators=_score_annotators(table, result, statuses, names, higher_is_better),
        systems=_score_systems(table, result, names, higher_is_better),
        agreement=[
            alpha_result("inter-annotator α (interval)", result.inter_alpha_interval),
            alpha_result("inter-annotator α (ordinal)", result.inter_alpha_ordinal),
            alpha_result("intra-annotator α (interval, repeats)", result.intra_alpha_interval),
        ],
        significance=significance_matrix(
            table, result.significance, result.clusters, names, settings
        ),
        method=Method(
            analysis="evalcore.human.analyse_scores",
            **common,
            include_failed=settings.include_failed,
            exclude_untested=settings.exclude_untested,
            space=space,
            scores=SCORES_STANDARDISED if standardised else None,
            # Only where it holds, so the stored result of every other criterion is unchanged.
            lower_is_better=None if higher_is_better else True,
            significance_test=settings.test,
            alpha=settings.alpha,
            confidence=settings.confidence,
            resamples=settings.resamples,
            # The seed given: an int is the seed the analysis reports (resolve_rng).
            seed=settings.seed,
            version=code_stamp(),
        ),
    )


def _score_annotators(
    table: CriterionTable,
    result: ScoreAnalysis,
    statuses: list[str],
    names: Names,
    higher_is_better: bool,
) -> list[AnnotatorResult]:
    qc = result.qc
    bad = qc.bad_reference
    normalised = result.normalised
    references_mean = as_given(qc.references.mean, higher_is_better)
    annotator_mean = as_given(normalised.annotator_mean, higher_is_better)
    rows = np.bincount(table.judgments.annotator, minlength=table.judgments.n_annotators)
    annotators = []
    for code, annotator_id in enumerate(table.annotator_ids.tolist()):
        annotators.append(
            AnnotatorResult(
                **annotator_common_fields(
                    names, annotator_id, code, int(rows[code]), statuses[code], bad, result.included
                ),
                repeats_n=int(qc.repeats.n[code]),
                repeats_share_within=finite_or_none(qc.repeats.share_within[code]),
                repeats_pearson=finite_or_none(qc.repeats.pearson[code]),
                references_n=int(qc.references.n[code]),
                references_mean=finite_or_none(references_mean[code]),
                time_seconds=float(qc.time.seconds[code]),
                n_screens=int(qc.time.n_screens[code]),
                n_unknown_time=int(qc.time.n_unknown[code]),
                n_capped=int(qc.time.n_capped[code]),
                mean=finite_or_none(annotator_mean[code]),
                sd=finite_or_none(normalised.annotator_sd[code]),
                degenerate=bool(normalised.degenerate[code]),
            )
        )
    return annotators


def systems_as_given(systems: SystemScores, higher_is_better: bool) -> SystemScores:
    """``systems`` on the criterion's own scale: for a criterion whose lower scores are
    better, computed on negated scores, every mean, bound and segment score negated back and
    the bounds of each interval swapped (so low ≤ high still)."""
    if higher_is_better:
        return systems
    segments = systems.segments
    return replace(
        systems,
        mean_raw=0.0 - systems.mean_raw,
        mean_shifted=0.0 - systems.mean_shifted,
        mean_z=0.0 - systems.mean_z,
        score=0.0 - systems.score,
        t_low=0.0 - systems.t_high,
        t_high=0.0 - systems.t_low,
        boot_low=0.0 - systems.boot_high,
        boot_high=0.0 - systems.boot_low,
        segments=SegmentScores(mean=0.0 - segments.mean, count=segments.count),
    )


def _score_systems(
    table: CriterionTable, result: ScoreAnalysis, names: Names, higher_is_better: bool
) -> list[SystemResult]:
    # Order, clusters and ranks are the oriented analysis'; the figures the criterion's own.
    systems = systems_as_given(result.systems, higher_is_better)
    clusters = result.clusters
    position = system_positions(clusters.order, table.system_ids.shape[0])
    rows = [
        SystemResult(
            system_id=int(table.system_ids[code]),
            name=system_name(table, code, names),
            position=int(position[code]),
            cluster=int(clusters.cluster[code]),
            rank_low=int(clusters.rank_low[code]),
            rank_high=int(clusters.rank_high[code]),
            wins=int(clusters.wins[code]),
            losses=int(clusters.losses[code]),
            n_judgments=int(systems.n_judgments[code]),
            n_segments=int(systems.n_segments[code]),
            score=finite_or_none(systems.score[code]),
            mean_raw=finite_or_none(systems.mean_raw[code]),
            mean_shifted=finite_or_none(systems.mean_shifted[code]),
            mean_z=finite_or_none(systems.mean_z[code]),
            t_low=finite_or_none(systems.t_low[code]),
            t_high=finite_or_none(systems.t_high[code]),
            boot_low=finite_or_none(systems.boot_low[code]),
            boot_high=finite_or_none(systems.boot_high[code]),
        )
        for code in system_codes(table)
    ]
    return by_rank(rows)
