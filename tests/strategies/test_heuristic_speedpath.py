"""The fast paths of the one-move look-ahead bots choose what copy-apply-evaluate chose.

- every decision of seeded games, every table size, against digests recorded from the
  copy-apply-evaluate bots (tests/data/decisions.json, see tests/decisions.py);
- a game's STANDINGS_AFTER (greedy's shortcut) against copy, apply and standing, action
  by action, at every decision of random and greedy games, on the determinized copy
  greedy reads; and it must answer most actions itself, or it spares nothing."""
from __future__ import annotations

import json
import random

import pytest

import strategies
from decisions import digest
from helpers import DATA
from simcore.registry import games
from simcore.strategy import RngView
from strategies.greedy import determinize_draws, standings_after

RECORDED = json.loads((DATA / "decisions.json").read_text())


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_every_decision_as_recorded(key):
    game, bot, players = key.split("/")
    for i, want in enumerate(RECORDED[key]):
        got, asked = digest(game, bot, int(players), 100 + i)
        assert asked > 0
        assert got == want, f"{key}: game {100 + i} differs from the recorded decisions"


# game -> least share of the tries (actions of decisions with a choice) the shortcut
# must answer without playing. Manfredini's answers every one.
SHORTCUTS = {"enemy_chocolatier": 0.9, "manfredini": 1.0}
# (game, rules set) checked: each game's defaults, and Manfredini's other variants and
# the rule options that change which decisions come up (the shift change's ability,
# the Machinist's order, the candy machine's uses).
CASES = [
    pytest.param("enemy_chocolatier", {}, marks=pytest.mark.slow),  # every table size 2-6: ten seconds
    ("manfredini", {}),
    ("manfredini", {"variant": "plantation"}),
    ("manfredini", {"variant": "candy"}),
    ("manfredini", {"variant": "candy", "candy_only.specialists_in_opening_hand": True,
                    "candy.recipe_uses": "per_machine"}),
    ("manfredini", {"shift_change_ability": True, "machinist_order": "space_first",
                    "shift_change_cost": 0}),
]


@pytest.mark.parametrize("game, sets", CASES, ids=lambda c: c if isinstance(c, str) else
                         ",".join(f"{k}={v}" for k, v in c.items()) or "defaults")
def test_standings_after_is_copy_apply_standing(game, sets):
    spec = games()[game]
    lo, hi = spec.players
    answered = tried = counted = decisions = 0
    for players in range(lo, hi + 1):
        state = spec.new_state(spec.params(players=players, sets=sets))
        greedy = strategies.build(game, "greedy")
        greedy.prepare(state)
        bot_rng = RngView.seeded(players)
        for g in range(4):
            # Half the games greedy's own, half random: positions greedy seldom reaches.
            pick = random.Random(g).choice if g % 2 else None
            state.new_game(500 + g)
            while not state.is_terminal():
                legal = state.legal_actions()
                seat = state.current_player()
                if len(legal) > 1:
                    decisions += 1
                    seen = state.determinized(seat, 1000 * g + len(legal))
                    values = standings_after(seen, seat)
                    for a, v in zip(seen.legal_actions(), values):
                        tried += 1
                        if v is None:
                            continue
                        answered += 1
                        trial = seen.copy()
                        trial.apply(a)
                        assert v == trial.standings()[seat], f"{game} {players}p: action {a}"
                    assert seen.legal_actions() == legal
                    # DETERMINIZE_DRAWS: the draws determinize takes, counted (for every
                    # observer: the knowledge groups differ by seat), and the shortcut's
                    # values then read on the state itself, not a deal of it.
                    for observer in range(players):
                        claimed, taken = determinize_draws(state, observer)
                        assert claimed in (None, taken), f"{game} {players}p: draws of seat {observer}"
                    claimed, taken = determinize_draws(state, seat)
                    if claimed is not None:
                        counted += 1
                        assert standings_after(state, seat) == values
                state.apply(pick(legal) if pick else greedy.choose_action(state, bot_rng))
    assert answered >= SHORTCUTS[game] * tried, f"answered {answered} of {tried}"
    # Manfredini counts the draws wherever no deal decides them (candy-only's late
    # specialists do), so greedy deals no copy there.
    if game == "manfredini" and (sets.get("variant") != "candy"
                                 or sets.get("candy_only.specialists_in_opening_hand")):
        assert counted == decisions, f"counted draws at {counted} of {decisions} decisions"


def test_determinize_draws_where_a_seat_knows_cards_only_together():
    # The hand-built recruits of test_manfredini_hidden leave seat 0 knowing the deck's
    # card and one of seat 1's recruits only together (a knowledge group), which its
    # deal shuffles apart: the count must include that shuffle, there and on to the end.
    from games.manfredini.test_manfredini_hidden import _seen_then_drawn
    for hand1, deck1, keeps in ((["2", "1", "5"], ["7", "8", "4"], "lift_operator"),
                                (["2", "1", "8"], ["5", "4", "7"], "sorter")):
        st = _seen_then_drawn(hand1, deck1, keeps)
        pick = random.Random(keeps).choice
        while not st.is_terminal():
            for seat in (0, 1):
                claimed, taken = determinize_draws(st, seat)
                assert claimed == taken, f"seat {seat} at {st.to_dict()['turn']}"
            st.apply(pick(st.legal_actions()))


def test_standings_after_a_sale_the_coin_pile_cuts_short():
    # Seat 0 sells its cacao at the Plantation's Outlet (space 4, two coins a sale) with
    # one coin left in the supply: it gains that one coin, not two.
    from simcore.games.manfredini.rules import ACTION_BASES as A, GOODS
    from games.manfredini.test_manfredini import card, new
    st = new(2)
    st.set_position(to_move=0, hands=[["4"], ["5"]], warehouses=[{"cacao": 1}, {}], coins=[14, 0])
    for a in (card("4"), A["to"], A["stop"]):
        st.apply(a)
    sell = A["sell"] + GOODS.index("cacao")
    assert st.legal_actions() == [A["stop"], sell]
    assert standings_after(st, 0) == [14, 15]
    trial = st.copy()
    trial.apply(sell)
    assert trial.standings()[0] == 15
