"""Chance in the search trees (strategies/mcts.pyx, GameState.outcome_key): what a seat
saw of a move's chance outcomes, that its tree's later decisions hang below the outcome
it saw and not below one it did not see, and that a kept subtree follows the real one."""
from __future__ import annotations

import math
import random

import pytest

from helpers import bot_for, tables
from simcore.registry import get_game
from simcore.strategy import RngView

COLLECT = 16
ALL = 10 ** 6       # a chance widening that gives every outcome met its own node


def children(rows, i):
    return [j for j, r in enumerate(rows) if r[4] == i]


# ---- the keys ----

@pytest.mark.parametrize("game,players", list(tables()), ids=lambda x: str(x))
def test_outcome_keys_depend_only_on_what_the_observer_sees(game, players):
    """The real state and a world redealt for an observer (hidden cards, chance future),
    the same move played in both: where the observer sees the same after it, its key is
    the same (another seat's private draw is nothing to it); where its own move leads
    to different sights, only chance can have made them, and the keys differ."""
    spec = get_game(game)
    state = spec.new_state(spec.params(players=players))
    same = differ = private = 0
    for seed in range(3):
        state.new_game(seed)
        rng = random.Random(seed)
        k = 0
        while not state.is_terminal():
            mover = state.current_player()
            # The mover and the seat after it (all seats would triple a 4-player Alley
            # Cat game's time, and find nothing more).
            for q in sorted({mover, (mover + 1) % players}):
                world = state.determinized(q, 1000 * seed + 10 * k + q)
                common = [a for a in state.legal_actions() if a in set(world.legal_actions())]
                if not common or (q == mover and world.legal_actions() != state.legal_actions()):
                    continue
                a = rng.choice(common)
                real, other = state.copy(), world.copy()
                real.apply(a)
                other.apply(a)
                if real.observation(q) == other.observation(q):
                    assert real.outcome_key(q) == other.outcome_key(q), (seed, k, q)
                    same += 1
                    private += any(real.outcome_key(o) != other.outcome_key(o)
                                   for o in range(players) if o != q)
                elif q == mover and not real.is_terminal():
                    assert real.outcome_key(q) != other.outcome_key(q), (seed, k, q)
                    differ += 1
            state.apply(rng.choice(state.legal_actions()))
            k += 1
    assert same > 50
    if game != "enemy_chocolatier":      # the only game with no chance after the deal
        assert differ > 0
        if players > 1 and game != "fabryka":    # Fabryka deals both hands at once
            # Other seats saw different private outcomes where this one saw the same.
            assert private > 0


def test_enemy_chocolatier_has_no_chance_after_the_deal():
    spec = get_game("enemy_chocolatier")
    state = spec.new_state(spec.params(players=3))
    state.new_game(5)
    rng = random.Random(5)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        assert [state.outcome_key(q) for q in range(3)] == [0, 0, 0]


def test_a_determinized_world_shows_no_outcome_until_its_next_move():
    # The record of the real move must not reach a world redealt for another seat.
    fab = get_game("fabryka")
    st = fab.new_state()
    st.set_position(hands=[["white"], []], belt=["almonds"], collected=[{}, {}], round=1,
                    to_move=0, turns_taken=(4, 6), has_collected=(False, True))
    st.apply(0)
    st.apply(COLLECT)        # the round ends: both seats see a new hand
    assert st.outcome_key(0) > 0 and st.outcome_key(1) > 0
    assert st.determinized(0, 1).outcome_key(1) == 0


# ---- the trees ----

def _fabryka_round_end():
    # Seat 0's last two turns of round 1: a card and the collect, in either order, then
    # a new deal. Seat 1 has played out its round.
    fab = get_game("fabryka")
    st = fab.new_state()
    st.set_position(hands=[["white"], []], belt=["almonds", "pawns"], collected=[{}, {}],
                    round=1, to_move=0, turns_taken=(4, 6), has_collected=(False, True))
    assert st.legal_actions() == [0, COLLECT]
    return st


def test_a_seats_deal_splits_its_tree_by_the_hand_it_saw():
    st = _fabryka_round_end()
    # Which new hand of seat 0 gives which key, over many worlds: one key a hand.
    key_of_hand = {}
    for w in range(60):
        world = st.determinized(0, w)
        world.apply(0)
        world.apply(COLLECT)
        hand = tuple(sorted(world.observation(0)["hand"]))
        key_of_hand.setdefault(hand, set()).add(world.outcome_key(0))
    assert all(len(keys) == 1 for keys in key_of_hand.values())
    assert len({k for keys in key_of_hand.values() for k in keys}) == len(key_of_hand) > 5
    # Every outcome its own node (no chance widening).
    bot = bot_for(st, f"mcts(iterations=400, widen=0, chance={ALL})", "fabryka")
    bot.choose_action(st, RngView.seeded(3))
    for seat in (0, 1):
        rows = bot.tree(seat)
        chance = [r for r in rows if r[1] < -1]
        # Two orders of seat 0's last two moves, each followed by deals: several chance
        # children below each second move, and the next round's decisions below them.
        parents = {r[4] for r in chance}
        assert len(parents) == 2 and len(chance) > 2 * 5
        assert all(rows[p][2] == 0 and rows[p][3] > 1 for p in parents)
        assert any(children(rows, rows.index(r)) for r in chance)
        assert all(r[2] == seat for r in chance)
    # Each seat's tree splits by its own hand: the two trees' outcomes are not the same.
    mine = {r[1] for r in bot.tree(0) if r[1] < -1}
    theirs = {r[1] for r in bot.tree(1) if r[1] < -1}
    assert mine != theirs


