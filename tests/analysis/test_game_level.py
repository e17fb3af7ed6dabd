"""Intervals that count the game, not the seat or the comparison, as the unit:
hand-worked small cases, and coverage of planted truths by simulation (statistical)."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from analysis import stats
from analysis.effects import effect_columns
from analysis.experiments.skill import RunTally, _game_moments, matchups_of
from analysis.metrics import analyze
from analysis.ratings import Matchups, ahead_counts, bradley_terry, matchups_from_games
from analysis.tally import Tally, _tally_pairs
from simcore.batch import seed_of_game


def test_ahead_counts_by_hand() -> None:
    # Game 0: strategies a b a b finish in seat order: the a in seat 0 is ahead of both
    # b's, the a in seat 2 of the b in seat 3 only: a ahead of b 3 times, b of a once.
    # Game 1: b a c c with ranks 1 1 0 2: a and b tie (1/2 each way), the c in seat 2 is
    # ahead of a and b, both are ahead of the c in seat 3. The two c's are not compared.
    strategy = np.array([[0, 1, 0, 1], [1, 0, 2, 2]])
    rank = np.array([[0, 1, 2, 3], [1, 1, 0, 2]])
    a = ahead_counts(strategy, rank, 3)
    assert a[0].tolist() == [[0, 3, 0], [1, 0, 0], [0, 0, 0]]
    assert a[1].tolist() == [[0, 0.5, 1], [0.5, 0, 1], [1, 1, 0]]
    m = matchups_from_games(["a", "b", "c"], strategy, rank)
    assert m.wins.tolist() == [[0, 3.5, 1], [1.5, 0, 1], [1, 1, 0]]
    assert m.games.tolist() == [[0, 5, 2], [5, 0, 2], [2, 2, 0]]
    flat = a.reshape(2, 9)
    assert np.array_equal(m.ahead_moments, flat.T @ flat)


def test_the_report_and_the_skill_ladder_tally_the_same_game_moments() -> None:
    rng = np.random.default_rng(3)
    strategy = rng.integers(0, 3, size=(50, 4))
    rank = rng.integers(0, 4, size=(50, 4))
    want = matchups_from_games(["a", "b", "c"], strategy, rank)
    t = Tally(3, 0)
    _tally_pairs(t, strategy, rank)
    assert np.array_equal(t.pair_wins, want.wins) and np.array_equal(t.pair_games, want.games)
    assert np.allclose(t.pair_moments, want.ahead_moments)


def test_the_skill_ladder_clusters_games_of_the_same_index_across_runs() -> None:
    # Two runs on the same seeds: run 1 (a, b) and run 2 (b, c), two games each. Game 0
    # of both runs is one cluster, so its vector holds a>b from run 1 and b>c from run 2.
    def run(labels, ahead):
        t = RunTally(None, {}, 2, labels, 2)
        t.ahead_game[:] = ahead
        return t

    r1 = run(["a", "b"], np.array([[[0, 1], [0, 0]], [[0, 0], [1, 0]]]))
    r2 = run(["b", "c"], np.array([[[0, 1], [0, 0]], [[0, 1], [0, 0]]]))
    got = _game_moments(["a", "b", "c"], [r1, r2], block=1)
    g0, g1 = np.zeros(9), np.zeros(9)
    g0[0 * 3 + 1] = g0[1 * 3 + 2] = 1  # a ahead of b, b ahead of c
    g1[1 * 3 + 0] = g1[1 * 3 + 2] = 1  # b ahead of a, b ahead of c
    assert np.array_equal(got, np.outer(g0, g0) + np.outer(g1, g1))
    r1.ahead[:] = r1.ahead_game.sum(axis=0)
    r1.pairs[:] = r1.ahead + r1.ahead.T
    m = matchups_of([r1, r2], ["c", "b", "a"])
    assert m.names == ["c", "b", "a"] and m.wins[2, 1] == 1 and m.wins[1, 2] == 1 and m.games[1, 2] == 2
    assert m.ahead_moments[2 * 3 + 1, 2 * 3 + 1] == 1  # a ahead of b in game 0 only
    none = matchups_of([], ["a", "b"])  # no meetings played yet: nothing to rate
    assert not none.games.any() and not none.ahead_moments.any()
    # A run of one game beside one of two: its games end before the second block.
    short = run(["a", "b"], np.array([[[0, 1], [0, 0]], [[0, 0], [0, 0]]]))
    short.n_games, short.ahead_game = 1, short.ahead_game[:1]
    assert np.array_equal(_game_moments(["a", "b", "c"], [short, r2], block=1),
                          np.outer(g0, g0) + np.outer(g1 - np.eye(9)[1 * 3 + 0], g1 - np.eye(9)[1 * 3 + 0]))


def test_at_two_players_the_game_level_intervals_are_the_binomial_ones() -> None:
    # One comparison per game and no ties: the sandwich is the model's information
    # inverse, and the design effect of a head-to-head share is exactly 1.
    rng = np.random.default_rng(1)
    strategy = np.tile([0, 1], (500, 1))
    rank = np.where(rng.random(500) < 0.6, 0, 1)[:, None] * np.array([1, -1]) + np.array([0, 1])
    m = matchups_from_games(["a", "b"], strategy, rank)
    plain = Matchups(m.names, m.wins, m.games)
    r, r0 = m.rate(0, 1), plain.rate(0, 1)
    assert (r.low, r.high, r.p_value) == pytest.approx((r0.low, r0.high, r0.p_value), rel=1e-9)
    b, b0 = bradley_terry(m), bradley_terry(plain)
    assert b.game_level and not b0.game_level
    assert b.elo == pytest.approx(b0.elo) and b.se == pytest.approx(b0.se, rel=1e-6)


def _race(rng, strength: np.ndarray, lineup: list[int], games: int) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce rankings: each seat finishes after an exponential time with rate
    its strength (the first to finish is ahead); P(i ahead of j) = w_i / (w_i + w_j),
    exactly Bradley-Terry's."""
    t = rng.exponential(1 / strength[lineup], size=(games, len(lineup)))
    return np.tile(lineup, (games, 1)), t


