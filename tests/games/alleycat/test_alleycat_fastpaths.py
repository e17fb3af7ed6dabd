"""The Alley Cat heuristic's shortcuts give what the plain computation gives.

- the store awards: score_now ranks a store's markers only where the seat has one;
  checked by hand against the rulebook's examples (Chocolate Factory, Alley Cat Games,
  "Department Store orders") and against the ranking of every store at every decision
  of random games;
- copy_into copies only the seats in play: a clone plays on exactly as the original;
- a move's chain takes the value of its last step, valued on the way (with the store
  awards kept from the position valued before while the table's markers and completed
  orders are the same): it equals the value of the position the chain ends in, scored
  afresh, for every legal move of every decision of random and heuristic games, at
  every table size (and it must be taken often, or it spares nothing). Every decision of seeded games as recorded from the copy-apply-value
  bot: tests/strategies/test_heuristic_speedpath.py."""
from __future__ import annotations

import random

import pytest

import strategies
from simcore.registry import get_game
from simcore.strategy import RngView

GAME = get_game("alleycat")
STORES = ("palace", "fresh_fancies", "salters", "house_of_luxury", "dunstan_gilbert")


def test_store_awards_as_the_rulebook_pays_them():
    # Its examples: 7, 4, 4, 2 pay £16, £8, £4, nothing (the tie goes to the marker that
    # arrived first); 8, 5, 2 pay £16, £8, nothing (2 is short of half of 5). Seat 0
    # also leads a third store alone: three stores supplied pay £6.
    state = GAME.new_state(GAME.params(players=4))
    state.new_game(1)
    for seat, step in ((0, 7), (1, 4), (2, 4), (3, 2)):
        state.set_track(seat, "salters", step)
    for seat, step in ((0, 8), (1, 5), (2, 2)):
        state.set_track(seat, "palace", step)
    state.set_track(0, "fresh_fancies", 3)
    stores = [state.money_parts(p)["stores"] for p in range(4)]
    diversity = [state.money_parts(p)["diversity"] for p in range(4)]
    assert stores == [16 + 16 + 16, 8 + 8, 4 + 0, 0]
    assert diversity == [6, 0, 0, 0]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_store_money_is_every_stores_ranking(players):
    state = GAME.new_state(GAME.params(players=players))
    pick = random.Random(players)
    checked = 0
    for g in range(6):
        state.new_game(40 + g)
        while not state.is_terminal():
            money, _ = state.store_money()
            seen = state.observation(0)["players"]
            for p in range(players):
                parts = state.money_parts(p)
                assert parts["stores"] == sum(money[k][p] for k in range(len(STORES)))
                on = sum(seen[p]["tracks"][z][0] > 0 for z in STORES)
                assert parts["diversity"] == (0, 0, 0, 6, 12, 24)[on]
                checked += parts["stores"] > 0
            state.apply(pick.choice(state.legal_actions()))
    assert checked > 50  # random play reaches the tracks


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_a_clone_plays_on_as_the_original(players):
    state = GAME.new_state(GAME.params(players=players))
    state.new_game(7)
    pick = random.Random(players)
    for _ in range(60 * players):
        state.apply(pick.choice(state.legal_actions()))
    twin = state.copy()
    while not state.is_terminal():
        assert twin.legal_actions() == state.legal_actions() and twin.current_player() == state.current_player()
        assert twin.observation(state.current_player()) == state.observation(state.current_player())
        action = pick.choice(state.legal_actions())
        state.apply(action)
        twin.apply(action)
    assert twin.is_terminal() and twin.standings() == state.standings()


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_a_chain_takes_the_value_of_the_position_it_ends_in(players):
    state = GAME.new_state(GAME.params(players=players))
    bot = strategies.build("alleycat", "heuristic")
    bot.prepare(state)
    rng = RngView.seeded(players)
    taken = tried = 0
    for g in range(4 if players <= 2 else 2):
        # Half the games the heuristic's own, half random: positions it seldom reaches.
        pick = random.Random(g).choice if g % 2 else None
        state.new_game(300 + g)
        while not state.is_terminal():
            legal = state.legal_actions()
            if len(legal) > 1:
                for fast, plain in bot.chain_values(state, state.current_player()):
                    tried += 1
                    if fast is not None:
                        taken += 1
                        assert fast == plain
            state.apply(pick(legal) if pick else bot.choose_action(state, rng))
    assert taken >= 0.1 * tried, f"taken {taken} of {tried}"
