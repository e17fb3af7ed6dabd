"""Chocolate Factory (Alley Cat Games), the Master Chocolatier mini-expansion: its parts
in the decks (two of each deck back in the box), the move action, the C and D sides of
the Department Stores, and invariants over random games at every table size. Belts are
squares 1..4 from the entrance, T = the slots above the belt, B = below."""
from __future__ import annotations

import random

import numpy as np
import pytest

import strategies
from simcore.registry import get_game
from simcore.state import CHECKED_BUILD

from helpers import described_playout, random_playout, run_batch
from test_alleycat import PLAIN, TITLES, do, seat, taken, texts

GAME = get_game("alleycat")
EXPANSION = {"master_chocolatier": True}


def new(players=2, seed=1, **sets):
    state = GAME.new_state(GAME.params(players=players, sets=EXPANSION | sets))
    state.new_game(seed)
    return state


def supplying(store, side, room, employee=None, **kw):
    """Seat 0 in the orders phase with `room` in the store room and its store's
    employee (by default one that does not double progress); every other store on A."""
    sides = "".join(side if s == store else "A" for s in TITLES)
    state = new(**{"stores.sides": sides})
    state.set_seat(0, employee=(employee or PLAIN[store], store), store=room, **kw)
    state.enter("orders", 0, start=0)
    return state


# ---- the parts ----

def test_the_new_parts_are_shuffled_in_and_two_of_each_deck_removed():
    for seed in range(20):
        state = new(seed=seed)
        decks = state.to_dict()["decks"]
        display = state.observation(0)["display"]
        shown = [c for packet in display if packet["kind"] == "parts" for c in packet["cards"]]
        # Monday's five parts came from deck A: 15 in play, 2 in the box.
        assert len(decks["parts_a"]) + len(shown) == 15 and len(decks["parts_b"]) == 15
        box = decks["parts_box"]
        assert len(box) == 4 and sum(n.startswith("A") for n in box) == 2
        every = decks["parts_a"] + shown + decks["parts_b"] + box
        assert sorted(every) == sorted([f"A{i}" for i in range(1, 18)] + [f"B{i}" for i in range(1, 18)])
    # Without the expansion the decks are the base game's 15 + 15 and nothing is removed.
    base = GAME.new_state(GAME.params(players=2))
    base.new_game(1)
    assert base.to_dict()["decks"]["parts_box"] == [] and len(base.to_dict()["decks"]["parts_b"]) == 15


def test_move_any_one_chocolate_to_another_square():
    # A16 on B1 faces square 1: after the push it holds the new bean and the cocoa.
    #   [bean cocoa | - | - | -]  --move cocoa to square 4-->  [bean | - | - | cocoa]
    state = new()
    state.set_seat(0, parts={"B1": "A16"}, coal=1, belt=[["cocoa"], [], [], []])
    state.enter("run", 0, start=0)
    state.set_seat(0, belt=[["bean", "cocoa"], [], [], []])
    do(state, "operate A16 on B1")
    assert texts(state) == ["move bean", "move cocoa"]
    do(state, "move cocoa")
    assert texts(state) == ["leave it on its square", "to square 2", "to square 3", "to square 4"]
    do(state, "to square 4")
    assert seat(state, 0)["belt"] == [["bean"], [], [], ["cocoa"]] and seat(state, 0)["coal"] == 0
    # A17: roast or move, one per operation.
    state = new()
    state.set_seat(0, parts={"B1": "A17"}, coal=1)
    state.enter("run", 0, start=0)
    do(state, "operate A17 on B1")
    assert texts(state) == ["option bean > cocoa", "option move"]


