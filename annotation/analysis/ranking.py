"""The analysis of ranking criteria: pairwise comparisons from the ranks, the numerical core's
ranking analysis turned into annotator and system rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from annotation.analysis.families.base import CriterionQC
from annotation.analysis.results import (
    AnnotatorResult,
    CriterionAnalysis,
    Method,
    SystemResult,
    annotator_common_fields,
    by_rank,
    kappa_result,
    significance_matrix,
)
from annotation.analysis.settings import AnalysisSettings
from annotation.analysis.tables import (
    CriterionTable,
    Names,
    system_codes,
    system_name,
    system_positions,
)
from evalcore.human import (
    ItemType,
    RankingAnalysis,
    analyse_rankings,
)
from evalcore.numbers import finite_or_none
from evalcore.version import code_stamp


def ranking_analysis(
    table: CriterionTable, settings: AnalysisSettings, names: Names, verdicts: CriterionQC
) -> CriterionAnalysis:
    judgments = table.judgments
    definition = table.definition
    # As for scores: the include mask (QC verdicts and decisions) goes to the whole analysis,
    # which runs the same QC again inside so that its result is self-contained.
    include = verdicts.included
    result = analyse_rankings(
        judgments,
        qc_test=settings.qc_test,
        qc_space=settings.ranking_qc_space,
        threshold=settings.threshold,
        idle_cap=settings.idle_cap,
        include=include,
        alpha=settings.alpha,
        n_bootstrap=settings.trueskill_runs,
        confidence=settings.confidence,
        rng=settings.seed,
    )
    return CriterionAnalysis(
        config_id=table.config.pk,
        config_name=table.config.name,
        protocol=table.config.protocol,
        criterion=table.criterion,
        criterion_label=str(definition.label),
        kind="ranking",
        scale=(definition.minimum, int(judgments.score.max()) if len(judgments) else 1),
        n_rows=len(judgments),
        n_annotators=judgments.n_annotators,
        n_segments=judgments.n_segments,
        annotators=_ranking_annotators(table, result, verdicts.statuses, names),
        systems=_ranking_systems(table, result, include, names),
        agreement=[
            kappa_result("inter-annotator κ", result.inter_kappa),
            kappa_result("intra-annotator κ (repeats)", result.intra_kappa),
        ],
        significance=significance_matrix(
            table, result.significance, result.clusters, names, settings
        ),
        method=Method(
            analysis="evalcore.human.analyse_rankings",
            qc_test=settings.qc_test,
            qc_space=settings.ranking_qc_space,
            threshold=settings.threshold,
            idle_cap=settings.idle_cap,
            include_failed=settings.include_failed,
            exclude_untested=settings.exclude_untested,
            repeat_agreement="identical order share; mean Kendall tau-b",
            order="expected_wins",
            significance_test="sign",
            alpha=settings.alpha,
            chance="tie_rate",
            confidence=settings.confidence,
            trueskill_runs=settings.trueskill_runs,
            trueskill_environment=list(result.trueskill.environment),
            # The seed given: an int is the seed the analysis reports (resolve_rng).
            seed=settings.seed,
            version=code_stamp(),
        ),
    )


def _ranking_annotators(
    table: CriterionTable, result: RankingAnalysis, statuses: list[str], names: Names
) -> list[AnnotatorResult]:
    judgments = table.judgments
    qc = result.qc
    bad = qc.bad_reference
    repeats = qc.repeats
    time = qc.time
    rows = np.bincount(judgments.annotator, minlength=judgments.n_annotators)
    annotators = []
    for code, annotator_id in enumerate(table.annotator_ids.tolist()):
        annotators.append(
            AnnotatorResult(
                **annotator_common_fields(
                    names, annotator_id, code, int(rows[code]), statuses[code], bad, result.included
                ),
                # Rankings: repeated screens, and the share ranked in exactly the same order.
                repeats_n=int(repeats.n_screens[code]),
                repeats_share_within=finite_or_none(repeats.share_identical[code]),
                repeats_pearson=None,
                references_n=int(qc.references.n[code]),
                references_mean=finite_or_none(qc.references.mean[code]),
                time_seconds=float(time.seconds[code]),
                n_screens=int(time.n_screens[code]),
                n_unknown_time=int(time.n_unknown[code]),
                n_capped=int(time.n_capped[code]),
                mean=None,
                sd=None,
                degenerate=False,
                qc_uninformative=int(bad.n_uninformative[code]),
                repeats_kendall_tau=finite_or_none(repeats.kendall_tau[code]),
            )
        )
    return annotators


def _ranking_systems(
    table: CriterionTable, result: RankingAnalysis, include: Any, names: Names
) -> list[SystemResult]:
    clusters = result.clusters
    wins = result.expected_wins
    skill = result.trueskill
    judgments = table.judgments
    n_systems = table.system_ids.shape[0]
    position = system_positions(clusters.order, n_systems)
    # Judgments and segments that entered the rankings: REAL rows of included annotators.
    used = (judgments.item_type == ItemType.REAL) & np.asarray(include, dtype=bool)[
        judgments.annotator
    ]
    n_judgments = np.bincount(judgments.system[used], minlength=n_systems)
    pairs = np.unique(
        judgments.system[used] * max(judgments.n_segments, 1) + judgments.segment[used]
    )
    n_segments = np.bincount(pairs // max(judgments.n_segments, 1), minlength=n_systems)
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
            n_judgments=int(n_judgments[code]),
            n_segments=int(n_segments[code]),
            score=finite_or_none(wins.score[code]),
            mean_raw=None,
            mean_shifted=None,
            mean_z=None,
            t_low=None,
            t_high=None,
            boot_low=None,
            boot_high=None,
            expected_wins=finite_or_none(wins.score[code]),
            n_opponents=int(wins.n_opponents[code]),
            no_worse_share=finite_or_none(result.no_worse.share[code]),
            no_worse_n=int(result.no_worse.n[code]),
            trueskill_mu=finite_or_none(skill.mu[code]),
            trueskill_sigma=finite_or_none(skill.sigma[code]),
            trueskill_rank=int(skill.rank[code]),
            # Without bootstrap runs there is no range (the point rank is not one).
            trueskill_rank_low=int(skill.rank_low[code]) if skill.n_bootstrap else None,
            trueskill_rank_high=int(skill.rank_high[code]) if skill.n_bootstrap else None,
        )
        for code in system_codes(table)
    ]
    return by_rank(rows)
