"""Chocolate Factory (Alley Cat Games): hand-worked answers from the rulebook, positions
built by hand (belts drawn as squares 1..4 from the entrance, T = the slots above the
belt, B = below), and invariants over many random games."""
from __future__ import annotations

import random

import numpy as np
import pytest

import strategies
from helpers import random_playout, run_batch
from simcore.batch import seed_of_bot
from simcore.conformance import check_observation_tells_moves
from simcore.registry import get_game
from simcore.state import CHECKED_BUILD, IllegalAction
from simcore.strategy import RngView

GAME = get_game("alleycat")


def new(players=2, seed=1, **sets):
    state = GAME.new_state(GAME.params(players=players, sets=sets))
    state.new_game(seed)
    return state


def texts(state):
    return [state.describe(a) for a in state.legal_actions()]


def do(state, *moves):
    """Play moves named by their description (the engine's own words)."""
    for text in moves:
        legal = {state.describe(a): a for a in state.legal_actions()}
        if text not in legal:
            raise AssertionError(f"{text!r} is not legal; legal: {sorted(legal)}")
        state.apply(legal[text])
        state.check_invariants()


def seat(state, p):
    return state.observation(p)["players"][p]


# ---- Department Store awards (rulebook and summary examples) ----

@pytest.mark.parametrize("tracks, money", [
    ([7, 4, 4, 2], [16, 8, 4, 0]),  # rulebook: Christina, Simon, Matt, Brett
    ([8, 5, 2], [16, 8, 0]),        # rulebook: 2 is short of half of 5, rounded up
    ([5, 3, 1], [16, 8, 0]),        # summary
    ([5, 2, 1], [16, 0, 0]),        # summary: second unpaid, so third is too
    ([3, 0], [16, 0]),              # a marker still off the track is out of it
])
def test_store_awards(tracks, money):
    state = new(players=len(tracks))
    for p, t in enumerate(tracks):
        if t:
            state.set_track(p, "salters", t)
    paid, _ = state.store_money()
    assert paid[2] == money


def test_store_tie_goes_to_the_earlier_arrival():
    state = new(players=3)
    state.set_track(2, "palace", 5)   # arrives first: under the others
    state.set_track(0, "palace", 5)
    state.set_track(1, "palace", 3)
    paid, place = state.store_money()
    assert paid[0] == [8, 4, 16] and place[0] == [2, 3, 1]


def test_store_awards_are_settled_at_the_end_with_diversity():
    state = new(players=2)
    for store in ("palace", "fresh_fancies", "salters", "house_of_luxury"):
        state.set_track(0, store, 1)
    state.set_seat(0, coal=0)
    state.set_seat(1, coal=0)
    parts = state.money_parts(0)
    assert parts["stores"] == 4 * 16 and parts["diversity"] == 12


# ---- Corner Shop orders ----

SMALL_CARAMEL_NUTS = ("small", 11, 1)   # "caramel + nuts = 6"
MEDIUM_FINGERS = ("medium", 1, 1)       # "fingers = 2 / 2 fingers = 6"
LARGE_CHUNKS = ("large", 0, 1)          # "chunks = 2 / 2 chunks = 6 / 3 chunks = 10"


