"""The contract every game and every bot keeps (DESIGN.md, "Contracts").

Parametrised over every registered game (simcore.registry.games()), each of its player
counts and every strategy that plays it (strategies.available(game)), so a new game or
bot is tested here with no edit to this file.
"""
from __future__ import annotations

import json
import random
from typing import Literal, get_args, get_origin

import numpy as np
import pytest

import strategies
from helpers import MAX_TURNS, described_playout, random_playout, run_batch, tables
from simcore.batch import play_batch, result_arrays, seating_row, seed_of_bot, seed_of_game
from simcore.conformance import _check_kept, check_observation_tells_moves
from simcore.play import play_game
from simcore.registry import games
from simcore.runner import BASE_COLUMNS, check_columns
from simcore.state import CHECKED_BUILD
from simcore.strategy import RngView


class Case:
    """One game, one table size and (for the tests of bots) one bot in every seat."""

    def __init__(self, game, n_players, bot=None):
        self.spec = games()[game]
        self.game, self.n_players, self.bot = game, n_players, bot
        if bot is not None:
            # A search bot names a small budget for these many short games.
            self.bot = getattr(strategies.available(game)[bot], "CONFORMANCE_SPEC", bot)
        self.params = self.spec.params(players=n_players)

    def new_state(self):
        return self.spec.new_state(self.params)

    def lineup(self, bot=None):
        """Fresh bots for every seat: `bot` (a spec), else this case's bot."""
        return [strategies.build(self.game, bot or self.bot) for _ in range(self.n_players)]


def _variants(spec):
    """The game's variants as param overrides: none, then each top-level switch (a bool,
    or a choice among named values such as Manfredini's `variant`) at each other value."""
    defaults = {p.name: p.value for p in spec.defaults()}
    yield "default", {}
    for name, field in spec.params_cls.model_fields.items():
        if field.annotation is bool:
            others = [not defaults[name]]
        elif get_origin(field.annotation) is Literal and name != "players":
            others = [v for v in get_args(field.annotation) if v != defaults[name]]
        else:
            continue
        for value in others:
            yield f"{name}={value}", {name: value}


def _variant_tables():
    for game, n in tables(every_size=True):
        for label, sets in _variants(games()[game]):
            yield pytest.param(game, n, sets, id=f"{game}-{n}p-{label}")


@pytest.fixture(params=[pytest.param(t, id=f"{t[0]}-{t[1]}p") for t in tables(every_size=True)])
def table(request):
    """A game at one table size, for the tests that play random moves only."""
    return Case(*request.param)


@pytest.fixture(params=[pytest.param((g, n, bot), id=f"{g}-{n}p-{bot}")
                        for g, n in tables(every_size=True) for bot in strategies.available(g)])
def case(request):
    """A game at one table size with one of its bots in every seat."""
    return Case(*request.param)


def snapshot(state):
    """Everything the engine reports about a state through its C-level accessors."""
    seats = range(state.n_players)
    return (state.current_player(), state.legal_actions(), state.standings(),
            [state.features(p) for p in seats], [state.interim(p) for p in seats])


def ranks_ok(ranks, n):
    """Ranks 1..n with a winner; a one-seat game is won (1) or lost (2: no winner)."""
    if n == 1:
        return list(ranks) in ([1], [2])
    return 1 in ranks and all(1 <= r <= n for r in ranks)


def bot_playout(state, bots, run_seed, index=0):
    """Play game `index` of a run with these bots through the checked Python API, with
    the batch loop's seeds; assert every chosen action is legal and every invariant
    holds after each move. Returns the number of moves."""
    gseed = seed_of_game(run_seed, index)
    state.new_game(gseed)
    rngs = [RngView.seeded(seed_of_bot(gseed, p)) for p in range(state.n_players)]
    for bot in bots:
        bot.prepare(state)
    moves = 0
    while not state.is_terminal():
        assert moves < MAX_TURNS, f"no end after {MAX_TURNS} moves"
        legal = state.legal_actions()
        action = bots[state.current_player()].choose_action(state, rngs[state.current_player()])
        assert action in legal, f"{bots[state.current_player()].spec} chose {action}, legal: {legal}"
        state.apply(action)
        state.check_invariants()
        moves += 1
    return moves


