"""compensation.points, the house-rule score bonus by turn position (komi), in every game,
and each game's declared turn-order knobs (GameSpec.position_knobs).

Known answers: a game lost by m points is won with a bonus of m + 1 at the loser's turn
position, and with m the game's own tie-break decides; the bonus follows the turn
position, not the seat; games not decided by score keep their winner; all-zero
compensation plays the same games, bit for bit, as the default."""
from __future__ import annotations

import random

import numpy as np
import pytest

import strategies
from helpers import random_playout, run_batch
from simcore.errors import UserError
from simcore.params import COMPENSATION_LIMIT
from simcore.registry import games, get_game

GAMES = sorted(games())
TABLES = [(g, n) for g in GAMES for n in range(games()[g].players[0], games()[g].players[1] + 1)]


def play(game, n, komi=None, seed=0, actions=None, **sets):
    """A finished game of `game` at n players (random moves from `seed`, or `actions`
    replayed) under compensation `komi`; returns (state, actions)."""
    spec = get_game(game)
    if komi is not None:
        sets["compensation.points"] = komi
    state = spec.new_state(spec.params(players=n, sets=sets))
    state.new_game(seed)
    if actions is None:
        actions = random_playout(state, random.Random(seed))
    else:
        for a in actions:
            state.apply(a)
    assert state.is_terminal()
    return state, actions


def decided_by_points(game, n=2, keep=lambda state, w, loser: True, **sets):
    """The first seeded 2-player game won on points, with a loser, passing `keep`:
    (seed, actions, winner, loser, margin, turn positions)."""
    for seed in range(400):
        state, actions = play(game, n, seed=seed, **sets)
        scores, ranks = state.scores(), state.ranks()
        if game == "fabryka" and state.end_reason() != "scoring":
            continue
        if sorted(ranks) != [1, 2] or scores[0] == scores[1]:
            continue
        w, loser = ranks.index(1), ranks.index(2)
        if keep(state, w, loser):
            return seed, actions, w, loser, scores[w] - scores[loser], state.turn_positions()
    raise AssertionError(f"no fitting {game} game in 400 seeds")


def komi_for(position, points, n=2):
    komi = [0] * n
    komi[position] = points
    return komi


# ---- the param ----

@pytest.mark.parametrize("game", GAMES)
def test_every_game_has_a_zero_house_rule_by_default(game):
    spec = get_game(game)
    info = {p.name: p for p in spec.defaults()}["compensation.points"]
    assert info.value == [0] * spec.players[1]
    assert info.source == "assumed" and info.doc.startswith("House rule")
    assert spec.params().compensation.points == info.value


@pytest.mark.parametrize("game", GAMES)
def test_points_are_set_by_set_and_by_a_rules_file(game, tmp_path):
    spec = get_game(game)
    lo = max(spec.players[0], 2) if spec.players[1] >= 2 else 1
    assert spec.params(players=lo, sets={"compensation.points": [0, 3]}).compensation.by_position(lo) == \
        [0, 3] + [0] * (lo - 2)
    rules = tmp_path / "komi.toml"
    rules.write_text("[compensation]\npoints = [0, 3]\n")
    assert spec.params(rules_file=rules, players=lo).compensation.points == [0, 3]


@pytest.mark.parametrize("bad, says", [
    ([0, 0, 0, 0, 0, 0, 0], "at most"),
    ([0, COMPENSATION_LIMIT + 1], "compensation.points[1] = 101"),
    ([-COMPENSATION_LIMIT - 1], "compensation.points[0]"),
    ([0, 1.5], "valid integer"),
    ([True], "valid integer"),
    ([0, "3"], "valid integer"),
    (3, "valid list"),
])
@pytest.mark.parametrize("game", GAMES)
def test_bad_points_are_one_line_errors(game, bad, says):
    spec = get_game(game)
    if bad == [0] * 7:
        bad = [0] * (spec.players[1] + 1)
    with pytest.raises(UserError) as info:
        spec.params(sets={"compensation.points": bad})
    message = str(info.value)
    assert "\n" not in message and "compensation.points" in message and says in message


# ---- all zero is today's game ----

@pytest.mark.parametrize("game, n", TABLES)
def test_explicit_zeros_play_the_default_games_bit_for_bit(game, n):
    spec = get_game(game)
    perms = [list(range(n)), list(range(n))[::-1]]
    outs = []
    for sets in ({}, {"compensation.points": [0] * spec.players[1]}, {"compensation.points": [0]}):
        state = spec.new_state(spec.params(players=n, sets=sets))
        bots = [strategies.build(game, "random") for _ in range(n)]
        outs.append(run_batch(state, bots, 200, run_seed=4, perms=perms, seating=0))
    for other in outs[1:]:
        assert outs[0].keys() == other.keys()
        for key in outs[0]:
            assert np.array_equal(outs[0][key], other[key]), key


# ---- the bonus follows the turn position ----

