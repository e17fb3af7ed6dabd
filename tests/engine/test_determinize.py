"""Sampled worlds never contradict what the observer has seen (determinize), in every
game: the observer's observation, the game's invariants and the legal moves stay; what
history rules out is never dealt (Enemy Chocolatier: a recipe a player's holdings once
completed; Manfredini candy-only: a specialist in an opening hand); and what history
allows still is (the sampler is not narrowed past the rules)."""
from __future__ import annotations

import math
import random

import pytest

from helpers import tables
from simcore.registry import get_game


@pytest.mark.parametrize("game,players", list(tables()), ids=lambda x: str(x))
def test_worlds_keep_the_observation_invariants_and_legal_moves(game, players):
    spec = get_game(game)
    st = spec.new_state(spec.params(players=players))
    checked = 0
    for seed in range(2):
        st.new_game(seed)
        rng = random.Random(seed)
        k = 0
        while not st.is_terminal():
            if k % 13 == 0:
                for observer in range(players):
                    w = st.determinized(observer, 100 + k)
                    w.check_invariants()
                    assert w.observation(observer) == st.observation(observer)
                    if observer == st.current_player():
                        assert w.legal_actions() == st.legal_actions()
                    checked += 1
            st.apply(rng.choice(st.legal_actions()))
            k += 1
    assert checked >= 4


# ---- Enemy Chocolatier: a recipe once completed is not his ----

def _completed(recipes, have):
    return {r for r, need in enumerate(recipes) if all(have[i] >= need[i] for i in range(4))}


@pytest.mark.parametrize("players", [2, 4])
def test_enemy_never_deals_a_recipe_a_players_holdings_once_completed(players):
    # Random games; the test keeps its own record of the recipes each
    # seat's holdings completed after each of its purchases (from the public
    # ingredient counts) and checks every world dealt to every observer against it.
    from simcore.games.enemy_chocolatier.params import COLOURS, INGREDIENTS
    spec = get_game("enemy_chocolatier")
    params = spec.params(players=players)
    recipes = [list(r) for r in params.recipes]
    assert len({tuple(r) for r in recipes}) == len(recipes)
    st = spec.new_state(params)
    ruled = 0       # (state, observer, seat) cases where history rules a card out
    worlds = 0
    for seed in range(8):
        st.new_game(seed)
        rng = random.Random(seed)
        seen = [set() for _ in range(players)]
        k = 0
        while not st.is_terminal():
            if k % 2 == 0:
                for observer in range(players):
                    for s in range(players):
                        ruled += s != observer and bool(seen[s])
                    for w_seed in range(3):
                        dealt = st.determinized(observer, 7 * k + w_seed).to_dict()["recipes"]
                        worlds += 1
                        for s in range(players):
                            if s != observer:
                                card = recipes.index([dealt[s][i] for i in INGREDIENTS])
                                assert card not in seen[s], (seed, k, observer, s, card)
            p = st.current_player()
            st.apply(rng.choice(st.legal_actions()))
            k += 1
            if not st.is_terminal():
                have = st.to_dict()["ingredients"][p]
                seen[p] |= _completed(recipes, [have[c] for c in COLOURS[:4]])
                assert sorted(seen[p]) == st.observation(p)["ruled_out"][p]
    assert ruled >= 10 and worlds > 500


def test_enemy_deals_a_consistent_card_even_when_few_are_left():
    # Five recipe cards at 5 players, seat 0 holding card 4. Seat 1's holdings
    # completed cards 1, 2 and 3, seat 2's cards 2 and 3, seat 3's card 3: the one
    # consistent deal gives seats 1-4 cards 0-3 (1 in 24 of the deals: rejection alone
    # fails about half the time, the matching never).
    spec = get_game("enemy_chocolatier")
    recipes = [[3, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 3], [2, 2, 2, 2]]
    params = spec.params(players=5, sets={"recipes": recipes})
    houses = []   # (house id, neighbourhood, colour) in id order
    for seg in params.board.segments:
        for nb in seg:
            houses += [(len(houses) + i, id(nb), c) for i, c in enumerate(nb.colours)]
    owners = {}
    for seat, colours in ((1, ("brown", "tan", "red")), (2, ("tan", "red")), (3, ("red",))):
        for colour in colours:
            used = set()
            for h, nb, c in houses:
                # One house of a neighbourhood each: none closes.
                if c == colour and nb not in used and h not in owners and len(used) < 3:
                    owners[h] = seat
                    used.add(nb)
            assert len(used) == 3
    st = spec.new_state(params)
    st.set_position(owners=owners, money=[5] * 5, recipes=[4, 0, 1, 2, 3])
    assert st.observation(0)["ruled_out"] == [[], [1, 2, 3], [2, 3], [3], []]
    for seed in range(40):
        w = st.determinized(0, seed)
        w.check_invariants()
        assert w.to_dict()["recipes"] == st.to_dict()["recipes"]


# ---- Manfredini candy-only: no specialist in an opening hand ----

def _specialists(cards):
    return sum(not c.isdigit() for c in cards)


def test_manfredini_candy_only_opening_hands_hold_no_specialist():
    spec = get_game("manfredini")
    st = spec.new_state(spec.params(players=2, sets={"variant": "candy"}))
    for seed in range(20):
        st.new_game(seed)
        assert all(_specialists(p["hand"]) == 0 for p in st.to_dict()["players"])
        for w_seed in range(10):
            w = st.determinized(0, w_seed).to_dict()["players"][1]
            assert _specialists(w["hand"]) == 0
            assert _specialists(w["deck"]) == 3   # the three joined the deck


def test_manfredini_candy_only_hand_specialists_follow_the_cards_drawn_since():
    # After seat 1's first turn (one numbered card played, one drawn), its hand may
    # hold at most one specialist, with the chance the cut hypergeometric law gives:
    # hand 3, unseen pool 2 numbered + 8 other cards of which 3 specialists.
    spec = get_game("manfredini")
    st = spec.new_state(spec.params(players=2, sets={"variant": "candy"}))
    rng = random.Random(0)
    hits = draws = 0
    for seed in range(40):
        st.new_game(seed)
        while not st.is_terminal() and not (st.current_player() == 0 and st.to_dict()["players"][1]["played"]):
            st.apply(rng.choice(st.legal_actions()))
        if st.is_terminal():
            continue
        p1 = st.to_dict()["players"][1]
        if len(p1["played"]) != 1 or not p1["played"][0].isdigit():
            continue
        hidden = p1["hand"] + p1["deck"]
        s, n, h = _specialists(hidden), len(hidden) - _specialists(hidden), len(p1["hand"])
        for w_seed in range(25):
            k = _specialists(st.determinized(0, 1000 * seed + w_seed).to_dict()["players"][1]["hand"])
            assert k <= 1
            hits += k
            draws += 1
    assert draws >= 200
    # Law of k in {0, 1}: C(s, k) C(n, h - k), cut at 1 (s = 3, n = 7, h = 3 here).
    w0, w1 = math.comb(s, 0) * math.comb(n, h), math.comb(s, 1) * math.comb(n, h - 1)
    expect = w1 / (w0 + w1)
    half = 4 * math.sqrt(expect * (1 - expect) / draws)
    assert abs(hits / draws - expect) < half, (hits / draws, expect)
