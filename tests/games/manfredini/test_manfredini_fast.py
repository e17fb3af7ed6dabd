"""The Manfredini heuristic ranks the actions of a decision by values computed with what
the candidates share worked out once (the recipe plan, the trucks' room, the goods to
ship, each direction's turn value): every such value must equal the straightforward
computation's, exactly (the same float), or the bot's decisions would change. Checked
on random positions of random games of every variant at 2-4 players, and over whole
games of the heuristic itself at every step."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from helpers import bot_for, random_position

from simcore.registry import get_game

GAME = get_game("manfredini")
VARIANTS = ("full", "plantation", "candy")


def _state(players: int, variant: str):
    return GAME.new_state(GAME.params(players=players, sets={"variant": variant}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), variant=st.sampled_from(VARIANTS),
       seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 400))
def test_every_value_is_the_straightforward_one_on_random_positions(players, variant, seed, moves):
    state = _state(players, variant)
    random_position(state, seed, moves)
    if state.is_terminal():
        return
    for action, fast, reference in bot_for(state, "heuristic", "manfredini").values(state, state.current_player()):
        assert fast == reference, f"action {action}: {fast!r}, straightforward {reference!r}"


def test_every_value_is_the_straightforward_one_in_the_heuristics_own_games():
    # The heuristic's own games reach what random play seldom does (full trucks, candy
    # made, the last cards); every step of the turn is seen, and some values differ
    # between actions (or the comparison would prove little).
    steps = set()
    spread = 0
    for players in (2, 4):
        for variant in VARIANTS:
            state = _state(players, variant)
            bot = bot_for(state, "heuristic", "manfredini")
            for seed in range(2):
                state.new_game(seed)
                while not state.is_terminal():
                    values = bot.values(state, state.current_player())
                    for action, fast, reference in values:
                        assert fast == reference, f"{players}p {variant} seed {seed}: action {action}"
                    spread += len({v for _, v, _ in values}) > 1
                    steps.add(state.observation(state.current_player())["turn"]["step"])
                    state.apply(max(values, key=lambda v: v[1])[0])
    assert spread > 500
    assert len(steps) >= 8, steps