@pytest.mark.statistical
def test_ratings_at_four_players_cover_the_planted_strengths() -> None:
    # Four-player tables of two bot pairs: strengths -200, 0, +200 Elo, each pair on 2,000 tables
    # a b a b. Per-comparison intervals covered 84.5-86.7%; game-level must give 95%.
    # 400 fits: a 95% coverage lies in [0.927, 0.970] with 99% probability.
    rng = np.random.default_rng(0)
    elo = np.array([-200.0, 0.0, 200.0])
    w = 10 ** (elo / 400)
    fits, hit, hit_plain, hit_h2h = 400, 0, 0, 0
    p_ab = w[0] / (w[0] + w[1])
    for _ in range(fits):
        parts = [_race(rng, w, [i, j, i, j], 2000) for i, j in [(0, 1), (0, 2), (1, 2)]]
        m = matchups_from_games(list("abc"), np.vstack([s for s, _ in parts]),
                                      np.vstack([t for _, t in parts]))
        b = bradley_terry(m)
        hit += b.low[0] <= elo[0] <= b.high[0]
        plain = bradley_terry(Matchups(m.names, m.wins, m.games))
        hit_plain += plain.low[0] <= elo[0] <= plain.high[0]
        r = m.rate(0, 1)
        hit_h2h += r.low <= p_ab <= r.high
    assert 0.927 <= hit / fits <= 0.970
    assert 0.927 <= hit_h2h / fits <= 0.970
    assert hit_plain / fits < 0.9  # what the per-comparison intervals gave


@pytest.mark.statistical
def test_ratings_at_three_players_of_three_bots_cover_the_planted_strengths() -> None:
    # One table of three bots (a b c), 3,000 games a fit; 400 fits.
    rng = np.random.default_rng(5)
    elo = np.array([-150.0, 0.0, 150.0])
    w = 10 ** (elo / 400)
    fits, hit = 400, np.zeros(3)
    for _ in range(fits):
        s, t = _race(rng, w, [0, 1, 2], 3000)
        b = bradley_terry(matchups_from_games(list("abc"), s, t))
        hit += (b.low <= elo) & (elo <= b.high)
    assert np.all((0.927 <= hit / fits) & (hit / fits <= 0.970)), hit / fits


def test_a_component_effect_counts_the_game_as_the_unit() -> None:
    # Two players, one seat with the feature and one without in every game (a majority,
    # say); the seat with it wins 70 of 100. RD = 0.7 - 0.3 = 0.4, and as the two
    # seats' wins are one game's, RD = 2 A/G - 1 with A the wins with: SE = 2 sd(A)/sqrt(G)
    # = 2 sqrt(0.7 * 0.3 * 100/99 / 100) = 0.09211. Seats taken as independent give
    # sqrt(2 * 0.21 / 100) = 0.0648: too narrow by 1.42.
    games = 100
    value = np.tile([1, 0], (games, 1))
    win = np.zeros((games, 2))
    win[:70, 0] = 1
    win[70:, 1] = 1
    m = stats.Moments(4)
    m.add(effect_columns(np.zeros((games, 2), dtype=int), value, win, 1, 1))
    e = stats.mantel_haenszel_games(m)
    assert e.value == pytest.approx(0.4) and (e.with_rate, e.without_rate) == pytest.approx((0.7, 0.3))
    se = 2 * np.sqrt(0.21 * 100 / 99 / 100)
    assert (e.low, e.high) == pytest.approx((0.4 - 1.959964 * se, 0.4 + 1.959964 * se), abs=1e-6)


