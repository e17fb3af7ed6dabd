"""Shared test helpers, imported by tests in every folder (fixtures are in the conftest.py
files): the checkout's paths, the tables every game is tested at, batch runs into fresh
arrays, random playouts and positions through the checked Python API, hand-built Fabryka positions,
bots bound to a state, the `chocosim` command run in-process, and snapshots of what a
run wrote."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import strategies
from analysis.rundir import scan_run
from simcore.batch import play_batch, result_arrays
from simcore.registry import games, get_game

ROOT = Path(__file__).resolve().parents[1]  # the checkout: README.md, examples/, scripts/
DATA = Path(__file__).resolve().parent / "data"

# Far above the longest game of any bundled game; a playout past it does not end.
MAX_TURNS = 100_000


def tables(every_size=False):
    """(game, players) for every registered game: its smallest and largest table, or
    every table size from one to the other."""
    for game, spec in games().items():
        lo, hi = spec.players
        for n in range(lo, hi + 1) if every_size else sorted({lo, hi}):
            yield game, n


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


def random_position(state, seed: int, moves: int) -> random.Random:
    """Deal game `seed` and play up to `moves` uniformly random legal moves (fewer if the
    game ends first): a position play seldom reaches. Returns the random.Random that
    chose them, to go on with."""
    rng = random.Random(seed)
    state.new_game(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    return rng


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


def described_playout(state, rng):
    """Play uniformly random moves to the end; at every decision describe each legal
    action and check the descriptions: non-empty text, distinct within the decision (each
    answer to the pending decision its own), and describing changes nothing. A game that
    names its decisions (observation()["decision"], with DECISIONS giving the words that
    begin the answers to each) must describe every action as an answer to the pending one."""
    words = getattr(type(state), "DECISIONS", None)
    while not state.is_terminal():
        legal = state.legal_actions()
        texts = [state.describe(a) for a in legal]
        assert all(isinstance(t, str) and t.strip() for t in texts), texts
        same = sorted({t for t in texts if texts.count(t) > 1})
        assert not same, f"{state.phase_label()}: actions {legal} share descriptions {same}"
        if words is not None:
            decision = state.observation(state.current_player())["decision"]
            wrong = [t for t in texts if not t.startswith(words[decision])]
            assert not wrong, f"{state.phase_label()}, decision {decision!r}: {wrong}"
        assert state.legal_actions() == legal
        state.apply(rng.choice(legal))


def fab(params=None, **position):
    """A Fabryka state set to a hand-built position (see FabrykaState.set_position)."""
    state = get_game("fabryka").new_state(params)
    state.set_position(**position)
    return state


def bot_for(state, spec, game="fabryka"):
    """The bot `spec` of `game`, bound to `state`."""
    bot = strategies.build(game, spec)
    bot.bind(state)
    return bot


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every entry of `directory` (not below it), by name: what a refused command must
    leave as it was."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def part_files(out: Path) -> dict[str, bytes]:
    """A run directory's parts and their tallies, by name."""
    return {p.name: p.read_bytes() for p in sorted(out.glob("part-*"))}


def table(out: Path) -> pl.DataFrame:
    """A run directory's results, one row per game and seat, in game and seat order."""
    return scan_run(out).collect().sort("game", "seat")