def test_upgrade_then_move_and_copy_onto_another_square():
    state = new()
    state.set_seat(0, parts={"T4": "B16", "B4": "B17"}, coal=4)
    state.enter("run", 0, start=0)
    state.set_seat(0, belt=[[], [], [], ["caramel"]])
    do(state, "operate B16 on T4", "upgrade caramel to boxed", "to square 1")
    assert seat(state, 0)["belt"] == [["boxed"], [], [], []]
    state.set_seat(0, belt=[[], [], [], ["nuts"]])
    do(state, "operate B17 on B4", "copy nuts", "to square 2")
    assert seat(state, 0)["belt"] == [[], ["nuts"], [], ["nuts"]]
    assert seat(state, 0)["coal"] == 0


# ---- the employees ----

@pytest.mark.parametrize("players, parts, employees", [
    (1, [4], [5]),                      # solo: the extra employee joins, no extra part
    (2, [3, 2], [3, 3]),
    (3, [2, 2, 1], [2, 2, 2]),
    (4, [2, 1, 1, 1], [2, 2, 1, 1]),
])
def test_one_extra_employee_a_day_and_the_packets(players, parts, employees):
    state = new(players=players, seed=2)
    display = state.observation(0)["display"]
    assert [len(d["cards"]) for d in display if d["kind"] == "parts"] == parts
    assert [len(d["cards"]) for d in display if d["kind"] == "employees"] == employees
    extra = [c for d in display if d["kind"] == "employees" for c in d["cards"] if "(no store)" in c]
    assert len(extra) == 1 and extra[0].split()[0] in ("owner", "helpers", "prodigy")


def test_new_employees_open_no_store():
    state = new()
    state.set_seat(0, employee="owner", store=["chunks", "boxed"])
    state.enter("orders", 0, start=0)
    assert not any(t.startswith("supply ") for t in texts(state))


def test_owner_operates_a_part_without_coal():
    # A4 (2 coal) on B1 faces square 1; no coal left, the Owner pays it once.
    state = new()
    state.set_seat(0, parts={"B1": "A4"}, coal=0, employee="owner", belt=[["cocoa"], [], [], []])
    state.enter("run", 0, start=0)
    # He operates a part, and parts wait for the push: nothing is offered before it.
    assert seat(state, 0)["shifts_left"] == 2
    state.set_seat(0, belt=[["cocoa"], [], [], []])
    assert "operate A4 on B1" not in texts(state)
    assert taken(state)["use the owner"] == "employee_owner"
    do(state, "use the owner")
    assert taken(state) == {"operate A4 on B1 without coal (Owner)": "part_A4"}
    do(state, "operate A4 on B1 without coal (Owner)")
    assert seat(state, 0)["belt"][0] == ["boxed"] and seat(state, 0)["coal"] == 0
    assert "use the owner" not in texts(state)


def test_helpers_operate_a_part_a_second_time_in_a_shift():
    state = new()
    state.set_seat(0, coal=3, employee="helpers")
    state.enter("run", 0, start=0)
    state.set_seat(0, belt=[["bean", "bean"], [], [], []])
    do(state, "operate Roaster on T1")
    assert "operate Roaster on T1" not in texts(state)
    do(state, "use the helpers", "operate Roaster on T1 a second time (Helpers)")
    assert seat(state, 0)["belt"][0] == ["cocoa", "cocoa"] and seat(state, 0)["coal"] == 1
    assert "use the helpers" not in texts(state)


def test_prodigy_makes_two_upgrades_on_one_square():
    state = new()
    state.set_seat(0, coal=0, employee="prodigy")
    state.enter("run", 0, start=0)
    state.set_seat(0, belt=[[], [], ["cocoa"], []])
    do(state, "use the prodigy", "the prodigy works on square 3", "upgrade cocoa to fingers",
       "upgrade fingers to nuts")
    assert seat(state, 0)["belt"][2] == ["nuts"] and "use the prodigy" not in texts(state)


# ---- C sides ----

