"""Restricted play: any bot given `forbid=NAME` never takes that component of the game
(unless every legal action takes it), in the batch loop and in `play` alike; forbidding
a component the rules make worthless costs nothing, one a house rule makes decisive costs
a lot (Jaffe et al., AIIDE 2012)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import strategies
from helpers import bot_for, fab, run_batch
from simcore.errors import UserError
from simcore.play import play_game
from simcore.registry import get_game

FAB = get_game("fabryka")
EC = get_game("enemy_chocolatier")
COLLECT = 16


# ---- which actions take a component ----

def test_fabryka_collect_takes_the_kinds_it_would_collect():
    # Belt, oldest first: white then five others; a collect takes the newest five.
    state = fab(hands=[["pink", "dice"], ["pawns"]], collected=[{}, {}],
                belt=["white", "biscuits", "almonds", "green", "yellow", "meeples"],
                round=1, to_move=0, turns_taken=(3, 5), has_collected=(False, True))
    white = state.component_names().index("white")
    almonds = state.component_names().index("almonds")
    assert not state.action_takes(COLLECT, white)            # sixth from the top: stays on the belt
    assert state.action_takes(COLLECT, almonds)
    assert not state.action_takes(0, state.component_names().index("pink"))  # playing takes nothing
    assert state.action_component(0) == -1
    assert state.action_component(COLLECT) == state.component_names().index("meeples")  # the newest
    assert bot_for(state, "random(forbid=white)").allowed(state) == [0, 1, COLLECT]
    assert bot_for(state, "random(forbid=almonds)").allowed(state) == [0, 1]


def test_a_forced_action_stays_playable():
    # Seat 0 has played its hand and not collected: the collect (with white) is all it has.
    state = fab(hands=[[], ["pawns"]], collected=[{}, {}], belt=["white", "dice"],
                round=1, to_move=0, turns_taken=(5, 5), has_collected=(False, True))
    assert state.legal_actions() == [COLLECT]
    assert bot_for(state, "heuristic(forbid=white)").allowed(state) == [COLLECT]


def test_enemy_chocolatier_purchase_takes_the_house_colour():
    state = EC.new_state(EC.params(players=3))
    state.new_game(3)
    names = state.component_names()
    assert names == ["pink", "brown", "tan", "red", "gray"]
    legal = state.legal_actions()
    colour = {a: state.describe(a).split(" for ")[0].split()[-1].rstrip(")") for a in legal[:-1]}
    assert state.describe(legal[-1]).startswith("stop") and state.action_component(legal[-1]) == -1
    for a, c in colour.items():
        assert names[state.action_component(a)] == c
    allowed = bot_for(state, "heuristic(forbid=pink)", "enemy_chocolatier").allowed(state)
    assert allowed == [a for a in legal if colour.get(a) != "pink"]
    assert len(allowed) < len(legal)


def test_unknown_component_is_refused_with_the_names():
    with pytest.raises(UserError, match=r"forbid='chocolate'.*allowed: biscuits, .*white"):
        strategies.build("fabryka", "heuristic(forbid=chocolate)")
    with pytest.raises(UserError, match=r"forbid='white' is not a component of manfredini \(allowed: .*machinist"):
        strategies.build("manfredini", "random(forbid=white)")
    bot = strategies.build("fabryka", "random(forbid=white)")
    assert bot.forbid == -1 and bot.forbid_name == "white" and bot.weights == {}


def test_bind_resolves_the_name_against_the_state():
    bot = strategies.build("fabryka", "random")
    other = type(bot)(forbid="nothing")
    with pytest.raises(UserError, match="forbid='nothing'"):
        other.bind(FAB.new_state())
    ok = type(bot)(forbid="white")
    assert ok.plays_uniform  # unbound: nothing forbidden yet
    ok.bind(FAB.new_state())
    assert ok.forbid == 10 and not ok.plays_uniform
    assert bot.plays_uniform and bot.forbid == -1


# ---- the batch loop and play ----

@pytest.mark.parametrize("game,players,spec", [
    ("fabryka", 2, "random(forbid=white)"),
    ("fabryka", 2, "heuristic(forbid=almonds)"),
    ("fabryka", 2, "greedy(forbid=white)"),
    ("fabryka", 2, "mcts(iterations=30, forbid=white)"),
    ("enemy_chocolatier", 2, "mcts(iterations=10, depth=20, forbid=red)"),
    ("enemy_chocolatier", 3, "heuristic(forbid=pink)"),
    ("enemy_chocolatier", 2, "random(forbid=gray)"),
])
def test_restricted_bot_never_takes_its_component_and_play_matches_the_batch(game, players, spec):
    gs = get_game(game)
    params = gs.params(players=players)
    specs = [spec] + ["random"] * (players - 1)
    for seed in range(4):
        trace = play_game(gs, params, strategies.build_lineup(game, specs), seed)
        out = run_batch(gs.new_state(params), strategies.build_lineup(game, specs), 1, run_seed=seed)
        assert trace.scores == list(out["score"]) and len(trace.steps) == out["turns"][0]
        # Replay: every move of seat 0 takes the forbidden component only if all its
        # legal actions do.
        state = gs.new_state(params)
        state.new_game(trace.game_seed)
        c = state.component_names().index(spec.split("forbid=")[1].rstrip(")"))
        taken = 0
        for step in trace.steps:
            if step["seat"] == 0 and state.action_takes(step["action"], c):
                assert all(state.action_takes(a, c) for a in step["legal"])
                taken += 1
            state.apply(step["action"])
        assert taken <= 4


def test_no_restriction_leaves_the_games_unchanged():
    # forbid is off by default: the same games as before, bit for bit, random fast path
    # included, and a restriction does change them.
    params = FAB.params()
    plain = run_batch(FAB.new_state(params), strategies.build_lineup("fabryka", ["random", "random"]), 200)
    again = run_batch(FAB.new_state(params), strategies.build_lineup("fabryka", ["random", "random"]), 200)
    assert np.array_equal(plain["score"], again["score"])
    restricted = run_batch(FAB.new_state(params),
                           strategies.build_lineup("fabryka", ["random(forbid=white)", "random"]), 200)
    assert not np.array_equal(plain["score"], restricted["score"])
    feats = FAB.new_state(params).feature_names()
    white = feats.index("cards_white")
    # Seat 0 (restricted) takes white only when forced (its last turn of a round):
    # well under half as many as seat 1.
    assert restricted["features"].T[0::2, white].sum() * 2 < restricted["features"].T[1::2, white].sum()


# ---- importance: paired on the same seeds, seats rotated ----

def paired_drop(params, restricted, base, n_games, run_seed=5):
    """Win share of `restricted` minus that of `base` against `base` in the same games
    (same seeds, seats rotated): (mean, half-width of the 95% interval)."""
    state = FAB.new_state(params)
    perms = [[0, 1], [1, 0]]

    def wins(first):
        out = run_batch(state, strategies.build_lineup("fabryka", [first, base]), n_games,
                        run_seed=run_seed, perms=perms, seating=0)
        own = out["seat_strategy"] == 0
        return out["win"][own].astype(float)  # one row per game: strategy 0's win

    d = wins(restricted) - wins(base)
    return d.mean(), 1.96 * d.std(ddof=1) / math.sqrt(n_games)


def test_forbidding_white_is_a_large_drop_when_one_white_wins():
    params = FAB.params(sets={"white_to_win": 1})
    drop, half = paired_drop(params, "heuristic(forbid=white)", "heuristic", 4000)
    assert drop + half < -0.2, (drop, half)


def test_forbidding_a_worthless_absent_kind_changes_nothing():
    # No pink card in the deck: nothing to take, the games are the same.
    params = FAB.params(sets={"deck.pink": 0, "deck.biscuits": 6})
    drop, half = paired_drop(params, "heuristic(forbid=pink)", "heuristic", 2000)
    assert drop == 0 and half == 0


def test_forbidding_a_worthless_kind_changes_nothing_within_its_interval():
    # The single pink card made worth 0 points: avoiding the collects that take it
    # should cost nothing measurable.
    params = FAB.params(sets={"card_points.pink": 0})
    drop, half = paired_drop(params, "heuristic(forbid=pink)", "heuristic", 4000)
    assert abs(drop) <= half, (drop, half)
    assert half < 0.03


def test_components_that_depend_on_the_params_are_checked_before_a_run_starts(tmp_path):
    """Alley Cat names its parts per params (the expansion adds some): a spec is checked
    against the state built for the run, before anything is written."""
    import functools

    from simcore.runner import run

    spec = get_game("alleycat")
    specs = ["heuristic(forbid=nope)", "random"]
    with pytest.raises(UserError, match=r"forbid='nope' is not a component of this game \(allowed: part_"):
        run(spec, spec.params(players=2), specs, functools.partial(strategies.build_lineup, "alleycat", specs),
            tmp_path / "r", n_games=2, jobs=1, quiet=True)
    assert not (tmp_path / "r").exists()
    specs = ["random(forbid=part_Roaster)", "random"]
    run(spec, spec.params(players=2), specs, functools.partial(strategies.build_lineup, "alleycat", specs),
        tmp_path / "ok", n_games=2, jobs=1, quiet=True)
    assert list((tmp_path / "ok").glob("part-*.arrow"))
