"""The whole analysis of one criterion in one call, with the defaults of DESIGN §4–6.

Scores (1–5, 0–100): QC → normalisation → system scores of the annotators who passed →
pairwise significance → clusters, plus inter- and intra-annotator α.
Rankings: QC on ranks → comparisons of the annotators who were not caught → "no worse than
others", Expected Wins, TrueSkill, sign-test clusters, plus inter- and intra-annotator κ.

Each step is a public function of its own module; these two only fix the order and the defaults,
so that the web app, the Celery task and the benchmark run the same analysis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trueskill

from evalcore.human.agreement import (
    Alpha,
    Chance,
    Kappa,
    inter_annotator_alpha,
    intra_annotator_alpha,
    ranking_kappa,
)
from evalcore.human.judgments import BoolArray, ItemType, Judgments
from evalcore.human.normalisation import Basis, Normalised, Space, normalise
from evalcore.human.qc import (
    DEFAULT_IDLE_CAP,
    DEFAULT_THRESHOLD,
    AnnotatorQC,
    QCSpace,
    QCTest,
    RankingQC,
    RankingRepeatConsistency,
    RankSpace,
    annotator_qc,
    ranking_qc,
)
from evalcore.human.rankings import (
    Comparisons,
    ExpectedWins,
    NoWorseShares,
    TrueSkillRanking,
    expected_wins,
    no_worse_than_others,
    pairwise_comparisons,
    trueskill_ranking,
)
from evalcore.human.systems import (
    DEFAULT_ALPHA,
    DEFAULT_CONFIDENCE,
    Clusters,
    PairwiseSignificance,
    SignificanceTest,
    SystemScores,
    comparison_significance,
    pairwise_significance,
    system_scores,
    wmt_clusters,
)
from evalcore.stats.resampling import resolve_rng


@dataclass(frozen=True)
class ScoreAnalysis:
    """Everything :func:`analyse_scores` computed; ``included`` marks the annotators whose
    judgments entered the system scores (``qc.passed`` unless failed ones were included)."""

    qc: AnnotatorQC
    normalised: Normalised
    included: BoolArray
    systems: SystemScores
    significance: PairwiseSignificance
    clusters: Clusters
    inter_alpha_interval: Alpha
    inter_alpha_ordinal: Alpha
    intra_alpha_interval: Alpha
    seed: int | None


def analyse_scores(
    judgments: Judgments,
    *,
    tolerance: float,
    qc_test: QCTest = "paired_t",
    qc_space: QCSpace = "raw",
    threshold: float = DEFAULT_THRESHOLD,
    basis: Basis = "real_and_repeat",
    idle_cap: float = DEFAULT_IDLE_CAP,
    include_failed: bool = False,
    include: BoolArray | None = None,
    space: Space = "z",
    test: SignificanceTest = "wilcoxon",
    alpha: float = DEFAULT_ALPHA,
    confidence: float = DEFAULT_CONFIDENCE,
    n_bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> ScoreAnalysis:
    """Analyse the judgments of a scoring protocol (adequacy, fluency, direct assessment).

    Annotators who fail QC are left out of the system scores unless ``include_failed``; an
    explicit ``include`` mask (an organizer's decision per annotator) overrides both. Agreement
    is computed over all annotators' raw scores. ``tolerance`` is the repeat tolerance
    (``qc.TOLERANCE_1_TO_5`` or ``qc.TOLERANCE_0_TO_100``). One seed drives every random step.
    """
    generator, seed = resolve_rng(rng)
    qc = annotator_qc(
        judgments,
        tolerance=tolerance,
        test=qc_test,
        space=qc_space,
        threshold=threshold,
        basis=basis,
        idle_cap=idle_cap,
    )
    normalised = normalise(judgments, basis=basis)
    if include is not None:
        included = np.asarray(include, dtype=bool)
    elif include_failed:
        included = np.ones(judgments.n_annotators, dtype=bool)
    else:
        included = qc.passed
    systems = system_scores(
        judgments,
        normalised,
        include=included,
        space=space,
        confidence=confidence,
        n_bootstrap=n_bootstrap,
        rng=generator,
    )
    significance = pairwise_significance(
        systems.segments, test=test, n_samples=n_bootstrap, rng=generator
    )
    clusters = wmt_clusters(systems.score, significance, alpha=alpha)
    return ScoreAnalysis(
        qc=qc,
        normalised=normalised,
        included=included,
        systems=systems,
        significance=significance,
        clusters=clusters,
        inter_alpha_interval=inter_annotator_alpha(judgments, level="interval"),
        inter_alpha_ordinal=inter_annotator_alpha(judgments, level="ordinal"),
        intra_alpha_interval=intra_annotator_alpha(judgments, level="interval"),
        seed=seed,
    )


@dataclass(frozen=True)
class RankingAnalysis:
    """Everything :func:`analyse_rankings` computed (REAL comparisons for the rankings);
    ``included`` marks the annotators whose judgments entered the rankings."""

    qc: RankingQC
    included: BoolArray
    comparisons: Comparisons
    no_worse: NoWorseShares
    expected_wins: ExpectedWins
    trueskill: TrueSkillRanking
    significance: PairwiseSignificance
    clusters: Clusters
    inter_kappa: Kappa
    intra_kappa: Kappa
    repeats: RankingRepeatConsistency
    seed: int | None


def analyse_rankings(
    judgments: Judgments,
    *,
    qc_test: QCTest = "paired_t",
    qc_space: RankSpace = "rank",
    threshold: float = DEFAULT_THRESHOLD,
    idle_cap: float = DEFAULT_IDLE_CAP,
    include_failed: bool = False,
    include_untested: bool = True,
    include: BoolArray | None = None,
    alpha: float = DEFAULT_ALPHA,
    chance: Chance = "tie_rate",
    n_bootstrap: int = 1000,
    confidence: float = DEFAULT_CONFIDENCE,
    environment: trueskill.TrueSkill | None = None,
    rng: np.random.Generator | int | None = None,
) -> RankingAnalysis:
    """Analyse the judgments of a ranking protocol (``score`` = rank, 1 = best).

    QC first (:func:`~evalcore.human.qc.ranking_qc`: degraded outputs ranked worse than their
    originals, ``qc_test`` on ``qc_space`` at ``threshold``). Annotators who failed the test
    are left out of the rankings unless ``include_failed``; annotators the test could not judge
    (no informative bad reference, as in campaigns without them) stay in unless
    ``include_untested`` is False; an explicit ``include`` mask per annotator code (an
    organizer's decision) overrides both. Systems are ordered by Expected Wins; clusters use
    the one-sided sign test on the pairwise wins and losses. Agreement always uses everyone.
    """
    generator, seed = resolve_rng(rng)
    comparisons = pairwise_comparisons(judgments)
    qc = ranking_qc(
        judgments,
        comparisons=comparisons,
        test=qc_test,
        space=qc_space,
        threshold=threshold,
        idle_cap=idle_cap,
    )
    if include is not None:
        included = np.asarray(include, dtype=bool)
    else:
        untested = ~np.isfinite(qc.bad_reference.p_value)
        included = qc.passed | (untested & include_untested) | (~untested & include_failed)
    real = (comparisons.item_type == ItemType.REAL) & included[comparisons.annotator]
    ranked = judgments.select(included[judgments.annotator])
    used = comparisons.select(real)
    wins = expected_wins(used)
    significance = comparison_significance(wins.counts)
    return RankingAnalysis(
        qc=qc,
        included=included,
        comparisons=comparisons,
        no_worse=no_worse_than_others(ranked),
        expected_wins=wins,
        trueskill=trueskill_ranking(
            used,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            rng=generator,
            environment=environment,
        ),
        significance=significance,
        clusters=wmt_clusters(wins.score, significance, alpha=alpha),
        inter_kappa=ranking_kappa(comparisons, kind="inter", chance=chance),
        intra_kappa=ranking_kappa(comparisons, kind="intra", chance=chance),
        repeats=qc.repeats,
        seed=seed,
    )
