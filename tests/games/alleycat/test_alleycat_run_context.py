"""While the Alley Cat heuristic takes a decision of the seat's own run (2-4 players), it
values the positions it reaches in that run from what the run fixes, worked out once
(money and steps, the beans a shift loads, today's supply plan), and keeps the orders'
value by the pools of the kinds the orders need, from one decision to the next while the
seat's orders, stages and currency stay the same. Every such value must equal the
position's value worked out afresh (the same float), or decisions would change; and the
kept values must never outlive what they were worked out for: a bot that played other
games, at other table sizes, decides each new game as a fresh bot does."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import bot_for, random_position

from simcore.registry import get_game
from simcore.strategy import RngView

GAME = get_game("alleycat")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_run_context_values_as_afresh_over_whole_games(players):
    state = GAME.new_state(GAME.params(players=players))
    bot = bot_for(state, "heuristic", "alleycat")
    rng = RngView.seeded(players)
    valued = tried = 0
    for g in range(3 if players == 2 else 2):
        # Half the games the heuristic's own (its kept values as they build up in
        # play), half random: positions it seldom reaches.
        pick = random.Random(g).choice if g % 2 else None
        state.new_game(500 + g)
        while not state.is_terminal():
            legal = state.legal_actions()
            if len(legal) > 1:
                for fast, plain in bot.run_values(state, state.current_player()):
                    tried += 1
                    if fast is not None:
                        valued += 1
                        assert fast == plain, f"{players}p game {500 + g}: {fast!r} against {plain!r}"
            state.apply(pick(legal) if pick else bot.choose_action(state, rng))
    # Most moves of a run stay in it: the context must answer them, or it spares nothing.
    assert valued >= 0.3 * tried, f"valued in the run context {valued} of {tried}"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 900))
def test_the_run_context_values_as_afresh_at_random_positions(players, seed, moves):
    state = GAME.new_state(GAME.params(players=players))
    random_position(state, seed, moves)
    if state.is_terminal():
        return
    for fast, plain in bot_for(state, "heuristic", "alleycat").run_values(state, state.current_player()):
        assert fast is None or fast == plain


def test_solo_never_enters_the_run_context():
    # Solo, the objectives are judged on the state itself: nothing is kept.
    state = GAME.new_state(GAME.params(players=1))
    bot = bot_for(state, "heuristic", "alleycat")
    state.new_game(11)
    pick = random.Random(11).choice
    while not state.is_terminal():
        assert all(fast is None for fast, _ in bot.run_values(state, 0))
        state.apply(pick(state.legal_actions()))


def _actions(bot, state, players, seed):
    # Game `seed` on `state`, `bot` in seat 0 and fresh bots in the others.
    bots = [bot] + [bot_for(state, "heuristic", "alleycat") for _ in range(players - 1)]
    bot.prepare(state)
    rng = RngView.seeded(seed)
    state.new_game(seed)
    out = []
    while not state.is_terminal():
        action = bots[state.current_player()].choose_action(state, rng)
        out.append(action)
        state.apply(action)
    return out


def test_a_bot_that_played_other_games_decides_as_a_fresh_one():
    tables = {n: GAME.new_state(GAME.params(players=n)) for n in (2, 3, 4)}
    seasoned = bot_for(tables[2], "heuristic", "alleycat")
    for players, seed in ((2, 21), (4, 22), (2, 23), (3, 24)):
        _actions(seasoned, tables[players], players, seed)
    # The same params as games it played (kept values of the same order table) and others.
    for players, seed in ((2, 25), (4, 26), (2, 21)):
        state = tables[players]
        assert _actions(seasoned, state, players, seed) == _actions(bot_for(state, "heuristic", "alleycat"), state, players, seed), (players, seed)