@pytest.mark.parametrize("game, n", TABLES)
def test_bonus_follows_the_turn_position_under_rotated_seating(game, n):
    """Random bots play the same games with and without the bonus (it never reaches a
    decision), so each row's score moves by exactly the bonus of its turn position,
    while standings, interims and features stay the game's own."""
    spec = get_game(game)
    komi = [7, -5, 11, 3, -2, 9][:n]
    perms = [list(range(n))[k:] + list(range(n))[:k] for k in range(n)]
    out = {}
    for label, points in (("zero", [0] * n), ("komi", komi)):
        state = spec.new_state(spec.params(players=n, sets={"compensation.points": points}))
        bots = [strategies.build(game, "random") for _ in range(n)]
        out[label] = run_batch(state, bots, 300, run_seed=2, perms=perms, seating=0)
    zero, with_komi = out["zero"], out["komi"]
    position = zero["position"]
    assert np.array_equal(with_komi["score"] - zero["score"], np.array(komi)[position])
    for key in zero:
        if key not in ("score", "rank", "win"):
            assert np.array_equal(zero[key], with_komi[key]), key
    # Every strategy index met every position: a bonus by seat or by strategy would differ.
    pairs = set(zip(zero["seat_strategy"].tolist(), position.tolist()))
    assert pairs == {(s, p) for s in range(n) for p in range(n)}
    if game != "fabryka" and n > 1:  # Fabryka's seat 0 always holds the token of round 1
        seat = np.tile(np.arange(n), len(position) // n)
        assert (position != seat).any()


@pytest.mark.parametrize("game, n", [t for t in TABLES if t[0] in ("alleycat", "manfredini") and t[1] >= 2])
def test_winner_has_the_best_adjusted_score(game, n):
    """Games ranked by score: the winner holds the highest adjusted score, and a large
    bonus to the last position changes some winners."""
    spec = get_game(game)
    komi = [0] * (n - 1) + [15]
    perms = [list(range(n))]
    res = {}
    for label, points in (("zero", [0] * n), ("komi", komi)):
        state = spec.new_state(spec.params(players=n, sets={"compensation.points": points}))
        res[label] = run_batch(state, [strategies.build(game, "random") for _ in range(n)], 200,
                               run_seed=8, perms=perms, seating=0)
    score = res["komi"]["score"].reshape(-1, n)
    rank = res["komi"]["rank"].reshape(-1, n)
    best = score.max(axis=1)
    assert ((rank == 1) <= (score == best[:, None])).all()
    assert (rank == 1).any(axis=1).all()
    changed = (res["zero"]["rank"].reshape(-1, n) != rank).any(axis=1)
    assert changed.any()
    last = res["komi"]["position"].reshape(-1, n) == n - 1
    assert (rank[last] == 1).mean() > (res["zero"]["rank"].reshape(-1, n)[last] == 1).mean()


# ---- known answers: margin m + 1 wins, margin m goes to the tie-break ----

def test_fabryka_margin_and_almond_tie_break():
    # A loser with more almonds: level on points, the almonds make him the winner.
    def more_almonds(state, w, loser):
        c = state.observation(0)["collected"]
        return c[loser]["almonds"] > c[w]["almonds"]

    seed, actions, w, loser, m, pos = decided_by_points("fabryka", keep=more_almonds)
    assert pos == [0, 1]  # the token holder of round 1 is seat 0
    base, _ = play("fabryka", 2, seed=seed, actions=actions)
    scores0 = base.scores()
    state, _ = play("fabryka", 2, komi_for(pos[loser], m + 1), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores0[loser] + m + 1 and scores[w] == scores0[w]
    assert ranks[loser] == 1 and ranks[w] == 2
    state, _ = play("fabryka", 2, komi_for(pos[loser], m), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores[w] and ranks[loser] == 1 and ranks[w] == 2
    assert state.standings() == base.standings()  # the standings stay the game's own

    # Equal almonds: level on points is a shared victory.
    def same_almonds(state, w, loser):
        c = state.observation(0)["collected"]
        return c[loser]["almonds"] == c[w]["almonds"]

    seed, actions, w, loser, m, pos = decided_by_points("fabryka", keep=same_almonds)
    state, _ = play("fabryka", 2, komi_for(pos[loser], m), seed=seed, actions=actions)
    assert state.ranks() == [1, 1]


def test_fabryka_white_chocolate_win_stands_whatever_the_bonus():
    for seed in range(2000):
        base, actions = play("fabryka", 2, seed=seed)
        if base.end_reason() == "white_chocolate":
            break
    else:
        raise AssertionError("no white-chocolate win in 2000 random games")
    scores0, ranks0 = base.scores(), base.ranks()
    loser = ranks0.index(2)
    komi = komi_for(loser, COMPENSATION_LIMIT)
    state, _ = play("fabryka", 2, komi, seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert ranks == ranks0 and scores[loser] == scores0[loser] + COMPENSATION_LIMIT
    assert scores[loser] > scores[1 - loser]


def test_alleycat_margin_and_later_seat_tie_break():
    """2 players, 6 days: the start player passes daily, so Saturday's start player is
    turn position 1 and a tie goes to position 0, later in Saturday's order."""
    # A loser at position 0: level on money, he wins the tie.
    seed, actions, w, loser, m, pos = decided_by_points(
        "alleycat", keep=lambda state, w, loser: state.turn_positions()[loser] == 0)
    base, _ = play("alleycat", 2, seed=seed, actions=actions)
    assert base.observation(0)["start"] == pos.index(1)  # Saturday's start player
    state, _ = play("alleycat", 2, komi_for(0, m + 1), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert ranks[loser] == 1 and scores[loser] == base.scores()[loser] + m + 1
    state, _ = play("alleycat", 2, komi_for(0, m), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores[w] and ranks[loser] == 1 and ranks[w] == 2
    assert state.interim(loser) == base.interim(loser)
    # A loser at position 1 (Saturday's start player) loses the tie, wins with m + 1.
    seed, actions, w, loser, m, pos = decided_by_points(
        "alleycat", keep=lambda state, w, loser: state.turn_positions()[loser] == 1)
    state, _ = play("alleycat", 2, komi_for(1, m), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores[w] and ranks[loser] == 2 and ranks[w] == 1
    state, _ = play("alleycat", 2, komi_for(1, m + 1), seed=seed, actions=actions)
    assert state.ranks()[loser] == 1


def test_alleycat_solo_week_is_still_decided_by_its_objectives():
    base, actions = play("alleycat", 1, seed=3)
    scores0, ranks0 = base.scores(), base.ranks()
    state, _ = play("alleycat", 1, [40], seed=3, actions=actions)
    assert (state.scores(), state.ranks()) == ([scores0[0] + 40], ranks0)


def test_manfredini_margin_and_coin_tie_break():
    def coins(state, seat):
        return state.features(seat)[state.feature_names().index("coins")]

    # A loser with more coins: level on points, the coins make him the winner.
    seed, actions, w, loser, m, pos = decided_by_points(
        "manfredini", keep=lambda state, w, loser: coins(state, loser) > coins(state, w))
    state, _ = play("manfredini", 2, komi_for(pos[loser], m + 1), seed=seed, actions=actions)
    assert state.ranks()[loser] == 1
    state, _ = play("manfredini", 2, komi_for(pos[loser], m), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores[w] and ranks[loser] == 1 and ranks[w] == 2
    # A loser with fewer coins loses the tie.
    seed, actions, w, loser, m, pos = decided_by_points(
        "manfredini", keep=lambda state, w, loser: coins(state, loser) < coins(state, w))
    state, _ = play("manfredini", 2, komi_for(pos[loser], m), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == scores[w] and ranks[loser] == 2 and ranks[w] == 1
    state, _ = play("manfredini", 2, komi_for(pos[loser], m + 1), seed=seed, actions=actions)
    assert state.ranks()[loser] == 1


def test_enemy_chocolatier_race_winner_and_capped_draw_stand():
    """The game is a race decided in play: the bonus moves the score only."""
    seed, actions, w, loser, m, pos = decided_by_points("enemy_chocolatier")
    base, _ = play("enemy_chocolatier", 2, seed=seed, actions=actions)
    state, _ = play("enemy_chocolatier", 2, komi_for(pos[loser], m + 1), seed=seed, actions=actions)
    scores, ranks = state.scores(), state.ranks()
    assert scores[loser] == base.scores()[loser] + m + 1 and scores[loser] > scores[w]
    assert ranks == base.ranks()
    # A game stopped at the round cap is a draw, whatever the bonus.
    base, actions = play("enemy_chocolatier", 3, seed=1, **{"sim.round_cap": 1})
    assert base.end_reason() == "cap" and base.ranks() == [1, 1, 1]
    state, _ = play("enemy_chocolatier", 3, [0, 0, 20], seed=1, actions=actions, **{"sim.round_cap": 1})
    assert state.ranks() == [1, 1, 1]
    assert state.scores()[state.turn_positions().index(2)] == \
        base.scores()[base.turn_positions().index(2)] + 20


# ---- each game's turn-order knobs ----

@pytest.mark.parametrize("game", GAMES)
def test_position_knobs_are_params_whose_every_value_is_valid(game):
    spec = get_game(game)
    defaults = {p.name: p.value for p in spec.defaults()}
    assert "compensation.points" not in spec.position_knobs
    for name, grid in spec.position_knobs.items():
        assert name in defaults, name
        assert defaults[name] in grid, f"{name}: the rulebook's {defaults[name]} is not in {grid}"
        assert len(set(grid)) == len(grid) >= 2
        for n in range(spec.players[0], spec.players[1] + 1):
            for value in grid:
                params = spec.params(players=n, sets={name: value})
                node = params
                for part in name.split("."):
                    node = getattr(node, part)
                assert node == value


def test_declared_knobs():
    assert get_game("fabryka").position_knobs == {"collect_count": (3, 4, 5, 6, 7), "opening_belt": (0, 1, 2)}
    assert get_game("enemy_chocolatier").position_knobs == {"start_money.step": (0, 1, 2, 3)}
