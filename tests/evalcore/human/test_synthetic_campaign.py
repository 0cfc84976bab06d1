"""End to end on synthetic campaigns with a known truth: careless annotators are caught and the
systems come out in the right order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalcore.human.agreement import inter_annotator_alpha
from evalcore.human.analysis import analyse_rankings, analyse_scores
from evalcore.human.qc import TOLERANCE_0_TO_100, TOLERANCE_1_TO_5
from evalcore.human.synthetic import SyntheticCampaign, synthetic_rankings, synthetic_scores

CARELESS = [3, 7]


@pytest.fixture(scope="module")
def campaign() -> SyntheticCampaign:
    return synthetic_scores(
        n_annotators=12,
        n_systems=6,
        n_segments=400,
        tasks_per_annotator=4,
        careless=CARELESS,
        seed=11,
    )


def test_the_careless_annotators_fail_qc_and_the_diligent_ones_pass(
    campaign: SyntheticCampaign,
) -> None:
    for test in ("paired_t", "wilcoxon", "mannwhitney"):
        analysis = analyse_scores(
            campaign.judgments, tolerance=TOLERANCE_0_TO_100, qc_test=test, n_bootstrap=0
        )
        assert analysis.qc.passed.tolist() == (~campaign.careless).tolist(), test
        assert analysis.included.tolist() == (~campaign.careless).tolist()
    everyone = analyse_scores(
        campaign.judgments, tolerance=TOLERANCE_0_TO_100, include_failed=True, n_bootstrap=0
    )
    assert everyone.included.all()
    assert everyone.systems.n_judgments.sum() > analysis.systems.n_judgments.sum()
    diligent = ~campaign.careless
    repeats = analysis.qc.repeats
    assert repeats.share_within[diligent].mean() > repeats.share_within[~diligent].mean()
    references = analysis.qc.references
    assert references.mean[diligent].mean() > references.mean[~diligent].mean()


def test_the_system_ranking_is_recovered_with_the_careless_annotators_left_out(
    campaign: SyntheticCampaign,
) -> None:
    analysis = analyse_scores(campaign.judgments, tolerance=TOLERANCE_0_TO_100, rng=3)
    mt_systems = np.isfinite(campaign.system_quality)
    score = analysis.systems.score[mt_systems]
    # The best system has code 0; the scores must fall strictly with the code.
    assert (np.diff(score) < 0).all()
    assert analysis.clusters.order[: mt_systems.sum()].tolist() == list(range(mt_systems.sum()))
    # The top system is significantly better than the bottom one; clusters are ordered.
    assert analysis.significance.p_value[0, 5] < 0.05
    assert (np.diff(analysis.clusters.cluster[analysis.clusters.order]) >= 0).all()
    for space in ("mean_raw", "mean_shifted", "mean_z"):
        values = getattr(analysis.systems, space)[mt_systems]
        assert stats.spearmanr(values, -np.arange(6)).statistic == pytest.approx(1.0)
    # Careless annotators lower the agreement; without them it rises.
    judgments = campaign.judgments
    diligent_only = judgments.select(~campaign.careless[judgments.annotator])
    assert inter_annotator_alpha(diligent_only).alpha > analysis.inter_alpha_interval.alpha > 0
    assert analysis.intra_alpha_interval.n_units > 0


def test_the_whole_analysis_repeats_exactly_with_the_same_seed(campaign: SyntheticCampaign) -> None:
    first = analyse_scores(
        campaign.judgments, tolerance=TOLERANCE_0_TO_100, test="bootstrap", rng=8
    )
    again = analyse_scores(
        campaign.judgments, tolerance=TOLERANCE_0_TO_100, test="bootstrap", rng=8
    )
    np.testing.assert_array_equal(first.systems.boot_low, again.systems.boot_low)
    np.testing.assert_array_equal(first.significance.p_value, again.significance.p_value)
    assert first.seed == again.seed == 8


def test_a_one_to_five_campaign_is_analysed_the_same_way() -> None:
    campaign = synthetic_scores(
        n_annotators=10,
        n_systems=4,
        n_segments=300,
        tasks_per_annotator=4,
        careless=[0],
        scale="1-5",
        quality_spread=30,
        degradation=40,
        seed=5,
    )
    analysis = analyse_scores(
        campaign.judgments, tolerance=TOLERANCE_1_TO_5, qc_test="wilcoxon", n_bootstrap=200, rng=1
    )
    assert analysis.qc.passed.tolist() == (~campaign.careless).tolist()
    assert (np.diff(analysis.systems.score[:4]) < 0).all()
    assert analysis.inter_alpha_ordinal.alpha > 0


def test_a_ranking_campaign_recovers_the_order_with_every_ranking_method() -> None:
    campaign = synthetic_rankings(
        n_annotators=8,
        n_systems=5,
        n_segments=150,
        screens_per_annotator=120,
        careless=[2],
        seed=4,
    )
    include = ~campaign.careless
    analysis = analyse_rankings(campaign.judgments, include=include, n_bootstrap=100, rng=2)
    assert (np.diff(analysis.expected_wins.score) < 0).all()
    assert (np.diff(analysis.no_worse.share) < 0).all()
    assert analysis.trueskill.rank.tolist() == [1, 2, 3, 4, 5]
    assert analysis.clusters.order.tolist() == [0, 1, 2, 3, 4]
    assert analysis.inter_kappa.n_pairs > 0
    assert analysis.intra_kappa.n_pairs == 8 * 6 * 10  # 6 repeat screens of 10 pairs each
    assert 0 < analysis.inter_kappa.kappa < analysis.intra_kappa.kappa