def test_c_side_moves_a_step_per_value_of_today_s_money():
    # The rulebook: £25 earned at the Corner Shops today, Fresh Fancies' C side (£9).
    state = supplying("fresh_fancies", "C", [], today=25)
    do(state, "supply Fresh Fancies")
    assert seat(state, 0)["tracks"]["fresh_fancies"][0] == 2
    # Below the value there is nothing to supply; the Director doubles it.
    assert "supply Fresh Fancies" not in texts(supplying("fresh_fancies", "C", [], today=8))
    state = supplying("fresh_fancies", "C", [], employee="director", today=18)
    do(state, "supply Fresh Fancies")
    assert seat(state, 0)["tracks"]["fresh_fancies"][0] == 4


def test_c_side_counts_the_stages_paid_today():
    # Small order "3 boxed = 12" paid now: £12 at Palace's C side (£8) is one step.
    state = supplying("palace", "C", ["boxed"] * 3, orders=[("small", 9, 1)])
    assert "supply The Palace Boutique" not in texts(state)
    do(state, "fulfil stage 1 of 3 boxed = 12", "supply The Palace Boutique")
    assert seat(state, 0)["tracks"]["palace"][0] == 1
    # The money of an earlier day does not count.
    state.enter("orders", 0, day=2, start=0)
    assert seat(state, 0)["money"] == 12


# ---- D sides: what each accepts and refuses ----

def test_palace_d_supplies_by_the_rule_of_another_store():
    state = supplying("palace", "D", ["chunks", "chunks", "fingers", "caramel"])
    do(state, "supply The Palace Boutique")
    # Fresh Fancies A (chunks), Salter's A (caramel); House of Luxury A (boxed) and
    # D&G A (pairs of wrapped/boxed) cannot be met, Palace is not "another store".
    assert texts(state) == ["supply as Fresh Fancies", "supply as Salter's Emporium"]
    do(state, "supply as Fresh Fancies", "supply chunks", "supply chunks")
    assert "supply fingers" not in texts(state)
    do(state, "finish the supply")
    me = seat(state, 0)
    assert me["tracks"]["palace"][0] == 2 and me["tracks"]["fresh_fancies"][0] == 0


def test_fresh_fancies_d_takes_one_three_or_five():
    state = supplying("fresh_fancies", "D", ["chunks", "nuts", "boxed", "fingers", "bean"])
    do(state, "supply Fresh Fancies")
    assert "supply bean" not in texts(state)                      # refined only
    do(state, "supply chunks")
    assert "finish the supply" in texts(state)                    # one
    do(state, "supply nuts")
    assert "finish the supply" not in texts(state)                # two is not allowed
    do(state, "supply boxed")
    assert texts(state) == ["finish the supply"]                  # a fourth could not make five
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"]["fresh_fancies"][0] == 3


@pytest.mark.parametrize("room, supplied, refused, steps", [
    (["chunks", "fingers", "nuts", "boxed"], ["chunks", "fingers"], "nuts", 1),   # no caramel: stops
    (["chunks", "fingers", "caramel", "nuts", "boxed"], ["chunks", "fingers", "caramel", "nuts", "boxed"],
     None, 9),
    (["chunks", "fingers", "caramel", "nuts"], ["chunks", "fingers", "caramel", "nuts"], None, 4),
    (["chunks", "boxed"], ["chunks"], "boxed", 0),
])
def test_salters_d_takes_the_kinds_in_order(room, supplied, refused, steps):
    state = supplying("salters", "D", room)
    do(state, "supply Salter's Emporium")
    assert texts(state) == ["supply chunks"]                      # the chain starts with chunks
    do(state, *[f"supply {piece}" for piece in supplied])
    if refused:
        assert f"supply {refused}" not in texts(state)
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"]["salters"][0] == steps


def test_salters_d_refuses_a_chain_without_chunks():
    assert "supply Salter's Emporium" not in texts(supplying("salters", "D", ["fingers", "caramel"]))


