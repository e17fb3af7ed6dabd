"""Shared test helpers: batch runs into fresh arrays and random playouts through the
checked Python API."""
from __future__ import annotations

import numpy as np
import pytest

from simcore.batch import play_batch, result_arrays

# Far above the longest game of any bundled game; a playout past it does not end.
MAX_TURNS = 100_000


def run_batch(state, bots, n_games, run_seed=1, perms=None, seating=1, i0=0, out=None,
              generic=False):
    """Play games [i0, i0 + n_games) of run `run_seed` into `out` (default: fresh
    arrays) and return the arrays by name. Default seating: fixed, bot i in seat i.
    generic: play with the shared loop instead of the game's own (see play_batch)."""
    if perms is None:
        perms = [list(range(state.n_players))]
    if out is None:
        out = result_arrays(state, n_games)
    play_batch(state, bots, np.array(perms, dtype=np.int32), seating, run_seed,
               i0, i0 + n_games, **out, generic=generic)
    return out


def random_playout(state, rng, max_turns=MAX_TURNS):
    """Play uniformly random legal moves (rng: a random.Random) to the end through the
    Python API, which checks every move's legality, and check every invariant after
    each move. Returns the actions played."""
    actions = []
    state.check_invariants()
    while not state.is_terminal():
        assert len(actions) < max_turns, f"no end after {max_turns} turns"
        legal = state.legal_actions()
        assert legal, "a running game must offer at least one action"
        action = rng.choice(legal)
        state.apply(action)
        state.check_invariants()
        actions.append(action)
    assert state.legal_actions() == []
    return actions


CHECKED_WARNING = "chocosim: warning: this is the checked build"


def cli(capsys, *argv: str, all_stderr: bool = False) -> tuple[int, str, str]:
    """Run `chocosim argv...` in-process: (exit code, stdout, stderr). Unless
    `all_stderr`, the line the checked build adds to every run's stderr is left out,
    so a test counts the same lines on either build."""
    from analysis.cli import main

    with pytest.raises(SystemExit) as e:
        main(list(argv))
    captured = capsys.readouterr()
    err = captured.err if all_stderr else "".join(
        x for x in captured.err.splitlines(keepends=True) if not x.startswith(CHECKED_WARNING))
    return e.value.code, captured.out, err
