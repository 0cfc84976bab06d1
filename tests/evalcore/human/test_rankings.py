"""Pairwise comparisons, "no worse than others", Expected Wins and TrueSkill against the package."""

from __future__ import annotations

import numpy as np
import pytest
import trueskill

from evalcore.human.judgments import ItemType, Judgments
from evalcore.human.rankings import (
    expected_wins,
    no_worse_than_others,
    pairwise_comparisons,
    pairwise_counts,
    rate_1vs1,
    trueskill_ranking,
)


def _screens(ranks: list[dict[int, int]]) -> Judgments:
    """One REAL screen per dict {system: rank}, all by annotator 0 on segment = screen number."""
    screen = [number for number, shown in enumerate(ranks) for _ in shown]
    return Judgments.from_arrays(
        annotator=[0] * len(screen),
        segment=screen,
        system=[system for shown in ranks for system in shown],
        score=[rank for shown in ranks for rank in shown.values()],
        screen=screen,
    )


def test_a_screen_of_k_outputs_gives_every_pair_once_with_the_lower_rank_winning() -> None:
    comparisons = pairwise_comparisons(_screens([{2: 1, 0: 3, 1: 1, 3: 2}]))
    pairs = {
        (int(a), int(b)): int(o)
        for a, b, o in zip(
            comparisons.system_a, comparisons.system_b, comparisons.outcome, strict=True
        )
    }
    assert pairs == {(0, 1): -1, (0, 2): -1, (0, 3): -1, (1, 2): 0, (1, 3): 1, (2, 3): 1}
    assert (comparisons.item_type == ItemType.REAL).all()


def test_comparisons_on_a_repeat_screen_carry_the_outcome_of_the_original_screen() -> None:
    judgments = Judgments.from_arrays(
        annotator=[0] * 6,
        segment=[0] * 6,
        system=[0, 1, 2, 0, 1, 2],
        score=[1, 2, 3, 1, 3, 2],
        item_type=[ItemType.REAL] * 3 + [ItemType.REPEAT] * 3,
        original=[-1, -1, -1, 0, 1, 2],
        screen=[0, 0, 0, 1, 1, 1],
    )
    comparisons = pairwise_comparisons(judgments)
    repeat = comparisons.item_type == ItemType.REPEAT
    assert comparisons.has_original.tolist() == repeat.tolist()
    by_pair = {
        (int(a), int(b)): (int(o), int(p))
        for a, b, o, p in zip(
            comparisons.system_a[repeat],
            comparisons.system_b[repeat],
            comparisons.outcome[repeat],
            comparisons.original_outcome[repeat],
            strict=True,
        )
    }
    assert by_pair == {(0, 1): (1, 1), (0, 2): (1, 1), (1, 2): (-1, 1)}


def test_no_worse_than_others_counts_shared_best_ranks_and_ignores_lone_outputs() -> None:
    judgments = _screens([{0: 1, 1: 1, 2: 3}, {0: 2, 1: 1}, {2: 1}, {0: 1, 2: 2}])
    shares = no_worse_than_others(judgments)
    assert shares.n.tolist() == [3, 2, 2]  # the lone output of screen 2 is not contested
    assert shares.n_best.tolist() == [2, 2, 0]
    assert shares.share == pytest.approx([2 / 3, 1.0, 0.0])


def test_expected_wins_is_the_mean_share_of_wins_over_opponents_ignoring_ties() -> None:
    # System 0 vs 1: 0 wins 3, loses 1, one tie; 0 vs 2: 0 wins 1, loses 1; 1 vs 2: only a tie.
    screens = [{0: 1, 1: 2}] * 3 + [{0: 2, 1: 1}, {0: 1, 1: 1}, {0: 1, 2: 2}, {0: 2, 2: 1}]
    screens.append({1: 1, 2: 1})
    comparisons = pairwise_comparisons(_screens(screens))
    result = expected_wins(comparisons)
    counts = pairwise_counts(comparisons)
    assert counts.wins.tolist() == [[0, 3, 1], [1, 0, 0], [1, 0, 0]]
    assert counts.ties.tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    assert counts.losses.tolist() == [[0, 1, 1], [3, 0, 0], [1, 0, 0]]
    # EW(0) = (3/4 + 1/2)/2; EW(1) = 1/4 (no decided comparison with 2); EW(2) = 1/2.
    assert result.score == pytest.approx([(3 / 4 + 1 / 2) / 2, 1 / 4, 1 / 2])
    assert result.n_opponents.tolist() == [2, 1, 1]


# The package's default backend approximates erfc (Numerical Recipes, relative error < 1.2e-7);
# with backend="scipy" it uses exact functions, as our vectorised update does.
BACKENDS = [("scipy", 1e-10), (None, 1e-6)]


