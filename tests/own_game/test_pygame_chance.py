"""A Python game's chance stream and its copies: a copy gets a stream of its own, whatever
the game's copy() does with self.chance (the examples once shared it, and a dice game
copied from them failed the conformance check with no hint why); a determinized copy
(the search bot's) gets a freshly seeded one, so the search never knows the dice to come."""
from __future__ import annotations

import sys

import pytest

from helpers import ROOT
from simcore import registry
from simcore.conformance import check_copies, check_game

sys.path.insert(0, str(ROOT / "examples" / "pig"))

from pig_game.game import ROLL, Pig  # noqa: E402


class Shared(Pig):
    """copy() as both examples wrote it before: the copy shares the original's stream."""

    def copy(self):
        other = object.__new__(type(self))
        other.params, other.chance = self.params, self.chance
        other.banked, other.turns = list(self.banked), list(self.turns)
        other.to_move, other.turn_total, other.last_roll, other.winner = \
            self.to_move, self.turn_total, self.last_roll, self.winner
        return other


class Forgets(Shared):
    """copy() that leaves the stream out."""

    def copy(self):
        other = super().copy()
        del other.chance
        return other


def _state(cls, seed=7):
    spec = registry.spec_of(cls, "test", cls.__name__.lower(), f"{__name__}:{cls.__name__}")
    state = spec.new_state(spec.params(players=2))
    state.new_game(seed)
    return spec, state


def _dice(state, n=30):
    """The faces of the next `n` rolls (the seat to move rolls every time)."""
    faces = []
    for _ in range(n):
        state.apply(ROLL)
        faces.append(state.game.last_roll)
    return faces


@pytest.mark.parametrize("cls", [Pig, Shared, Forgets])
def test_a_copy_rolls_what_the_original_would_and_leaves_its_stream_alone(cls):
    _, state = _state(cls)
    before = state.game.chance.s
    copied = _dice(state.copy())
    assert state.game.chance.s == before  # the copy's rolls moved nothing of the original's
    assert _dice(state) == copied  # the original then rolls the same dice


@pytest.mark.parametrize("cls", [Shared, Forgets])
def test_a_dice_game_with_the_old_examples_copy_passes_the_conformance_check(cls):
    spec, _ = _state(cls)
    check_copies(spec, spec.params(players=2), range(20))
    check_game(cls, games=5)


def test_a_determinized_copy_does_not_know_the_dice_to_come():
    """Pig has no hidden information, yet a determinized copy rolls other dice than the
    game will: its stream is resampled from the searcher's, as a compiled game's is."""
    _, state = _state(Pig)
    coming = _dice(state.copy())
    worlds = [_dice(state.determinized(0, seed)) for seed in range(3)]
    assert all(w != coming for w in worlds) and worlds[0] != worlds[1]
    assert worlds[0] == _dice(state.determinized(0, 0))  # the same seed, the same world
