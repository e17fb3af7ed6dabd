"""Shared test helpers: batch runs into fresh arrays, random playouts through the
checked Python API, and running a test body in a forked child so an engine crash fails
one test instead of killing the whole pytest run."""
from __future__ import annotations

import os
import signal
import traceback

import numpy as np

from simcore.batch import play_batch

# Far above the longest game of any bundled game; a playout past it does not end.
MAX_TURNS = 100_000


def run_batch(state, bots, n_games, run_seed=1, perms=None, seating=1, i0=0):
    """Play games [i0, i0 + n_games) of run `run_seed` and return play_batch's result
    arrays by name. Default seating: fixed, bot i in seat i."""
    n = state.n_players
    rows = n_games * n
    if perms is None:
        perms = [list(range(n))]
    out = {
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
