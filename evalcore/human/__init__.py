"""The numerical core of the human-judgment analysis: numpy/scipy on arrays, no Django.

Input: a :class:`Judgments` table (parallel arrays, one row per annotator × item × shown output,
one criterion per table; codes ``0..n-1`` for annotators, segments and systems). Output: small
frozen dataclasses of arrays indexed by annotator code or system code. See
``docs/human-analysis.md`` for the methods, formulas, defaults and references.

Modules:
    judgments      the input table, item types, ``link_originals``
    normalisation  mean shift, z-scores, segment scores
    qc             bad-reference tests (scores and ranks), repeat consistency, reference means,
                   time on task
    qc_power       how often that test passes a careful worker and fails a random clicker
    agreement      Krippendorff's α (interval, ordinal), Cohen's κ on ranking comparisons
    rankings       pairwise comparisons, "no worse than others", Expected Wins, TrueSkill
    systems        system scores with t and bootstrap CIs, pairwise significance, WMT clusters
    analysis       the whole analysis of one criterion with the default settings
    documents      document-level scores: z per annotator, system means with bootstrap CIs
    synthetic      deterministic synthetic campaigns with a known truth (tests, benchmark, demos)
"""

from __future__ import annotations

from evalcore.human.agreement import (
    Alpha,
    Kappa,
    inter_annotator_alpha,
    intra_annotator_alpha,
    krippendorff_alpha,
    ranking_kappa,
)
from evalcore.human.analysis import (
    RankingAnalysis,
    ScoreAnalysis,
    analyse_rankings,
    analyse_scores,
)
from evalcore.human.documents import DocumentScores, document_scores
from evalcore.human.judgments import ItemType, Judgments, link_originals
from evalcore.human.normalisation import Normalised, SegmentScores, normalise, segment_scores
from evalcore.human.qc import (
    TOLERANCE_0_TO_100,
    TOLERANCE_1_TO_5,
    AnnotatorQC,
    BadReferenceTest,
    RankingBadReferenceTest,
    RankingQC,
    RankingRepeatConsistency,
    ReferenceScores,
    RepeatConsistency,
    TimeOnTask,
    annotator_qc,
    bad_reference_test,
    ranking_bad_reference_test,
    ranking_qc,
    ranking_repeat_consistency,
    reference_scores,
    repeat_consistency,
    time_on_task,
)
from evalcore.human.rankings import (
    Comparisons,
    ExpectedWins,
    NoWorseShares,
    PairwiseCounts,
    TrueSkillRanking,
    expected_wins,
    no_worse_than_others,
    pairwise_comparisons,
    pairwise_counts,
    trueskill_ranking,
)
from evalcore.human.synthetic import SyntheticCampaign, synthetic_rankings, synthetic_scores
from evalcore.human.systems import (
    Clusters,
    PairwiseSignificance,
    SystemScores,
    comparison_significance,
    pairwise_significance,
    system_scores,
    wmt_clusters,
)

__all__ = [
    "TOLERANCE_0_TO_100",
    "TOLERANCE_1_TO_5",
    "Alpha",
    "AnnotatorQC",
    "BadReferenceTest",
    "Clusters",
    "Comparisons",
    "DocumentScores",
    "ExpectedWins",
    "ItemType",
    "Judgments",
    "Kappa",
    "NoWorseShares",
    "Normalised",
    "PairwiseCounts",
    "PairwiseSignificance",
    "RankingAnalysis",
    "RankingBadReferenceTest",
    "RankingQC",
    "RankingRepeatConsistency",
    "ReferenceScores",
    "RepeatConsistency",
    "ScoreAnalysis",
    "SegmentScores",
    "SyntheticCampaign",
    "SystemScores",
    "TimeOnTask",
    "TrueSkillRanking",
    "analyse_rankings",
    "analyse_scores",
    "annotator_qc",
    "bad_reference_test",
    "comparison_significance",
    "document_scores",
    "expected_wins",
    "inter_annotator_alpha",
    "intra_annotator_alpha",
    "krippendorff_alpha",
    "link_originals",
    "no_worse_than_others",
    "normalise",
    "pairwise_comparisons",
    "pairwise_counts",
    "pairwise_significance",
    "ranking_bad_reference_test",
    "ranking_kappa",
    "ranking_qc",
    "ranking_repeat_consistency",
    "reference_scores",
    "repeat_consistency",
    "segment_scores",
    "synthetic_rankings",
    "synthetic_scores",
    "system_scores",
    "time_on_task",
    "trueskill_ranking",
    "wmt_clusters",
]
