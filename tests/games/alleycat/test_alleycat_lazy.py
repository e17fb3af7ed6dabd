"""From the orders on, the Alley Cat heuristic tries its moves on the state itself and
determinizes a copy only for a move whose look-ahead draws a card: it must choose as it
did when it determinized for every decision (the first heuristic's way), and leave its
random stream exactly where that determinization left it, or every later decision (and
the search bot's rollouts) would change. Checked on every such decision of whole games at
2-4 players, and on random positions; both ways (determinized or not) must come up."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import bot_for, random_position

from simcore.registry import get_game

GAME = get_game("alleycat")
LATE = {"orders", "store agents", "cleanup"}


def _late(state) -> bool:
    return (not state.is_terminal() and len(state.legal_actions()) > 1
            and state.observation(state.current_player())["phase"] in LATE)


def _check(bot, state, seed):
    lazy, lazy_rng, eager, eager_rng, world = bot.lazy_check(state, seed)
    assert (lazy, lazy_rng) == (eager, eager_rng), f"lazily {lazy} (stream {lazy_rng}), determinized {eager} ({eager_rng})"
    return world


def test_lazy_decisions_are_the_determinized_ones_over_whole_games():
    worlds = []
    for players in (2, 3, 4):
        state = GAME.new_state(GAME.params(players=players))
        bot = bot_for(state, "heuristic", "alleycat")
        for seed in range(2):
            state.new_game(seed)
            pick = random.Random(seed).choice
            while not state.is_terminal():
                if _late(state):
                    worlds.append(_check(bot, state.copy(), seed + len(worlds)))
                state.apply(pick(state.legal_actions()))
    # Both ways come up: some decisions never determinize, some must.
    assert 0 < sum(worlds) < len(worlds), f"{sum(worlds)} of {len(worlds)} decisions determinized"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 900))
def test_lazy_decisions_are_the_determinized_ones_at_random_positions(players, seed, moves):
    state = GAME.new_state(GAME.params(players=players))
    rng = random_position(state, seed, moves)
    while not state.is_terminal() and not _late(state):
        state.apply(rng.choice(state.legal_actions()))
    if not state.is_terminal():
        _check(bot_for(state, "heuristic", "alleycat"), state, seed)


def test_skipping_a_determinization_moves_the_stream_as_the_determinization_does():
    for players in (1, 2, 4):
        state = GAME.new_state(GAME.params(players=players))
        state.new_game(players)
        pick = random.Random(players).choice
        k = 0
        while not state.is_terminal():
            for observer in range(players):
                done, skipped = state.determinize_advance(observer, k)
                assert done == skipped, f"move {k}, observer {observer}"
                k += 1
            state.apply(pick(state.legal_actions()))