def positions(case, seed):
    """(state, moves left) at about 6 points of a random game, from the deal on; the
    same state object, replayed to each point in turn."""
    state = case.new_state()
    state.new_game(seed)
    actions = random_playout(state, random.Random(seed))
    every = max(1, len(actions) // 6)
    for k in range(0, len(actions), every):
        state.new_game(seed)
        for a in actions[:k]:
            state.apply(a)
        yield state, actions[k:]


# ---- playouts ----

def test_bot_games_end_with_legal_moves_and_valid_states(case):
    state = case.new_state()
    for run_seed in range(5):
        assert bot_playout(state, case.lineup(), run_seed) > 0
        scores, ranks = state.scores(), state.ranks()
        assert len(scores) == len(ranks) == case.n_players
        assert ranks_ok(ranks, case.n_players)
        assert state.end_reason() in type(state).END_REASONS


def test_random_games_end(table):
    state = table.new_state()
    for seed in range(20):
        state.new_game(seed)
        random_playout(state, random.Random(seed))


def test_names_match_counts(table):
    state = table.new_state()
    names, interim = state.feature_names(), state.interim_names()
    assert len(names) == state.n_features == len(state.features(0))
    assert len(interim) == state.n_interim == len(state.interim(0))
    assert len(set(names)) == len(names) and len(set(interim)) == len(interim)
    # A feature named like a base column would overwrite it in the results table.
    assert not set(names) & set(BASE_COLUMNS)
    check_columns(state)


@pytest.mark.parametrize("game, n_players, sets", list(_variant_tables()))
def test_every_decision_describes_its_actions_apart(game, n_players, sets):
    spec = games()[game]
    state = spec.new_state(spec.params(players=n_players, sets=sets))
    for seed in range(4):
        state.new_game(seed)
        described_playout(state, random.Random(seed))


@pytest.mark.parametrize("game, n_players, sets", list(_variant_tables()))
def test_an_observation_tells_apart_what_the_moves_mean(game, n_players, sets):
    """Two positions a seat cannot tell apart (the same observation and legal list) put
    the same decision to it: each move is described alike and leaves it the same
    observation (check_observation_tells_moves, over the moves of random games)."""
    spec = games()[game]
    check_observation_tells_moves(spec, spec.params(players=n_players, sets=sets), range(2))


# ---- clone and determinize ----

def test_clone_is_independent(table):
    final = None
    for state, rest in positions(table, seed=11):
        copy = state.copy()
        assert snapshot(copy) == snapshot(state)
        random_playout(copy, random.Random(len(rest)))  # play the copy out its own way
        for a in rest:  # the original still plays its own game to the same end
            state.apply(a)
        if final is None:
            final = snapshot(state), (state.scores(), state.ranks())
        assert (snapshot(state), (state.scores(), state.ranks())) == final


def test_determinized_keeps_the_game_playable(table):
    for state, _ in positions(table, seed=5):
        for observer in range(table.n_players):
            for seed in range(3):
                other = state.determinized(observer, seed)
                other.check_invariants()
                assert other.current_player() == state.current_player()
                if observer == state.current_player():  # its own decision is what it sees
                    assert other.legal_actions() == state.legal_actions()
                random_playout(other, random.Random(seed))


def test_a_kept_legal_list_is_current_on_copies_and_determinized_worlds(table):
    """The batch loop and the search's random rollouts read a kept legal list in place,
    the rollouts on a copy determinized for the seat to move: it must be the list
    legal_actions() gives at every move of the original, its copies and its worlds."""
    checked = 0
    for state, rest in positions(table, seed=3):
        for world in [state, state.copy(), *(state.determinized(p, 9) for p in range(table.n_players))]:
            for a in rest[:12]:
                kept = world._kept_legal_actions()
                if kept is None or world.is_terminal():
                    break
                assert kept == world.legal_actions()
                checked += 1
                world.apply(a if a in world.legal_actions() else world.legal_actions()[0])
    # Fabryka and Manfredini keep their lists (the check is not vacuous there).
    assert (checked > 0) == (table.game in ("fabryka", "manfredini"))


def test_a_stale_kept_legal_list_fails_conformance():
    class Stale:
        def _kept_legal_actions(self):
            return [0, 1]

        def legal_actions(self):
            return [0, 1, 2]

        def is_terminal(self):
            return False

    with pytest.raises(AssertionError, match=r"^fabryka: the legal list the game keeps is not legal_actions\(\) "
                                             r"on a copy: \[0, 1\]$"):
        _check_kept(games()["fabryka"], Stale(), "on a copy")


def test_determinized_keeps_what_the_observer_sees(table):
    for state, _ in positions(table, seed=5):
        for observer in range(table.n_players):
            seen = state.observation(observer)
            others = [state.determinized(observer, seed) for seed in range(8)]
            assert all(o.observation(observer) == seen for o in others)
            # Every game here hides cards (a shuffled pile at least) while it runs, so
            # 8 resamplings cannot all leave the full state as it was.
            assert any(o.to_dict() != state.to_dict() for o in others)


def test_clone_to_dict_is_independent(table):
    for state, _ in positions(table, seed=3):
        before = json.dumps(state.to_dict(), sort_keys=True)
        copy = state.copy()
        assert json.dumps(copy.to_dict(), sort_keys=True) == before
        copy.apply(copy.legal_actions()[0])
        assert json.dumps(state.to_dict(), sort_keys=True) == before


# ---- traces ----

def test_trace_renders_and_serialises(case):
    trace = play_game(case.spec, case.params, case.lineup(), seed=4)
    text = trace.render()
    assert isinstance(text, str) and trace.end_reason in text
    data = trace.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert all(step["action"] in step["legal"] for step in trace.steps)
    again = play_game(case.spec, case.params, case.lineup(), seed=4)
    assert again.to_dict() == data  # the same seed gives the same game


def test_play_game_is_game_0_of_the_batch(case):
    for run_seed in (1, 2, 3):
        trace = play_game(case.spec, case.params, case.lineup(), seed=run_seed)
        out = run_batch(case.new_state(), case.lineup(), 1, run_seed=run_seed, seating=1)
        assert trace.game_seed == out["seeds"][0]
        assert trace.scores == out["score"].tolist() and trace.ranks == out["rank"].tolist()
        assert trace.end_reason == type(case.new_state()).END_REASONS[out["end_reason"][0]]
        assert len(trace.steps) == out["turns"][0]


# ---- the batch loop ----

def test_batch_results_are_consistent(case):
    """In the checked build the loop itself asserts every move's legality and every
    invariant after each move, so more games are played there; in both builds the
    result arrays must follow the contract."""
    n_games = 400 if CHECKED_BUILD else 100
    n = case.n_players
    state = case.new_state()
    perms = [list(range(n)), list(range(n))[::-1]]
    out = run_batch(state, case.lineup(), n_games, run_seed=9, perms=perms, seating=0)
    assert out["game_index"].tolist() == list(range(n_games))
    assert out["seeds"].tolist() == [seed_of_game(9, g) for g in range(n_games)]
    assert (out["turns"] > 0).all()
    assert ((out["end_reason"] >= 0) & (out["end_reason"] < len(type(state).END_REASONS))).all()
    rank, win = out["rank"].reshape(n_games, n), out["win"].reshape(n_games, n)
    assert all(ranks_ok(r, n) for r in rank.tolist())
    winners = np.maximum((rank == 1).sum(axis=1, keepdims=True), 1)
    assert np.allclose(win, np.where(rank == 1, 1 / winners, 0))
    assert (out["first"].reshape(n_games, n).sum(axis=1) == 1).all()
    # Turn positions: each game's seats hold 0..n-1 once each, and position 0 moved first.
    position = out["position"].reshape(n_games, n)
    assert (np.sort(position, axis=1) == np.arange(n)).all()
    assert ((position == 0) == out["first"].reshape(n_games, n).astype(bool)).all()
    expected = np.array([perms[g % 2] for g in range(n_games)]).ravel()
    assert (out["seat_strategy"] == expected).all()
    # Random seating: each game's row of perms is drawn from its own seed.
    out = run_batch(state, case.lineup(), n_games, run_seed=9, perms=perms, seating=2)
    rows = [seating_row(2, seed, g, len(perms)) for g, seed in enumerate(out["seeds"].tolist())]
    assert set(rows) == {0, 1}
    assert (out["seat_strategy"] == np.array([perms[r] for r in rows]).ravel()).all()


def test_batch_is_reproducible_and_independent_of_chunking(case):
    state = case.new_state()
    n = case.n_players
    rotate = {"perms": [list(range(n)), list(range(n))[::-1]], "seating": 0}
    whole = run_batch(state, case.lineup(), 30, run_seed=21, **rotate)
    again = run_batch(state, case.lineup(), 30, run_seed=21, **rotate)
    head = run_batch(state, case.lineup(), 13, run_seed=21, **rotate)
    tail = run_batch(state, case.lineup(), 17, run_seed=21, i0=13, **rotate)
    for key, value in whole.items():
        assert np.array_equal(value, again[key]), key
        assert np.array_equal(value, np.concatenate([head[key], tail[key]], axis=-1)), key
    other = run_batch(state, case.lineup(), 30, run_seed=22)
    assert not np.array_equal(whole["seeds"], other["seeds"])


def test_game_loop_plays_as_the_generic_loop(case):
    # Each game compiles the batch loop for its own class (simcore/loop.pxi); it must
    # give exactly what the shared loop, with a virtual call per step, gives. The
    # lineup mixes the uniform bot (drawn in the loop) with the case's bot (called).
    state = case.new_state()
    n = case.n_players
    bots = case.lineup() if n == 1 else [strategies.build(case.game, "random")] + case.lineup()[1:]
    rotate = {"perms": [list(range(n)), list(range(n))[::-1]], "seating": 0}
    own = run_batch(state, bots, 12, run_seed=5, **rotate)
    shared = run_batch(state, bots, 12, run_seed=5, generic=True, **rotate)
    for key, value in own.items():
        assert np.array_equal(value, shared[key]), key


def test_python_playout_is_reproducible(case):
    state = case.new_state()
    bot_playout(state, case.lineup(), run_seed=6)
    first = snapshot(state), (state.scores(), state.ranks())
    bot_playout(state, case.lineup(), run_seed=6)
    assert (snapshot(state), (state.scores(), state.ranks())) == first


RESULT_ARRAYS = list(result_arrays(next(iter(games().values())).new_state(), 1))  # the names


@pytest.mark.parametrize("bad", ["no rows", "seat more", "seat fewer", "negative", "too large"])
def test_batch_refuses_bad_seat_orders(table, bad):
    # The loop reads the seat orders by raw pointer: at least one row, a strategy index
    # for each seat, or a clear error before any game is played.
    state = table.new_state()
    n = table.n_players
    perms = {"no rows": np.zeros((0, n)), "seat more": np.zeros((1, n + 1)),
             "seat fewer": np.zeros((1, n - 1)), "negative": np.full((1, n), -1),
             "too large": np.full((1, n), n)}[bad]
    out = result_arrays(state, 2)
    with pytest.raises(ValueError, match="perms"):
        play_batch(state, table.lineup("random"), perms.astype(np.int32), 1, 1, 0, 2, **out)
    assert not out["turns"].any()


@pytest.mark.parametrize("key", RESULT_ARRAYS)
def test_batch_refuses_result_arrays_too_small(table, key):
    state = table.new_state()
    out = result_arrays(state, 4)
    a = out[key]
    # One column short (e.g. features sized for other params), or else one row short;
    # the error names the array.
    narrower = a.ndim == 2 and a.shape[1] > 0
    out[key] = a[:, :-1].copy() if narrower else a[:-1].copy()
    with pytest.raises(ValueError, match="features/interim" if narrower else key):
        run_batch(state, table.lineup("random"), 4, out=out)
