"""The Alley Cat heuristic values a piece step of the seat's own run (an input, output,
copy, chute, upgrade or move of a part's or employee's work, or a trade for coal) by what
it changes in the seat's pieces and coal, without copying the state: that delta value
must equal the value of the position the step leads to, copied, applied and scored whole,
exactly (the same float), or the bot's decisions would change. Checked on random
positions of random games at 2-4 players, and over whole games, where it must also
answer most of those steps (or it spares nothing)."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import bot_for, random_position

from simcore.registry import get_game
from simcore.strategy import RngView

GAME = get_game("alleycat")
# The run's piece steps the delta answers, by the decision's name in the observation.
PIECE_STEPS = {"input", "output", "copy", "chute", "upgrade", "move to"}
SLOTS = ("T1", "T2", "T3", "T4", "B1", "B2", "B3", "B4")   # slot names by A_SLOT offset


def _position(players: int, seed: int, moves: int):
    state = GAME.new_state(GAME.params(players=players))
    random_position(state, seed, moves)
    return state


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 900))
def test_the_delta_value_is_the_value_of_the_position_reached(players, seed, moves):
    state = _position(players, seed, moves)
    if state.is_terminal():
        return
    for action, delta, whole in bot_for(state, "heuristic", "alleycat").delta_values(state, state.current_player()):
        assert delta is None or delta == whole, f"action {action}: delta {delta!r}, whole {whole!r}"


def test_the_delta_answers_the_piece_steps_of_whole_games():
    answered = steps = 0
    for players in (2, 3, 4):
        state = GAME.new_state(GAME.params(players=players))
        bot = bot_for(state, "heuristic", "alleycat")
        for seed in range(3):
            state.new_game(seed)
            pick = random.Random(seed).choice
            while not state.is_terminal():
                seat = state.current_player()
                piece_step = state.observation(seat)["decision"] in PIECE_STEPS
                for action, delta, whole in bot.delta_values(state, seat):
                    assert delta is None or delta == whole, f"{players}p seed {seed}: action {action}"
                    steps += piece_step
                    answered += piece_step and delta is not None
                state.apply(pick(state.legal_actions()))
    assert steps > 500
    assert answered >= 0.8 * steps, f"answered {answered} of {steps} piece steps"


def test_the_shift_menu_values_by_the_delta_as_the_look_ahead_does():
    # Ending a shift (the push) is valued as the position it leads to. A converter of
    # one option whose inputs name one kind each, the Chute's and a repeater's piece, an
    # upgrader's upgrades, and an output piece with the outputs after it: valued as the
    # look-ahead values the chain once completed (a single move played as a forced step
    # and valued whole, several by the best of their deltas).
    answered = {}
    outputs = 0
    for players in (2, 3, 4):
        state = GAME.new_state(GAME.params(players=players))
        bot = bot_for(state, "heuristic", "alleycat")
        rng = RngView.seeded(players)
        for seed in range(2):
            state.new_game(40 + seed)
            pick = random.Random(seed).choice if seed else None
            while not state.is_terminal():
                seat = state.current_player()
                legal = state.legal_actions()
                decision = state.observation(seat)["decision"] if len(legal) > 1 else None
                if decision == "output":
                    for action, delta, whole in bot.delta_values(state, seat, True):
                        assert delta == whole, f"{players}p seed {40 + seed}: output {action}"
                        outputs += 1
                if decision == "shift":
                    for action, delta, whole in bot.delta_values(state, seat, True):
                        assert delta is None or delta == whole, f"{players}p seed {40 + seed}: action {action}"
                        if delta is not None and action < 13:
                            part = state.observation(seat)["players"][seat]["parts"][SLOTS[action - 1]] \
                                if action else "end of shift"
                            answered[part] = answered.get(part, 0) + 1
                state.apply(pick(legal) if pick else bot.choose_action(state, rng))
    # Ending a shift (not the run's last), the printed Roaster (a converter), Upgrader
    # and Chute, and deck parts.
    printed = ("end of shift", "Roaster", "Upgrader", "Chute")
    assert all(answered.get(part, 0) > 50 for part in printed), answered
    assert sum(answered.values()) > sum(answered[part] for part in printed), answered
    assert outputs > 50


def test_solo_is_never_answered_by_the_delta():
    # Solo, the objectives are judged on the state itself: every move is copied.
    state = _position(1, 3, 0)
    bot = bot_for(state, "heuristic", "alleycat")
    pick = random.Random(3).choice
    while not state.is_terminal():
        assert all(delta is None for _, delta, _ in bot.delta_values(state, state.current_player()))
        state.apply(pick(state.legal_actions()))