@pytest.mark.parametrize(("backend", "tolerance"), BACKENDS)
@pytest.mark.parametrize("drawn", [False, True])
@pytest.mark.parametrize(
    ("winner", "loser"),
    [((25.0, 8.333), (25.0, 8.333)), ((30.0, 2.0), (18.0, 6.0)), ((12.0, 1.2), (40.0, 3.0))],
)
def test_vectorised_update_equals_the_trueskill_package(
    winner: tuple[float, float],
    loser: tuple[float, float],
    drawn: bool,
    backend: str | None,
    tolerance: float,
) -> None:
    env = trueskill.TrueSkill(draw_probability=0.25, backend=backend)
    expected_w, expected_l = trueskill.rate_1vs1(
        env.create_rating(*winner), env.create_rating(*loser), drawn=drawn, env=env
    )
    mu_w, sigma_w, mu_l, sigma_l = rate_1vs1(
        env,
        np.array([winner[0]]),
        np.array([winner[1]]),
        np.array([loser[0]]),
        np.array([loser[1]]),
        np.array([drawn]),
    )
    expected = (expected_w.mu, expected_w.sigma, expected_l.mu, expected_l.sigma)
    assert (mu_w[0], sigma_w[0], mu_l[0], sigma_l[0]) == pytest.approx(expected, rel=tolerance)


def _random_comparisons(seed: int, n_screens: int = 60) -> Judgments:
    rng = np.random.default_rng(seed)
    quality = np.array([1.0, 0.6, 0.3, 0.0])
    screens = []
    for _ in range(n_screens):
        shown = rng.choice(4, size=3, replace=False)
        perceived = np.round(quality[shown] * 3 + rng.normal(0, 1, 3))
        ranks = 1 + (perceived[np.newaxis, :] > perceived[:, np.newaxis]).sum(axis=1)
        screens.append(dict(zip(shown.tolist(), ranks.tolist(), strict=True)))
    return _screens(screens)


@pytest.mark.parametrize(("backend", "tolerance"), BACKENDS)
def test_point_ratings_equal_sequential_calls_of_the_trueskill_package(
    backend: str | None, tolerance: float
) -> None:
    comparisons = pairwise_comparisons(_random_comparisons(5))
    env = trueskill.TrueSkill(draw_probability=0.2, backend=backend)
    result = trueskill_ranking(comparisons, n_bootstrap=0, rng=11, environment=env)
    # The point estimate processes the comparisons in the order of the seed's first permutation.
    order = np.random.default_rng(11).permutation(len(comparisons))
    ratings = [env.create_rating() for _ in range(comparisons.n_systems)]
    for index in order:
        a, b = comparisons.system_a[index], comparisons.system_b[index]
        outcome = comparisons.outcome[index]
        winner, loser = (a, b) if outcome >= 0 else (b, a)
        ratings[winner], ratings[loser] = trueskill.rate_1vs1(
            ratings[winner], ratings[loser], drawn=bool(outcome == 0), env=env
        )
    assert result.mu == pytest.approx([r.mu for r in ratings], rel=tolerance)
    assert result.sigma == pytest.approx([r.sigma for r in ratings], rel=tolerance)
    assert result.environment == (env.mu, env.sigma, env.beta, env.tau, 0.2)


def test_trueskill_ranks_the_better_systems_higher_with_ranges_around_the_rank() -> None:
    comparisons = pairwise_comparisons(_random_comparisons(6, n_screens=300))
    result = trueskill_ranking(comparisons, n_bootstrap=200, rng=3)
    assert result.rank.tolist() == [1, 2, 3, 4]
    assert (result.rank_low <= result.rank).all()
    assert (result.rank <= result.rank_high).all()
    assert result.rank_low[0] == 1
    assert result.rank_high[3] == 4
    assert (result.n_bootstrap, result.seed, result.confidence) == (200, 3, 0.95)


def test_trueskill_gives_the_same_numbers_for_the_same_seed() -> None:
    comparisons = pairwise_comparisons(_random_comparisons(7))
    first = trueskill_ranking(comparisons, n_bootstrap=50, rng=42)
    second = trueskill_ranking(comparisons, n_bootstrap=50, rng=42)
    other = trueskill_ranking(comparisons, n_bootstrap=50, rng=43)
    np.testing.assert_array_equal(first.mu, second.mu)
    np.testing.assert_array_equal(first.rank_low, second.rank_low)
    np.testing.assert_array_equal(first.rank_high, second.rank_high)
    assert not np.array_equal(first.mu, other.mu)


def test_a_code_without_comparisons_is_left_out_of_the_trueskill_ranks() -> None:
    # Systems 0–2 meet each other; code 3 (a reference shown only on QC screens) never does.
    screens = [{0: 1, 1: 2, 2: 3}] * 30 + [{0: 2, 1: 1, 2: 3}] * 10
    judgments = Judgments.from_arrays(
        annotator=[0] * 120,
        segment=[n for n in range(40) for _ in range(3)],
        system=[s for shown in screens for s in shown],
        score=[r for shown in screens for r in shown.values()],
        screen=[n for n in range(40) for _ in range(3)],
        n_systems=4,
    )
    result = trueskill_ranking(pairwise_comparisons(judgments), n_bootstrap=50, rng=1)
    assert result.rank.tolist() == [1, 2, 3, 0]
    assert np.isnan(result.mu[3])
    assert result.rank_low[3] == result.rank_high[3] == 0
    assert set(result.rank_high[:3].tolist()) <= {1, 2, 3}
