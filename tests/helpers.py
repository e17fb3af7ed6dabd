"""Shared test helpers: batch runs into fresh arrays, random playouts through the
checked Python API, running a test body in a forked child so an engine crash fails
one test instead of killing the whole pytest run, and probes of known view bugs."""
from __future__ import annotations

import os
import signal
import traceback
from functools import cache

import numpy as np

from simcore.batch import play_batch
from simcore.registry import get_game

# Far above the longest game of any bundled game; a playout past it does not end.
MAX_TURNS = 100_000


def batch_arrays(state, n_games):
    """Fresh result arrays for n_games of `state`'s game, by play_batch's argument names."""
    n = state.n_players
    rows = n_games * n
    return {
        "game_index": np.zeros(n_games, np.int64),
        "seeds": np.zeros(n_games, np.uint64),
        "turns": np.zeros(n_games, np.int32),
        "end_reason": np.zeros(n_games, np.int8),
        "seat_strategy": np.zeros(rows, np.int8),
        "score": np.zeros(rows, np.int32),
        "rank": np.zeros(rows, np.int8),
        "win": np.zeros(rows, np.float32),
        "first": np.zeros(rows, np.int8),
        "features": np.zeros((rows, state.n_features), np.int32),
        "interim": np.zeros((rows, state.n_interim), np.int32),
    }


def run_batch(state, bots, n_games, run_seed=1, perms=None, seating=1, i0=0, out=None):
    """Play games [i0, i0 + n_games) of run `run_seed` into `out` (default: fresh
    arrays) and return the arrays by name. Default seating: fixed, bot i in seat i."""
    if perms is None:
        perms = [list(range(state.n_players))]
    if out is None:
        out = batch_arrays(state, n_games)
    play_batch(state, bots, np.array(perms, dtype=np.int32), seating, run_seed,
               i0, i0 + n_games, **out)
    return out


def random_playout(state, rng, max_turns=MAX_TURNS):
    """Play uniformly random legal moves (rng: a random.Random) to the end through the
    Python API, which checks every move's legality, and check every invariant after
    each move. Returns the actions played."""
    actions = []
    state.check_invariants()
    while not state.terminal:
        assert len(actions) < max_turns, f"no end after {max_turns} turns"
        legal = state.legal()
        assert legal, "a running game must offer at least one action"
        action = rng.choice(legal)
        state.apply_action(action)
        state.check_invariants()
        actions.append(action)
    assert state.legal() == []
    return actions


def in_child(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) in a forked child and raise here if it failed or crashed.

    Some engine views (observation, to_dict, render) have crashed the interpreter with
    a segmentation fault; run in-process, one such crash would end the whole test run
    and hide every other result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report a failure as text, never return into pytest
        os.close(read_end)
        status = 0
        try:
            fn(*args, **kwargs)
        except BaseException:
            status = 1
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(traceback.format_exc().encode())
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise AssertionError(f"crashed with {signal.Signals(os.WTERMSIG(status)).name}")
    if os.WEXITSTATUS(status) != 0:
        raise AssertionError(f"failed in the child process:\n{report}")


def check_fabryka_views():
    """Fabryka's observation(), to_dict() and render() show the cards really laid out.
    A biscuits card (kind 0) is what the _kinds bug trips on, so this fails for certain
    while that bug lasts (it is a strict xfail in test_fabryka.py)."""
    spec = get_game("fabryka")
    hand = ["almonds", "biscuits", "green", "pink", "dice"]
    belt = ["green", "biscuits", "white"]
    state = spec.new_state()
    state.set_position(hands=[hand, ["blueberries"] * 5], belt=belt, collected=[{}, {}],
                       round=1, to_move=0)
    assert state.observation(0)["hand"] == hand
    assert state.observation(0)["belt"] == belt
    d = state.to_dict()
    assert d["hands"] == [hand, ["blueberries"] * 5] and d["belt"] == belt
    assert len(d["pile"]) == 45 - 3 - 13 and len(d["set_aside"]) == 3
    assert "biscuits" in state.render()


# A deterministic probe for each game with a known bug in its Python views (observation,
# to_dict, render). Delete an entry once its probe's strict xfail starts passing.
VIEW_BUG_PROBES = {"fabryka": check_fabryka_views}


@cache
def views_work(game):
    """False while `game`'s known view bug is there. Such a bug is undefined behaviour
    (out-of-bounds reads): a test reading the views would pass, fail or crash at random,
    so tests call pytest.xfail() instead of running while this is False."""
    probe = VIEW_BUG_PROBES.get(game)
    try:
        if probe is not None:
            in_child(probe)
    except AssertionError:
        return False
    return True