def test_corner_shop_example_earns_14():
    # Rulebook: one nut, one caramel and three fingers complete the small order and both
    # stages of the medium one: £14.
    state = new()
    state.set_seat(0, money=0, store=["nuts", "caramel", "fingers", "fingers", "fingers"],
                   orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
    state.enter("orders", 0, start=0)
    do(state, "fulfil stage 1 of caramel + nuts = 6",
       "fulfil stage 1 of fingers = 2 / 2 fingers = 6",
       "fulfil stage 2 of fingers = 2 / 2 fingers = 6")
    me = seat(state, 0)
    assert me["money"] == 14 and me["store_room"] == []
    assert me["completed"] == {"small": 1, "medium": 1, "large": 0}


def test_corner_shop_stages_go_in_order():
    state = new()
    state.set_seat(0, store=["chunks", "chunks"], orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
    state.enter("orders", 0, start=0)
    # Two chunks match the large order's second stage, but its first comes first.
    assert "fulfil stage 1 of chunks = 2 / 2 chunks = 6 / 3 chunks = 10" in texts(state)
    do(state, "fulfil stage 1 of chunks = 2 / 2 chunks = 6 / 3 chunks = 10")
    assert "fulfil stage 2 of chunks = 2 / 2 chunks = 6 / 3 chunks = 10" not in texts(state)


def test_most_completed_orders_pay_every_tied_player():
    state = new(players=3)
    state.set_seat(0, store=["chunks", "chunks"], orders=[("small", 0, 1)])  # 2 chunks = 4
    state.set_seat(1, store=["fingers", "fingers"], orders=[("small", 1, 1)])  # 2 fingers = 4
    state.enter("orders", 0, start=0)
    do(state, "fulfil stage 1 of 2 chunks = 4", "done with orders")
    do(state, "fulfil stage 1 of 2 fingers = 4", "done with orders")
    assert [state.money_parts(p)["most_orders"] for p in range(3)] == [12, 12, 0]


# ---- shifts ----

def test_push_loads_a_bean_and_sends_the_last_square_to_the_store_room():
    #   before:  [bean | cocoa | -    | boxed nuts]  -> exit
    #   after:   [bean | bean  | cocoa| -         ]   store room: boxed nuts
    state = new()
    state.set_seat(0, belt=[["bean"], ["cocoa"], [], ["boxed", "nuts"]], store=[])
    state.enter("run", 0, start=0)
    me = seat(state, 0)
    assert me["belt"] == [["bean"], ["bean"], ["cocoa"], []]
    assert me["store_room"] == ["nuts", "boxed"]
    assert me["shifts_left"] == 2


def test_a_part_works_only_on_the_square_it_faces():
    # A4 (cocoa > boxed) on B2 faces square 2. Cocoa on square 3 is out of its reach.
    state = new()
    state.set_seat(0, parts={"B2": "A4"}, belt=[[], ["cocoa"], [], []], coal=5)
    state.enter("run", 0, start=0)
    assert seat(state, 0)["belt"][2] == ["cocoa"]
    assert "operate A4 on B2" not in texts(state)
    state = new()
    state.set_seat(0, parts={"B2": "A4"}, belt=[["cocoa"], [], [], []], coal=5)
    state.enter("run", 0, start=0)
    do(state, "operate A4 on B2")
    me = seat(state, 0)
    assert me["belt"][1] == ["boxed"] and me["coal"] == 3


def test_each_part_operates_once_a_shift_but_the_chute_is_free_and_repeats():
    state = new()
    state.set_seat(0, belt=[["bean"], ["bean", "bean"], [], []], coal=5)
    state.enter("run", 0, start=0)
    # The Chute (T3) faces square 3, which now holds the two beans pushed along.
    do(state, "operate Chute on T3", "chute to the store room: bean",
       "operate Chute on T3", "chute to the store room: bean")
    assert seat(state, 0)["coal"] == 5 and seat(state, 0)["store_room"] == ["bean", "bean"]
    do(state, "operate Roaster on T1")
    assert "operate Roaster on T1" not in texts(state)
    do(state, "end the shift")
    assert "operate Roaster on T1" in texts(state)


def test_coal_trading_pays_for_an_operation():
    state = new()
    state.set_seat(0, coal=0, store=["bean", "chunks"])
    state.enter("run", 0, start=0)
    assert "operate Roaster on T1" not in texts(state)
    do(state, "trade bean for coal")
    assert seat(state, 0)["coal"] == 1
    do(state, "operate Roaster on T1")
    assert seat(state, 0)["belt"][0] == ["cocoa"] and seat(state, 0)["coal"] == 0


def test_two_option_converter_and_two_piece_input():
    # A1: bean > cocoa | 2 bean > chunks + fingers, both beans on one square.
    state = new()
    state.set_seat(0, parts={"T1": "A1"}, coal=2, employee="supervisor")
    state.enter("run", 0, start=0)
    assert seat(state, 0)["belt"][0] == ["bean", "bean"]
    do(state, "operate A1 on T1", "option 2 bean > chunks + fingers")
    assert seat(state, 0)["belt"][0] == ["chunks", "fingers"]


def test_any_of_inputs_and_outputs():
    # B4: 2 refined > chunks + fingers + caramel + nuts + boxed; B3: refined > 2 any.
    state = new()
    state.set_seat(0, parts={"B2": "B4", "T2": "B3"}, coal=10,
                   belt=[["chunks", "boxed", "caramel"], [], [], []])
    state.enter("run", 0, start=0)
    do(state, "operate B4 on B2")
    assert texts(state) == ["use chunks", "use caramel", "use boxed"]
    do(state, "use chunks", "use caramel")
    assert seat(state, 0)["belt"][1] == ["chunks", "fingers", "caramel", "nuts", "boxed", "boxed"]
    do(state, "operate B3 on T2", "use chunks", "make bean", "make boxed")
    assert seat(state, 0)["belt"][1] == ["bean", "fingers", "caramel", "nuts", "boxed", "boxed", "boxed"]
    assert seat(state, 0)["coal"] == 3


def test_upgrader_with_several_upgrades_and_the_repeater():
    state = new()
    state.set_seat(0, parts={"B1": "A5", "B2": "B6"}, coal=10, belt=[["cocoa"], [], [], []])
    state.enter("run", 0, start=0)
    # A5 on B1 faces square 1: the new bean. Two upgrades on one piece.
    do(state, "operate A5 on B1", "upgrade bean to cocoa", "upgrade cocoa to chunks")
    assert seat(state, 0)["belt"][0] == ["chunks"]
    do(state, "operate B6 on B2", "copy cocoa")
    assert seat(state, 0)["belt"][1] == ["cocoa", "cocoa", "cocoa"]
    assert seat(state, 0)["coal"] == 6


def test_saturday_sweeps_the_factory_into_the_store_room():
    state = new()
    state.set_seat(0, belt=[["boxed"], ["nuts"], ["cocoa"], []], store=[])
    state.enter("run", 0, day=6, start=0)
    do(state, "end the shift", "end the shift", "end the shift")
    me = seat(state, 0)
    assert me["belt"] == [[], [], [], []]
    assert sorted(me["store_room"]) == sorted(["boxed", "nuts", "cocoa", "bean", "bean", "bean"])


def test_before_saturday_the_belt_keeps_its_pieces():
    state = new()
    state.set_seat(0, belt=[[], [], [], []], store=[])
    state.enter("run", 0, day=5, start=0)
    do(state, "end the shift", "end the shift", "end the shift")
    assert seat(state, 0)["belt"] == [["bean"], ["bean"], ["bean"], []]


# ---- employees ----

def test_miners_give_coal():
    state = new()
    state.set_seat(0, coal=0, employee="miner")
    assert seat(state, 0)["coal"] == 2
    state.set_seat(1, coal=0, employee="expert_miner")
    assert seat(state, 1)["coal"] == 4


def test_engineer_runs_four_shifts_and_supervisor_loads_two_beans():
    state = new()
    state.set_seat(0, employee="engineer", belt=[[], [], [], []], store=[])
    state.enter("run", 0, start=0)
    do(state, "end the shift", "end the shift", "end the shift")
    assert state.current_player() == 0 and state.observation(0)["phase"] == "run"
    do(state, "end the shift")
    assert seat(state, 0)["belt"] == [["bean"]] * 4
    assert state.current_player() == 1
    state = new()
    state.set_seat(0, employee="supervisor", belt=[[], [], [], []])
    state.enter("run", 0, start=0)
    do(state, "end the shift")
    assert seat(state, 0)["belt"][:2] == [["bean", "bean"], ["bean", "bean"]]


def test_decorator_upgrades_anywhere_and_packer_doubles_a_square():
    state = new()
    state.set_seat(0, employee="decorator", belt=[[], [], ["chunks"], []])
    state.enter("run", 0, start=0)
    do(state, "load and push the first tile", "use the decorator", "the decorator works on square 4", "upgrade chunks to nuts")
    assert seat(state, 0)["belt"][3] == ["nuts"]
    state = new()
    state.set_seat(0, employee="packer", belt=[["caramel", "boxed"], [], [], []])
    state.enter("run", 0, start=0)
    do(state, "load and push the first tile", "use the packer", "the packer works on square 2")
    assert seat(state, 0)["belt"][1] == ["caramel", "caramel", "boxed", "boxed"]
    assert "use the packer" not in texts(state)


def test_mechanic_halves_the_cost_rounded_up():
    state = new()
    state.set_seat(0, parts={"T4": "A14"}, employee="mechanic", coal=2, belt=[[], [], ["bean"], []])
    state.enter("run", 0, start=0)
    do(state, "assign the mechanic to A14 on T4", "operate A14 on T4")  # 3 coal -> 2
    assert seat(state, 0)["coal"] == 0


def test_technician_reaches_a_neighbouring_square_for_one_coal():
    state = new()
    state.set_seat(0, parts={"B3": "A4"}, employee="technician", coal=3, belt=[["cocoa"], [], [], []])
    state.enter("run", 0, start=0)
    do(state, "assign the technician to A4 on B3")
    # A4 faces square 3; the cocoa is on square 2.
    do(state, "operate A4 on B3", "work on square 2")
    me = seat(state, 0)
    assert me["belt"][1] == ["boxed"] and me["coal"] == 0


def test_salesman_clerk_shop_agent_and_dealer():
    def orders_state(employee, store):
        state = new()
        state.set_seat(0, money=0, employee=employee, store=store,
                       orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
        state.enter("orders", 0, start=0)
        return state

    state = orders_state("salesman", ["caramel", "nuts"])
    do(state, "fulfil stage 1 of caramel + nuts = 6")
    assert seat(state, 0)["money"] == 7
    state = orders_state("clerk", [])
    do(state, "skip (Clerk) stage 1 of fingers = 2 / 2 fingers = 6")
    assert seat(state, 0)["money"] == 0 and seat(state, 0)["orders"][1]["stage"] == 2
    state = orders_state("shop_agent", ["boxed", "chunks"])
    do(state, "fulfil with any refined (Corner Shop Agent) stage 1 of caramel + nuts = 6",
       "pay the stage with boxed", "pay the stage with chunks")
    assert seat(state, 0)["money"] == 6 and seat(state, 0)["store_room"] == []
    state = orders_state("dealer", ["nuts"])
    do(state, "fulfil with fewer pieces (Dealer) stage 1 of caramel + nuts = 6",
       "do the stage without caramel")
    assert seat(state, 0)["money"] == 6 and seat(state, 0)["store_room"] == []


def test_director_doubles_progress_at_his_store():
    # House of Luxury, side A: a step per boxed chocolate; the Director doubles it.
    state = new(players=2)
    state.set_seat(0, employee=("director", "house_of_luxury"), store=["boxed", "boxed", "nuts"])
    state.enter("orders", 0, start=0)
    do(state, "supply House of Luxury")
    assert texts(state) == ["supply boxed"]
    do(state, "supply boxed", "supply boxed", "finish the supply")
    assert seat(state, 0)["tracks"]["house_of_luxury"][0] == 4
    assert "supply House of Luxury" not in texts(state)  # once a day


def test_store_agent_supplies_another_store_after_everyone():
    state = new(players=2)
    state.set_seat(0, employee="store_agent", store=["chunks", "chunks", "caramel"])
    state.set_seat(1, employee="miner", store=[])
    state.enter("orders", 0, start=0)
    do(state, "done with orders")
    assert state.current_player() == 1
    do(state, "done with orders")
    assert state.current_player() == 0
    # Palace A takes any one kind, Fresh Fancies A chunks, Salter's A caramel; not his own.
    assert texts(state) == ["no extra supply", "supply The Palace Boutique (Department Store Agent)",
                            "supply Fresh Fancies (Department Store Agent)",
                            "supply Salter's Emporium (Department Store Agent)"]
    do(state, "supply Fresh Fancies (Department Store Agent)", "supply chunks", "supply chunks",
       "finish the supply")
    assert seat(state, 0)["tracks"]["fresh_fancies"][0] == 2


def test_store_agent_has_no_extra_supply_on_saturday():
    # His card acts "at the start of Cleanup phase (after everyone else fulfilled
    # orders)"; the rulebook: "At the end of Saturday, skip this phase and proceed to
    # 'End of the Game'". On Saturday his chunks stay unsold: the game ends after orders.
    def saturday(**sets):
        state = new(players=2, **sets)
        state.set_seat(0, employee="store_agent", store=["chunks", "chunks"], belt=[[], [], [], []])
        state.set_seat(1, employee="miner", store=[], belt=[[], [], [], []])
        state.enter("orders", 0, day=6, start=0)
        do(state, "done with orders", "done with orders")
        return state

    state = saturday()
    assert state.is_terminal()
    assert seat(state, 0)["tracks"]["fresh_fancies"][0] == 0
    assert state.money_parts(0)["stores"] == 0 and state.money_parts(0)["chocolate"] == 2
    # The engine's earlier reading, every day: a param.
    state = saturday(**{"employees.store_agent_saturday": True})
    assert state.current_player() == 0 and "supply Fresh Fancies (Department Store Agent)" in texts(state)
    do(state, "supply Fresh Fancies (Department Store Agent)", "supply chunks", "supply chunks",
       "finish the supply")
    assert state.is_terminal() and state.money_parts(0)["stores"] == 16


def test_employee_acts_before_the_first_push():
    # Rulebook: "At any time, you may choose to use the action or benefit of your
    # Employee if it applies during the Run Factory phase"; only Parts wait for the push.
    # Nuts left overnight on square 4 leave at the day's first push. The Decorator
    # boxes them first, so a boxed chocolate reaches the store room:
    #   before:  [-    | -   | -   | nuts ]          (Decorator: nuts -> boxed)
    #   push:    [bean | -   | -   | -    ]   store room: boxed
    state = new()
    state.set_seat(0, employee="decorator", store=[], belt=[[], [], [], ["nuts"]])
    state.enter("run", 0, start=0)
    assert texts(state) == ["load and push the first tile", "use the decorator"]
    assert seat(state, 0)["shifts_left"] == 3
    do(state, "use the decorator", "the decorator works on square 4", "upgrade nuts to boxed")
    # Its one use is spent: nothing more to do before the push, which comes at once.
    me = seat(state, 0)
    assert me["store_room"] == ["boxed"] and me["belt"] == [["bean"], [], [], []]
    assert me["shifts_left"] == 2 and "use the decorator" not in texts(state)
    # The earlier reading (the push first) sends the nuts out untouched.
    state = new(**{"employees.act_before_push": False})
    state.set_seat(0, employee="decorator", store=[], belt=[[], [], [], ["nuts"]])
    state.enter("run", 0, start=0)
    assert seat(state, 0)["store_room"] == ["nuts"] and seat(state, 0)["shifts_left"] == 2


def test_packer_and_operator_before_the_first_push():
    # The Packer doubles the last square before it leaves: 2 caramel + 2 boxed arrive.
    state = new()
    state.set_seat(0, employee="packer", store=[], belt=[[], [], [], ["caramel", "boxed"]])
    state.enter("run", 0, start=0)
    do(state, "use the packer", "the packer works on square 4")
    assert seat(state, 0)["store_room"] == ["caramel", "caramel", "boxed", "boxed"]
    # The Expert Operator keeps a piece in the factory, then may move again or push.
    state = new()
    state.set_seat(0, employee="expert_operator", store=[], belt=[[], [], [], ["cocoa", "chunks"]])
    state.enter("run", 0, start=0)
    do(state, "use the expert_operator", "the expert_operator works on square 4", "move chunks",
       "to square 1")
    assert texts(state) == ["load and push the first tile", "use the expert_operator"]
    do(state, "load and push the first tile")
    me = seat(state, 0)
    assert me["store_room"] == ["cocoa"] and me["belt"] == [["bean"], ["chunks"], [], []]
    assert "use the expert_operator" in texts(state)  # two moves left for the shifts
    # An employee without a Run Factory action, or an empty belt: the push comes at once.
    for employee, belt in (("miner", [[], [], [], ["nuts"]]), ("decorator", [[], [], [], []])):
        state = new()
        state.set_seat(0, employee=employee, belt=belt)
        state.enter("run", 0, start=0)
        assert seat(state, 0)["shifts_left"] == 2


def test_operator_moves_one_piece_once_a_day():
    state = new()
    state.set_seat(0, employee="operator", belt=[[], [], ["caramel"], []])
    state.enter("run", 0, start=0)
    # After the push: [bean | - | - | caramel]; the caramel goes back before the next push.
    do(state, "load and push the first tile", "use the operator", "the operator works on square 4", "move caramel", "to square 1")
    assert seat(state, 0)["belt"] == [["bean", "caramel"], [], [], []]
    assert "use the operator" not in texts(state)
    do(state, "end the shift")
    assert "use the operator" not in texts(state)


def test_operator_moves_pieces_between_squares():
    state = new()
    state.set_seat(0, employee="expert_operator", belt=[["boxed"], [], [], []])
    state.enter("run", 0, start=0)
    # After the push: [bean | boxed | - | -]
    do(state, "load and push the first tile", "use the expert_operator", "the expert_operator works on square 1", "move bean", "to square 4")
    do(state, "use the expert_operator", "the expert_operator works on square 2", "move boxed", "to square 3")
    do(state, "use the expert_operator", "the expert_operator works on square 3", "move boxed", "to square 1")
    assert seat(state, 0)["belt"] == [["boxed"], [], [], ["bean"]]
    assert "use the expert_operator" not in texts(state)


# ---- Department Store sides ----

def test_store_side_rules():
    # Palace B: each piece of a different kind.
    state = new(**{"stores.sides": "BAAAA"})
    state.set_seat(0, employee=("director", "palace"), store=["chunks", "chunks", "nuts"])
    state.enter("orders", 0, start=0)
    do(state, "supply The Palace Boutique", "supply chunks")
    assert texts(state) == ["finish the supply", "supply nuts"]
    do(state, "supply nuts", "finish the supply")
    assert seat(state, 0)["tracks"]["palace"][0] == 4  # 2 pieces, doubled
    # House of Luxury B: a step per two bars; an odd bar cannot be left half-supplied.
    state = new(**{"stores.sides": "AAABA"})
    state.set_seat(0, employee="engineer", store=["chunks", "fingers", "chunks"])
    state.enter("orders", 0, start=0)
    do(state, "supply House of Luxury", "supply chunks")
    assert "finish the supply" not in texts(state)
    do(state, "supply fingers")
    assert "supply chunks" not in texts(state)  # a third bar could not make a set
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"]["house_of_luxury"][0] == 1
    # Dunstan & Gilbert's B: exactly two of one class: bars 2, wrapped 3, boxed 4.
    state = new(**{"stores.sides": "AAAAB"})
    state.set_seat(0, employee="packer", store=["caramel", "nuts", "chunks", "boxed"])
    state.enter("orders", 0, start=0)
    do(state, "supply Dunstan & Gilbert's")
    assert texts(state) == ["supply caramel", "supply nuts"]
    do(state, "supply nuts", "supply caramel")
    assert texts(state) == ["finish the supply"]
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"]["dunstan_gilbert"][0] == 3


# Each store's own employee that does not double progress.
PLAIN = {"palace": "miner", "fresh_fancies": "clerk", "salters": "expert_miner",
         "house_of_luxury": "engineer", "dunstan_gilbert": "packer"}
TITLES = {"palace": "The Palace Boutique", "fresh_fancies": "Fresh Fancies",
          "salters": "Salter's Emporium", "house_of_luxury": "House of Luxury",
          "dunstan_gilbert": "Dunstan & Gilbert's"}


@pytest.mark.parametrize("store, side, room, supplied, refused, steps", [
    ("palace", "A", ["nuts", "nuts", "boxed"], ["nuts", "nuts"], "boxed", 2),
    ("palace", "B", ["chunks", "chunks", "nuts"], ["chunks", "nuts"], "chunks", 2),
    ("fresh_fancies", "A", ["chunks", "chunks", "fingers"], ["chunks", "chunks"], "fingers", 2),
    ("fresh_fancies", "B", ["fingers", "chunks"], ["fingers"], "chunks", 1),
    ("salters", "A", ["caramel", "nuts"], ["caramel"], "nuts", 1),
    ("salters", "B", ["nuts", "nuts", "caramel"], ["nuts", "nuts"], "caramel", 2),
    ("house_of_luxury", "A", ["boxed", "boxed", "boxed", "nuts"], ["boxed"] * 3, "nuts", 3),
    ("house_of_luxury", "B", ["chunks", "fingers", "fingers"], ["chunks", "fingers"], "fingers", 1),
    ("dunstan_gilbert", "A", ["caramel", "boxed", "nuts"], ["caramel", "boxed"], "nuts", 1),
    ("dunstan_gilbert", "B", ["chunks", "fingers", "boxed"], ["chunks", "fingers"], "boxed", 2),
    ("dunstan_gilbert", "B", ["boxed", "boxed", "nuts"], ["boxed", "boxed"], "nuts", 4),
])
def test_every_store_side(store, side, room, supplied, refused, steps):
    sides = "".join(side if s == store else "A" for s in TITLES)
    state = new(**{"stores.sides": sides})
    state.set_seat(0, employee=(PLAIN[store], store), store=room)
    state.enter("orders", 0, start=0)
    do(state, f"supply {TITLES[store]}")
    do(state, *[f"supply {piece}" for piece in supplied])
    assert f"supply {refused}" not in texts(state)
    do(state, "finish the supply")
    assert seat(state, 0)["tracks"][store][0] == steps


def test_track_is_capped_at_nine():
    state = new()
    state.set_track(0, "house_of_luxury", 8)
    state.set_seat(0, employee=("director", "house_of_luxury"), store=["boxed"])
    state.enter("orders", 0, start=0)
    do(state, "supply House of Luxury", "supply boxed", "finish the supply")
    assert seat(state, 0)["tracks"]["house_of_luxury"][0] == 9


# ---- cleanup ----

def test_cleanup_keeps_two_chocolates_and_replaces_completed_orders():
    state = new()
    state.set_seat(0, coal=0, store=["bean", "cocoa", "boxed", "nuts", "nuts"],
                   orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
    state.set_seat(1, store=[])
    state.enter("orders", 0, start=0)
    do(state, "done with orders", "done with orders")
    assert state.current_player() == 0 and texts(state) == ["keep overnight: bean", "keep overnight: cocoa",
                                                  "keep overnight: nuts", "keep overnight: boxed"]
    do(state, "keep overnight: boxed", "keep overnight: nuts")
    me = state.observation(0)["players"][0]
    assert me["store_room"] == ["nuts", "boxed"] and me["coal"] == 3 + 6  # 3 traded, then Tuesday's 6


def small_order_completed():
    """Seat 0 completes its small order (caramel + nuts); cleanup then offers it three
    orders drawn to replace it."""
    state = new()
    state.set_seat(0, store=["caramel", "nuts"], orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
    state.set_seat(1, store=[])
    state.enter("orders", 0, start=0)
    do(state, "fulfil stage 1 of caramel + nuts = 6", "done with orders", "done with orders")
    return state


def test_completed_order_is_replaced_by_one_of_three_drawn():
    state = small_order_completed()
    offer = state.observation(0)["offer"]
    assert len(offer) == 3 and "offer" not in state.observation(1)
    sizes = state.observation(0)["deck_sizes"]["orders"]
    do(state, f"keep the large order {offer[2]}")
    me = state.observation(0)["players"][0]
    assert me["orders"][0] == {"order": offer[2], "stage": 1}
    # The two others went under their decks: small and medium keep their size.
    assert state.observation(0)["deck_sizes"]["orders"] == [sizes[0] + 1, sizes[1] + 1, sizes[2]]
    assert state.to_dict()["decks"]["orders"][0][-1] == offer[0]


# ---- the day ----

@pytest.mark.parametrize("players, order, sizes", [
    (2, [0, 1, 1, 0], [3, 2]),
    (3, [0, 1, 2, 2, 1, 0], [2, 2, 1]),
    (4, [0, 1, 2, 3, 3, 2, 1, 0], [2, 1, 1, 1]),
])
def test_snake_draft_of_packets(players, order, sizes):
    state = new(players=players, seed=4)
    start = state.observation(0)["start"]
    assert [len(d["cards"]) for d in state.observation(0)["display"]] == sizes + sizes
    turns = []
    while state.observation(0)["phase"] == "draft":
        if state.observation(0)["decision"] == "packet":
            turns.append(state.current_player())
        state.apply(state.legal_actions()[-1])
    assert [(s - start) % players for s in turns] == order
    view = state.observation(0)
    assert all(pl["employee"] is not None for pl in view["players"])
    assert all(len(pl["parts"]) + len(pl["covered"]) == 4 for pl in view["players"])
    assert all(not d["cards"] for d in view["display"])  # the rest was discarded


def test_start_player_passes_and_money_ties_go_to_the_later_seat():
    state = new(players=3, seed=2)
    first = state.observation(0)["start"]
    rng = random.Random(0)
    starts = []
    while not state.is_terminal():
        starts.append(state.observation(0)["start"])
        state.apply(rng.choice(state.legal_actions()))
    days = sorted(set(starts), key=starts.index)
    assert days == [(first + d) % 3 for d in range(3)]
    assert state.observation(0)["start"] == (first + 5) % 3


def test_final_money_tie_goes_to_the_later_player_of_the_last_day():
    state = new(players=2, seed=3)
    state.set_seat(0, coal=10, store=[], belt=[[], [], [], []])
    state.set_seat(1, coal=10, store=[], belt=[[], [], [], []])
    state.enter("orders", 0, day=6, start=0)
    do(state, "done with orders", "done with orders")
    assert state.is_terminal()
    scores, ranks = state.scores(), state.ranks()
    assert scores[0] == scores[1] and ranks == [2, 1]


# ---- params ----

def test_store_sides_param():
    assert new(**{"stores.sides": "B"}).observation(0)["sides"] == dict.fromkeys(
        ["palace", "fresh_fancies", "salters", "house_of_luxury", "dunstan_gilbert"], "B")
    assert "".join(new(**{"stores.sides": "ABBAB"}).observation(0)["sides"].values()) == "ABBAB"
    sides = {"".join(new(seed=s, **{"stores.sides": "random"}).observation(0)["sides"].values()) for s in range(20)}
    assert len(sides) > 5


def test_real_cards_drop_in_by_toml():
    part = {"name": "X1", "coal": 1, "does": ["2 any > boxed"]}
    deck = [part] + [dict(p) for p in GAME.params().model_dump()["parts"]["deck_a"][1:]]
    state = new(**{"parts.deck_a": deck})
    assert "X1" in state.part_names()


@pytest.mark.parametrize("sets", [
    {"parts.deck_a": [{"name": "X", "coal": 1, "does": ["bean >> cocoa"]}]},
    {"stores.sides": "ABC"},
    {"orders.small": ["bean = 2"]},
    {"coal_per_day": [5, 6]},
])
def test_bad_params_are_refused(sets):
    from simcore.errors import UserError
    with pytest.raises(UserError):
        GAME.params(sets=sets)


# ---- restricted play: the component each action takes ----

def taken(state):
    """{description: component name (None for none)} of the legal actions."""
    names = state.component_names()
    out = {}
    for a in state.legal_actions():
        k = state.action_component(a)
        out[state.describe(a)] = None if k < 0 else names[k]
    return out


def test_components_name_every_part_employee_store_and_order_size():
    names = new().component_names()
    assert names[:4] == ["part_Roaster", "part_Upgrader", "part_Chute", "part_A1"]
    assert len(names) == 3 + 30 + 19 + 5 + 3 and "employee_store_agent" in names
    assert names[-8:] == ["store_palace", "store_fresh_fancies", "store_salters",
                          "store_house_of_luxury", "store_dunstan_gilbert",
                          "order_small", "order_medium", "order_large"]
    assert "part_A17" in new(master_chocolatier=True).component_names()


def test_draft_takes_the_card_kept():
    # 4 players: packets of 2/1/1/1 parts and employees. A one-card packet takes its card
    # at once; a larger one takes nothing until the card kept is picked.
    state = new(players=4, seed=3)
    display = state.observation(0)["display"]
    got = taken(state)
    for j, packet in enumerate(display):
        text = next(t for t in got if t.startswith(f"take {packet['kind']} packet {j % 4 + 1}:"))
        if len(packet["cards"]) > 1:
            assert got[text] is None
        elif packet["kind"] == "parts":
            assert got[text] == f"part_{packet['cards'][0]}"
        else:
            assert got[text] == "employee_" + packet["cards"][0].split()[0]
    do(state, next(t for t in got if t.startswith("take parts packet 1:")))
    assert taken(state) == {f"keep {c}": f"part_{c}" for c in display[0]["cards"]}


def test_the_observation_shows_the_part_being_placed():
    # The reproduction: 2 players, game seed 0, heuristic seats, move 39 keeps a part
    # of a two-card packet. Keeping one or the other left the same observation and
    # legal list, yet "place on T1" then placed a different part.
    state = new(players=2, seed=0)
    bots = [strategies.build("alleycat", "heuristic") for _ in range(2)]
    rngs = [RngView.seeded(seed_of_bot(0, p)) for p in range(2)]
    for bot in bots:
        bot.bind(state)
    for _ in range(39):
        legal = state.legal_actions()
        p = state.current_player()
        state.apply(legal[0] if len(legal) == 1 else bots[p].choose_action(state, rngs[p]))
    assert texts(state) == ["keep A1", "keep A6"]
    assert state.observation(0)["pending"] == {"packet": {"kind": "parts", "number": 2}}
    kept = {}
    for text in texts(state):
        other = state.copy()
        do(other, text)
        kept[text] = other
        assert other.legal_actions() == [1 + s for s in range(8)]
        assert all(o["pending"] == {"part": text[5:]} for o in map(other.observation, (0, 1)))
    assert kept["keep A1"].observation(0) != kept["keep A6"].observation(0)
    assert [texts(o)[0] for o in kept.values()] == ["place A1 on T1, covering Roaster",
                                                     "place A6 on T1, covering Roaster"]
    check_observation_tells_moves(GAME, GAME.params(players=2), range(1))


def test_the_observation_shows_the_move_in_progress():
    # [bean | bean | - | -] after the push: A1 (two options) on B1 waits for its
    # option; the Upgrader A5 on T1 ("upgrade 2") counts its upgrades left.
    state = new()
    state.set_seat(0, parts={"B1": "A1", "T1": "A5"}, coal=5, belt=[["bean"], [], [], []])
    state.enter("run", 0, start=0)
    other = state.copy()
    do(state, "operate A1 on B1")
    assert state.observation(1)["pending"] == {"slot": "B1", "part": "A1", "square": 1}
    do(other, "operate A5 on T1")
    assert other.observation(1)["pending"] == {"square": 1, "upgrades_left": 2, "then_move": False}
    do(other, "upgrade bean to cocoa")
    assert other.observation(0)["pending"] == {"square": 1, "upgrades_left": 1, "then_move": False}


def test_a_packet_of_two_directors_takes_the_director():
    # Every store's deck has a Director: a packet may hold two, and taking it then takes
    # the Director whichever card is kept.
    for seed in range(3000):
        state = new(players=4, seed=seed)
        packet = state.observation(0)["display"][4]  # the employees' two-card packet
        if [c.split()[0] for c in packet["cards"]] == ["director", "director"]:
            break
    else:
        pytest.fail("no deal with two Directors in one packet")
    got = taken(state)
    assert got[next(t for t in got if t.startswith("take employees packet 1:"))] == "employee_director"


def test_shift_actions_take_the_part_operated_or_the_employee():
    # After the push: [bean | - | - | -]; the Roaster (T1) and A5 (B1) face the bean.
    state = new()
    state.set_seat(0, parts={"B1": "A5"}, employee="decorator", coal=5, store=["chunks"],
                   belt=[[], [], [], []])
    state.enter("run", 0, start=0)
    assert taken(state) == {"end the shift": None, "operate Roaster on T1": "part_Roaster",
                            "operate A5 on B1": "part_A5", "trade chunks for coal": None,
                            "use the decorator": "employee_decorator"}


def test_orders_take_the_order_size_the_store_or_the_employee():
    state = new()
    state.set_seat(0, employee="clerk", store=["caramel", "nuts", "chunks"],
                   orders=[SMALL_CARAMEL_NUTS, MEDIUM_FINGERS, LARGE_CHUNKS])
    state.enter("orders", 0, start=0)
    got = taken(state)
    assert got["fulfil stage 1 of caramel + nuts = 6"] == "order_small"
    assert got["skip (Clerk) stage 1 of chunks = 2 / 2 chunks = 6 / 3 chunks = 10"] == "employee_clerk"
    assert got["supply Fresh Fancies"] == "store_fresh_fancies"
    assert got["done with orders"] is None
    do(state, "fulfil stage 1 of caramel + nuts = 6", "done with orders")
    state.set_seat(1, store=[])
    do(state, "done with orders")
    # Cleanup: the replacement order kept takes its size.
    assert set(taken(state).values()) == {"order_small", "order_medium", "order_large"}
    assert all(t.startswith(f"keep the {v[6:]} order") for t, v in taken(state).items())


def test_store_agent_takes_the_store_he_supplies():
    state = new(players=2)
    state.set_seat(0, employee="store_agent", store=["chunks", "caramel"])
    state.set_seat(1, employee="miner", store=[])
    state.enter("orders", 0, start=0)
    do(state, "done with orders", "done with orders")
    assert taken(state) == {"no extra supply": None,
                            "supply The Palace Boutique (Department Store Agent)": "store_palace",
                            "supply Fresh Fancies (Department Store Agent)": "store_fresh_fancies",
                            "supply Salter's Emporium (Department Store Agent)": "store_salters"}


@pytest.mark.parametrize("players, sets", [(1, {}), (2, {}), (4, {}), (1, {"master_chocolatier": True}),
                                           (3, {"master_chocolatier": True, "stores.sides": "DCDBA"})])
def test_components_of_random_games_are_what_the_actions_take(players, sets):
    state = new(players=players, **sets)
    names = state.component_names()
    rng = random.Random(players)
    for seed in range(5):
        state.new_game(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            for a in legal:
                k = state.action_component(a)
                assert -1 <= k < len(names)
                if k >= 0 and names[k].startswith("part_") and state.describe(a).startswith("operate"):
                    assert names[k][5:] in seat(state, state.current_player())["parts"].values()
            state.apply(rng.choice(legal))


# ---- determinize: resample only what the observer cannot see ----

def test_orders_put_under_a_deck_are_hidden_from_the_others():
    # Seat 0 completes its small order and, at cleanup, keeps the large order of the three
    # drawn: the small and medium ones go under their decks, seen by seat 0 only.
    state = small_order_completed()
    offer = state.observation(0)["offer"]
    # While seat 0 chooses, the offer is its own: seat 1's worlds draw it anew.
    assert {state.determinized(0, k).to_dict()["offer"] == offer for k in range(10)} == {True}
    assert len({tuple(state.determinized(1, k).to_dict()["offer"]) for k in range(10)}) > 5
    do(state, f"keep the large order {offer[2]}")
    bottom = [d[-1] for d in state.to_dict()["decks"]["orders"][:2]]
    assert bottom == offer[:2]
    mine = [[d[-1] for d in state.determinized(0, k).to_dict()["decks"]["orders"][:2]] for k in range(10)]
    theirs = [[d[-1] for d in state.determinized(1, k).to_dict()["decks"]["orders"][:2]] for k in range(10)]
    assert all(b == bottom for b in mine)
    assert len({tuple(b) for b in theirs}) > 5
    # A hand-built position that takes an order from the top keeps that knowledge (the
    # order seat 1 held goes under the deck, face up before: everyone saw it).
    top = state.to_dict()["decks"]["orders"][0][0]
    state.set_seat(1, orders=[("small", state.order_texts().index(top), 1)])
    under = state.to_dict()["decks"]["orders"][0][-2:]
    assert under[0] == bottom[0]
    assert {tuple(state.determinized(0, k).to_dict()["decks"]["orders"][0][-2:]) for k in range(10)} == {tuple(under)}


@pytest.mark.parametrize("players, sets", [(1, {}), (2, {}), (4, {}), (1, {"master_chocolatier": True}),
                                           (4, {"master_chocolatier": True})])
def test_determinize_depends_only_on_what_the_observer_sees(players, sets):
    # At points of random games (4 players: far enough for the order decks to wrap round
    # onto the orders put back): a world resampled for a seat keeps its observation, and
    # two states that differ only in what it cannot see resample alike with one seed.
    state = new(players=players, **sets)
    rng = random.Random(players)
    for seed in range(3):
        state.new_game(seed)
        turn = 0
        while not state.is_terminal():
            if turn % 97 == 0 or state.observation(0)["decision"] == "replace order":
                for p in range(players):
                    other = state.determinized(p, 1000 + turn)  # differs only where p is blind
                    assert other.observation(p) == state.observation(p)
                    a, b = state.determinized(p, turn), other.determinized(p, turn)
                    assert a.to_dict() == b.to_dict()
                    moves = random.Random(turn)
                    while not a.is_terminal():
                        move = moves.choice(a.legal_actions())
                        a.apply(move)
                        b.apply(move)
                    assert (a.scores(), a.ranks()) == (b.scores(), b.ranks())
            state.apply(rng.choice(state.legal_actions()))
            turn += 1


# ---- whole games ----

@pytest.mark.parametrize("players", [2, 3, 4])
def test_invariants_over_random_games(players):
    """The checked build asserts every invariant after every move inside the batch loop;
    the release build checks them through the Python API on fewer games."""
    state = GAME.new_state(GAME.params(players=players))
    if CHECKED_BUILD:
        bots = [strategies.build("alleycat", "random") for _ in range(players)]
        out = run_batch(state, bots, 3000, run_seed=players)
        assert (out["turns"] > 0).all()
        return
    for seed in range(60):
        state.new_game(seed)
        random_playout(state, random.Random(seed))


@pytest.mark.parametrize("players", [2, 4])
def test_batch_is_deterministic(players):
    state = GAME.new_state(GAME.params(players=players))
    bots = [strategies.build("alleycat", "random") for _ in range(players)]
    a = run_batch(state, bots, 50, run_seed=7)
    b = run_batch(state, bots, 50, run_seed=7)
    for key in a:
        assert np.array_equal(a[key], b[key]), key


def test_scores_are_the_money_by_source_and_interim_ends_with_it():
    state = GAME.new_state(GAME.params(players=3))
    bots = [strategies.build("alleycat", "random") for _ in range(3)]
    out = run_batch(state, bots, 100, run_seed=3)
    names = state.feature_names()
    money = [i for i, n in enumerate(names) if n.startswith("money_")]
    assert (out["features"].T[:, money].sum(axis=1) == out["score"]).all()
    assert (out["interim"].T[:, -1] == out["score"]).all()


def test_heuristic_beats_random():
    state = GAME.new_state(GAME.params(players=2))
    bots = [strategies.build("alleycat", "heuristic"), strategies.build("alleycat", "random")]
    out = run_batch(state, bots, 200, run_seed=5)
    wins = out["win"].reshape(200, 2).sum(axis=0)
    assert wins[0] > 0.8 * 200


def test_illegal_action_is_refused():
    state = new()
    with pytest.raises(IllegalAction):
        state.apply(999)


def test_features_record_each_day_s_part_and_employee():
    state = GAME.new_state(GAME.params(players=4))
    bots = [strategies.build("alleycat", "random") for _ in range(4)]
    out = run_batch(state, bots, 50, run_seed=8)
    names = state.feature_names()
    f = {n: out["features"].T[:, i] for i, n in enumerate(names)}
    days = range(1, 7)
    assert all((f[f"day{d}_slot"] >= 1).all() and (f[f"day{d}_employee"] >= 1).all() for d in days)
    taken = np.stack([f[n] for n in names if n.startswith("part_")], axis=1)
    # Each player took one part a day: its day numbers are exactly 1..6.
    assert (np.sort(taken, axis=1)[:, -6:] == np.arange(1, 7)).all()
    assert ((taken > 0).sum(axis=1) == 6).all()
    assert (sum(f[n] for n in names if n.startswith("hired_")) == 6).all()
    # A part placed on a slot that already held one covered it.
    covered = sum(f[n] for n in names if n.startswith("covered_"))
    assert (covered <= 6).all()
    assert out["interim"].T.shape == (200, 6)  # one standing per day and seat