def test_house_of_luxury_d_takes_sets():
    state = supplying("house_of_luxury", "D", ["chunks", "fingers", "caramel", "nuts", "boxed", "chunks"])
    do(state, "supply House of Luxury")
    assert "supply boxed" not in texts(state)
    do(state, "supply caramel")
    assert texts(state) == ["supply nuts"]                        # the set is finished first
    do(state, "supply nuts", "supply chunks", "supply fingers")
    # The second chunks has no fingers left to make a set.
    assert texts(state) == ["finish the supply"]
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"]["house_of_luxury"][0] == 3    # 2 + 1
    assert seat(state, 0)["store_room"] == ["chunks", "boxed"]
    assert "supply House of Luxury" not in texts(supplying("house_of_luxury", "D", ["chunks", "chunks"]))


def test_dunstan_and_gilbert_d_takes_pairs_of_different_kinds():
    state = supplying("dunstan_gilbert", "D", ["boxed"] * 4 + ["nuts", "nuts", "chunks"])
    do(state, "supply Dunstan & Gilbert's")
    assert texts(state) == ["supply nuts", "supply boxed"]        # a lone chunks is no pair
    do(state, "supply boxed")
    assert texts(state) == ["supply boxed"]
    do(state, "supply boxed")
    assert texts(state) == ["finish the supply", "supply nuts"]   # no second pair of boxed
    do(state, "supply nuts", "supply nuts", "finish the supply")
    assert seat(state, 0)["tracks"]["dunstan_gilbert"][0] == 2


def test_sides_c_and_d_need_the_expansion():
    from simcore.errors import UserError
    with pytest.raises(UserError):
        GAME.params(players=2, sets={"stores.sides": "CDABA"})


# ---- whole games ----

@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_invariants_over_random_expansion_games(players):
    sides = ("CDCDC", "DCDCD", "ABCDD", "DDDDD")[players - 1]
    state = GAME.new_state(GAME.params(players=players, sets=EXPANSION | {"stores.sides": sides}))
    bots = [strategies.build("alleycat", "random") for _ in range(players)]
    if CHECKED_BUILD:
        out = run_batch(state, bots, 2000, run_seed=players)
        assert (out["turns"] > 0).all()
        return
    for seed in range(40):
        state.new_game(seed)
        random_playout(state, random.Random(seed))


@pytest.mark.parametrize("players, sides", [(1, "CDCDC"), (2, "DCDCD"), (3, "ABCDD"), (4, "DDDDD")])
def test_every_decision_with_c_and_d_sides_describes_its_actions_apart(players, sides):
    # The conformance suite's check, on the store sides only the expansion has.
    state = GAME.new_state(GAME.params(players=players, sets=EXPANSION | {"stores.sides": sides}))
    for seed in range(4):
        state.new_game(seed)
        described_playout(state, random.Random(seed))


@pytest.mark.parametrize("players", [1, 3])
def test_expansion_batch_is_deterministic(players):
    state = GAME.new_state(GAME.params(players=players, sets=EXPANSION | {"stores.sides": "DCDCD"}))
    bots = [strategies.build("alleycat", "heuristic") for _ in range(players)]
    a = run_batch(state, bots, 20, run_seed=3)
    b = run_batch(state, bots, 20, run_seed=3)
    for key in a:
        assert np.array_equal(a[key], b[key]), key


def test_heuristic_uses_the_new_stores_and_parts():
    state = GAME.new_state(GAME.params(players=2, sets=EXPANSION | {"stores.sides": "DCDCD"}))
    bots = [strategies.build("alleycat", "heuristic"), strategies.build("alleycat", "random")]
    out = run_batch(state, bots, 100, run_seed=4)
    names = state.feature_names()
    f = out["features"].T.reshape(100, 2, -1)[:, 0]
    supplies = sum(f[:, names.index(f"store_{s}_supplies")] for s in TITLES)
    assert supplies.mean() > 1
    taken = sum((f[:, names.index(f"part_{p}_day")] > 0) for p in ("A16", "A17", "B16", "B17"))
    assert taken.sum() > 0
    assert out["win"].reshape(100, 2)[:, 0].sum() > 70