def one_bot_run(path, games: list[list[tuple[int, float, int]]], seating: str = "fixed"):
    """A one-bot run directory as the runner writes it; games[g][seat] = (rank, win,
    value of the feature "majority")."""
    n = len(games[0])
    path.mkdir(parents=True)
    manifest = {"run_id": "t", "game": "handmade", "players": n, "seed": 7, "seating": seating,
                "n_games": len(games), "chunk_size": len(games), "params": {"players": n},
                "strategies": [{"spec": "bot", "class": "x.Bot", "weights": {}}]}
    (path / "manifest.json").write_text(json.dumps(manifest))
    rows = [{"run_id": "t", "game": g, "seed": seed_of_game(7, g), "seat": s, "strategy": "bot", "score": 10 - rank,
             "rank": rank, "win": win, "first": s == 0, "position": s, "turns": 10,
             "end_reason": "scoring", "majority": value}
            for g, seats in enumerate(games) for s, (rank, win, value) in enumerate(seats)]
    pl.DataFrame(rows).with_columns(
        pl.col("run_id", "strategy", "end_reason").cast(pl.Categorical),
        pl.col("seat", "rank", "position").cast(pl.Int8), pl.col("win").cast(pl.Float32),
        pl.col("seed").cast(pl.UInt64),
        pl.col("score", "turns", "majority").cast(pl.Int32)).write_ipc(path / "part-00000.arrow")
    return path


def test_the_report_gives_component_effects_the_game_level_interval(tmp_path) -> None:
    # The case above as a run: 100 games, the seat holding "majority" wins 70.
    # Seat g % 2 wins game g; the holder is the winner in the first 70 games.
    games = [[(0 if s == g % 2 else 1, float(s == g % 2), int(s == (g % 2 if g < 70 else 1 - g % 2)))
              for s in range(2)] for g in range(100)]
    row = analyze(one_bot_run(tmp_path / "run", games)).components.row(0, named=True)
    se = 2 * np.sqrt(0.21 * 100 / 99 / 100)
    assert row["feature"] == "majority" and row["diff"] == pytest.approx(0.4)
    assert (row["diff_low"], row["diff_high"]) == pytest.approx((0.4 - 1.959964 * se, 0.4 + 1.959964 * se), abs=1e-6)


def test_effect_columns_leave_out_the_seats_whose_zero_means_missing() -> None:
    strategy = np.array([[0, 1, 0]])
    value = np.array([[0, 3, 1]])
    win = np.array([[0.0, 1.0, 0.0]])
    cols = effect_columns(strategy, value, win, 2, 2, missing_when_zero=True)
    # strategy 0: seat 0 missing, seat 2 without (value 1 < 2); strategy 1: seat 1 with, won.
    assert cols.tolist() == [[0, 0, 0, 1, 1, 1, 0, 0]]


def test_effect_columns_count_a_shared_victory_as_its_share() -> None:
    # Game 0: a victory shared by both seats (half each), strategy 0 holds the feature;
    # game 1: strategy 0 (seat 1, value 3) holds it and wins alone.
    strategy = np.array([[0, 1], [1, 0]])
    value = np.array([[2, 0], [0, 3]])
    win = np.array([[0.5, 0.5], [0.0, 1.0]], dtype=np.float32)
    cols = effect_columns(strategy, value, win, 1, 2)
    # Per strategy: wins with, seats with, wins without, seats without.
    assert cols.tolist() == [[0.5, 1, 0, 0, 0, 0, 0.5, 1], [1, 1, 0, 0, 0, 0, 0, 1]]


def _feature_games(rng, players: int, games: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One seat in each game holds the feature (as a majority would); two bots
    alternate seats, the second a little stronger; the holder's odds of winning are
    e^0.8 times the others'. The seats' wins sum to one a game, so the with and without
    rates move against each other."""
    strategy = np.tile(np.arange(players) % 2, (games, 1))
    value = (np.argsort(rng.random((games, players)), axis=1) == 0).astype(int)
    odds = np.exp(0.8 * value + 0.5 * strategy)
    cum = np.cumsum(odds, axis=1) / odds.sum(axis=1, keepdims=True)
    winner = (rng.random((games, 1)) > cum).sum(axis=1)
    win = np.zeros((games, players))
    win[np.arange(games), winner] = 1
    return strategy, value, win


@pytest.mark.statistical
@pytest.mark.parametrize("players", [2, 4])
def test_component_effect_intervals_cover_a_planted_clustered_truth(players: int) -> None:
    # The truth: the same estimand over 2,000,000 games. 400 runs of 2,000 games: a 95%
    # coverage lies in [0.927, 0.970] with 99% probability. Seat-level intervals
    # covered 82% (2 players) and 90% (4 players) here.
    rng = np.random.default_rng(players)
    m = stats.Moments(8)
    for _ in range(20):
        s, v, w = _feature_games(rng, players, 100_000)
        m.add(effect_columns(s, v, w, 1, 2))
    truth = stats.mantel_haenszel_games(m).value
    runs, hit, hit_seats = 400, 0, 0
    for _ in range(runs):
        s, v, w = _feature_games(rng, players, 2000)
        cols = effect_columns(s, v, w, 1, 2)
        m = stats.Moments(8)
        m.add(cols)
        e = stats.mantel_haenszel_games(m)
        hit += e.low <= truth <= e.high
        t = cols.sum(axis=0)
        seats = stats.mantel_haenszel_difference(t[[0, 4]], t[[1, 5]], t[[2, 6]], t[[3, 7]])
        hit_seats += seats.low <= truth <= seats.high
    assert 0.927 <= hit / runs <= 0.970
    assert hit_seats / runs < 0.92
