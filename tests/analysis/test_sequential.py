"""--precision: the confidence sequence and the stopping rule, checked by simulation on
synthetic data with a planted truth, and a real run that stops."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import api, stats
from analysis.sequential import first_round, free_quantities, until_precise
from analysis.stats import Moments
from simcore.errors import UserError


def bernoulli_stream(p: float, seed: int):
    """play(n) makes the sample hold n draws; measure() its mean's estimate."""
    rng = np.random.default_rng(seed)
    m = Moments(1)

    def play(n: int) -> None:
        if n > m.n:
            m.add((rng.random((n - m.n, 1)) < p).astype(float))

    def measure():
        return [("rate", stats.delta_estimate(lambda x: x[0], m))]

    return play, measure


def test_the_rule_stops_precise_enough_and_covers_the_truth_at_the_stated_rate():
    truth, target, reps = 0.3, 4.0, 400
    covered, games = 0, []
    for seed in range(reps):
        play, measure = bernoulli_stream(truth, seed)
        done = until_precise(play, measure, target, cap=10**6)
        assert done.reached and done.halfwidth <= target
        (_, e, half), = done.estimates
        covered += abs(e.value - truth) <= half
        games.append(done.games)
    # 95% stated; the sequence is conservative at a single stopping time, so coverage
    # is at least 95% (less than 92.5% would be 3 SE below it over 400 runs).
    assert covered / reps >= 0.925
    # A fixed interval needs (1.96 * sqrt(.21) / .04)^2 = 504 games; the rule pays for
    # looking as often as it likes, but not without bound.
    assert 504 < np.median(games) < 6 * 504


def two_player_stream(p_first: float, seed: int):
    """Two-player games: the 1st player wins with probability p_first, else the 2nd;
    measure() gives both positions' advantages over 1/2, one the other's mirror."""
    rng = np.random.default_rng(seed)
    m = Moments(2)

    def play(n: int) -> None:
        if n > m.n:
            first = (rng.random(n - m.n) < p_first).astype(float)
            m.add(np.column_stack([first, 1 - first]))

    def measure():
        return [(f"pos{p}", stats.delta_estimate(lambda x, p=p: x[p], m, 0.5)) for p in (0, 1)]

    return play, measure


def test_at_two_players_the_mirrored_position_is_not_paid_for_twice():
    # The 2nd player's advantage is minus the 1st's in every game: one free quantity,
    # so the run stops where watching the 1st alone would, and still covers.
    truth, target, reps = 0.55, 3.0, 300
    covered, stopped_alone, stopped = 0, [], []
    for seed in range(reps):
        play, measure = two_player_stream(truth, seed)
        done = until_precise(play, measure, target, cap=10**6)
        (_, e0, h0), (_, e1, h1) = done.estimates
        assert h0 == pytest.approx(h1, rel=1e-6)
        covered += abs(e0.value - (truth - 0.5)) <= h0
        stopped.append(done.games)
        play, measure = two_player_stream(truth, seed)
        stopped_alone.append(until_precise(play, lambda measure=measure: measure()[:1], target, cap=10**6).games)
    assert stopped == stopped_alone
    assert covered / reps >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / reps)


def test_only_mirrored_estimates_count_once():
    a = stats.Estimate(0.02, 0.01, 1000)
    assert free_quantities([a, stats.Estimate(-0.02, 0.01, 1000)]) == 1
    assert free_quantities([a, stats.Estimate(-0.02, 0.01, 999)]) == 2  # other games
    assert free_quantities([a, stats.Estimate(-0.02, 0.011, 1000)]) == 2
    assert free_quantities([a, stats.Estimate(0.02, 0.01, 1000)]) == 2  # not a mirror
    three = [stats.Estimate(v, 0.01, 1000) for v in (0.02, -0.01, -0.01)]
    assert free_quantities(three) == 3  # 3 players: no single mirror, Bonferroni over all


def test_peeking_at_a_fixed_interval_would_not_cover():
    """The reason for the confidence sequence: stopping the first time a fixed 95%
    interval excludes the truth happens far more often than 5% over many looks."""
    rng = np.random.default_rng(1)
    misses = 0
    for _ in range(300):
        x = (rng.random(20_000) < 0.5).astype(float)
        n = np.arange(1, len(x) + 1)
        mean = np.cumsum(x) / n
        looks = np.unique(np.geomspace(100, len(x), 40).astype(int)) - 1
        half_fixed = stats.Z95 * np.sqrt(mean * (1 - mean) / n)
        misses += np.any(np.abs(mean[looks] - 0.5) > half_fixed[looks])
    assert misses / 300 > 0.15


def test_the_confidence_sequence_covers_at_every_look_at_once():
    rng = np.random.default_rng(2)
    reps, failures = 300, 0
    for _ in range(reps):
        x = (rng.random(20_000) < 0.5).astype(float)
        n = np.arange(1, len(x) + 1)
        mean = np.cumsum(x) / n
        looks = np.unique(np.geomspace(100, len(x), 40).astype(int)) - 1
        se = np.sqrt(mean[looks] * (1 - mean[looks]) / n[looks])
        half = np.array([stats.confidence_sequence_halfwidth(s, int(k + 1), 5000) for s, k in zip(se, looks)])
        failures += np.any(np.abs(mean[looks] - 0.5) > half)
    assert failures / reps <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_the_cap_stops_a_rule_that_cannot_reach_its_target():
    play, measure = bernoulli_stream(0.5, 0)
    done = until_precise(play, measure, 0.1, cap=5000)
    assert (done.games, done.reached) == (5000, False) and done.halfwidth > 0.1
    assert "cap of 5,000 games reached" in done.line("rate")


def test_rounds_are_whole_rotations():
    assert first_round(1.0, 10**6, 6) % 6 == 0
    sizes = []
    play, measure = bernoulli_stream(0.5, 0)
    until_precise(lambda n: (sizes.append(n), play(n)), measure, 2.0, cap=10**6, step=6)
    assert all(n % 6 == 0 for n in sizes) and sizes == sorted(sizes)


def test_a_run_with_precision_stops_and_says_how_many_games(tmp_path):
    done = api.run("fabryka", ["heuristic", "random"], 200_000, tmp_path / "r", precision=3.0)
    assert done.precision.reached and done.precision.halfwidth <= 3.0
    assert done.manifest["n_games"] == done.precision.games < 200_000
    assert done.played == done.precision.games
    # The run is an ordinary run directory: its games are those of a plain run.
    again = api.run("fabryka", ["heuristic", "random"], done.precision.games, tmp_path / "r")
    assert again.played == 0


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_a_precision_that_is_not_positive_is_refused(bad):
    play, measure = bernoulli_stream(0.5, 0)
    with pytest.raises(UserError, match=f"precision = {bad}: must be a positive"):
        until_precise(play, measure, bad, cap=100)