def _manfredini_opening(seed):
    spec = get_game("manfredini")
    st = spec.new_state(spec.params(players=2))
    st.new_game(seed)
    return st


def test_another_seats_private_draw_does_not_split_a_tree():
    """Manfredini, early in the first half: a seat draws its cards and looks in the
    Break Room alone; the die is rolled for all. In seat 0's tree, a move of seat 1 is
    followed by a chance node only where it rolled the die; seat 1's tree splits below
    its own draws."""
    from simcore.games.manfredini.rules import ACTION_BASES as A
    found = 0
    for seed in range(4):
        st = _manfredini_opening(seed)
        seat = st.current_player()
        bot = bot_for(st, "mcts(iterations=300)", "manfredini")
        bot.choose_action(st, RngView.seeded(seed))
        other = 1 - seat
        rows = bot.tree(seat)
        for r in rows:
            if r[1] < -1:
                parent = rows[r[4]]
                assert parent[2] == seat or parent[1] == A["roll"], (seed, parent)
        theirs = bot.tree(other)
        found += sum(1 for r in theirs if r[1] < -1 and theirs[r[4]][2] == other
                     and theirs[r[4]][1] != A["roll"])
    assert found > 0


def test_kept_subtree_follows_the_outcome_the_move_showed():
    """Manfredini: the bot rolls the die, then decides again. The next search starts
    below the chance node of the number rolled: its visits count toward the budget."""
    from simcore.games.manfredini.rules import ACTION_BASES as A
    spec = get_game("manfredini")
    state = spec.new_state(spec.params(players=2))
    heuristic = bot_for(state, "heuristic", "manfredini")
    tested = 0
    for seed in range(30):
        state.new_game(seed)
        while not state.is_terminal() and tested < 3:
            if A["roll"] in state.legal_actions() and len(state.legal_actions()) > 1:
                seat = state.current_player()
                bot = bot_for(state, f"mcts(iterations=200, chance={ALL}, stop=0)", "manfredini")
                a = bot.choose_action(state, RngView.seeded(1))
                rows = bot.tree(seat)
                move = next(i for i, r in enumerate(rows) if r[4] == 0 and r[1] == state.action_key(a, seat))
                after = state.copy()
                after.apply(a)
                if a == A["roll"] and after.current_player() == seat and len(after.legal_actions()) > 1:
                    k = after.outcome_key(seat)
                    assert k > 0
                    below = {r[1]: r[3] for r in rows if r[4] == move}
                    visits = below.get(-1 - k, 0)
                    bot.choose_action(after, RngView.seeded(2))
                    assert bot.reused == 1 and bot.walks == 200 + max(200 - visits, 50)
                    tested += 1
            state.apply(heuristic.choose_action(state, RngView.seeded(0)))
    assert tested == 3


def test_chance_off_keys_no_tree_by_an_outcome():
    st = _fabryka_round_end()
    bot = bot_for(st, "mcts(iterations=400, widen=0, chance=0)", "fabryka")
    bot.choose_action(st, RngView.seeded(3))
    for seat in (0, 1):
        rows = bot.tree(seat)
        assert all(r[1] >= -1 for r in rows)
        # The next round's decisions hang right below seat 0's second moves.
        assert any(r[0] == 3 for r in rows)


def test_chance_widening_gives_a_move_node_few_outcomes_and_shares_the_rest():
    """At the default chance=1, a move node visited v times has at most sqrt(v + 1)
    chance children (the die's eight faces soon have theirs); the hands of a deal,
    thousands, mostly share the decisions right below the move."""
    st = _fabryka_round_end()
    bot = bot_for(st, "mcts(iterations=400, widen=0)", "fabryka")
    bot.choose_action(st, RngView.seeded(3))
    rows = bot.tree(0)
    parents = {r[4] for r in rows if r[1] < -1}
    assert len(parents) == 2
    for p in parents:
        below = [rows[j] for j in children(rows, p)]
        n_chance = sum(1 for r in below if r[1] < -1)
        assert 1 <= n_chance <= math.ceil(math.sqrt(rows[p][3] + 1))
        # The shared decisions: the next round's, below the move itself.
        assert any(r[1] >= 0 for r in below)
