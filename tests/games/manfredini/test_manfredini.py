"""Chocolate Factory (Manfredini): hand-worked answers from the rulebook, hand-built
positions, invariants over many random games, determinism.

Boards are drawn as the eight factory spaces 1..8 clockwise, `o` = a worker pawn:

    1 2 3 4 5 6 7 8
    . . . o . . . .      a pawn on space 4 only
"""
import numpy as np
import pytest

from simcore.batch import play_batch, result_arrays
from simcore.errors import UserError
from simcore.games.manfredini.params import SPECIALISTS
from simcore.games.manfredini.rules import ACTION_BASES as A, GOODS
from simcore.registry import get_game
from simcore.state import CHECKED_BUILD
from strategies import build

SPEC = get_game("manfredini")
TRUCKS = ("big", "small", "spare")


def new(players=2, variant="full", **sets):
    return SPEC.new_state(SPEC.params(players=players, sets={"variant": variant, **sets}))


def board(drawing):
    """Occupied spaces (1-based) of a drawing like '. . . o . . . .'."""
    return [i + 1 for i, c in enumerate(drawing.split()) if c == "o"]


def card(name):
    return A["card"] + (int(name) - 1 if name.isdigit() else 16 + SPECIALISTS.index(name))


def move(good, truck="big", stacked=False):
    return A["move"] + (GOODS.index(good) * 3 + TRUCKS.index(truck)) * 2 + int(stacked)


def play(st, *actions):
    for a in actions:
        st.apply(a)




def batch(players, variant, n_games, bots="random", seed=11):
    st = new(players, variant)
    strategies = [build("manfredini", bots) for _ in range(players)]
    perms = np.array([list(range(players))], np.int32)
    out = result_arrays(st, n_games)
    play_batch(st, strategies, perms, 1, seed, 0, n_games, **out)
    return st, out


# ---- scoring ----

def test_rulebook_scoring_example_totals_23():
    # One chocolate, one sugar, two chocolate peanuts, three chocolate pretzels on the
    # coloured trucks, four of the candies decorated, two coins:
    # 1 + 1 + 2x1 + 3x3 + 4 decorated + 4 types + 2 coins = 23.
    st = new(2)
    st.set_position(half=1, hands=[["1"], ["1"]],
                    recipes=["chocolate_peanuts", "chocolate_pretzels", "lollipops"],
                    trucks=[{"big": {"chocolate": 1, "sugar": 1, "decorated_chocolate_peanuts": 2,
                                     "decorated_chocolate_pretzels": 2},
                             "small": {"chocolate_pretzels": 1}}, {}],
                    coins=[2, 0])
    assert st.standings()[0] == 23


def test_only_coloured_trucks_score_and_types_count_once():
    st = new(2)
    st.set_position(half=1, hands=[["1"], ["1"]], recipes=["chocolate_peanuts", "truffles", "bonbons"],
                    trucks=[{"big": {"chocolate_peanuts": 1, "decorated_chocolate_peanuts": 1},
                             "spare": {"bonbons": 2, "sugar": 2}}, {}])
    # 2 peanuts x 1 + 1 decorated + 1 type (plain and decorated are one type); the spare
    # truck is not coloured.
    assert st.standings()[0] == 4


def test_plantation_only_scoring_counts_every_truck():
    st = new(3, "plantation")
    st.set_position(hands=[["1"], ["1"], ["1"]],
                    trucks=[{"big": {"chocolate": 2}, "spare": {"sugar": 3, "chocolate": 1}}, {}, {}],
                    coins=[2, 0, 0])
    assert st.standings()[0] == 2 * 3 + 3 + 2


# ---- tie-breaks ----

def _tied(coins, warehouses, spare):
    st = new(2)
    st.set_position(half=1, hands=[["1"], ["1"]],
                    trucks=[{"big": {"sugar": 3 - coins[0]}, "spare": spare[0]},
                            {"big": {"sugar": 3 - coins[1]}, "spare": spare[1]}],
                    warehouses=warehouses, coins=coins)
    return st.scores(), st.ranks()


def test_tie_broken_by_coins():
    scores, ranks = _tied([2, 1], [{}, {}], [{}, {}])
    assert scores[0] == scores[1] and ranks == [1, 2]


def test_tie_broken_by_goods_in_other_trucks_and_warehouse():
    scores, ranks = _tied([1, 1], [{"sugar": 1}, {}], [{}, {"sugar": 1, "chocolate": 1}])
    assert scores[0] == scores[1] and ranks == [2, 1]


def test_full_tie_is_a_shared_victory():
    scores, ranks = _tied([1, 1], [{"sugar": 1}, {}], [{}, {"chocolate": 1}])
    assert ranks == [1, 1]


# ---- transporting: clockwise, capacity, full and empty factory ----

def test_four_card_lands_on_five_with_capacity_two():
    #   1 2 3 4 5 6 7 8
    #   . . . o . . . .    play 4 to the factory: 4 is taken, 5 is free
    st = new(2)
    st.set_position(board=board(". . . o . . . ."), hands=[["4", "7"], ["1"]])
    play(st, card("4"), A["to"])
    turn = st.observation(0)["turn"]
    assert (turn["space"], turn["capacity_left"], turn["step"]) == (5, 2, "transport")
    assert st.observation(0)["board"] == [4, 5]
    # Two goods of one kind from the piles: sugar OR cacao.
    play(st, move("sugar"))
    assert move("cacao") not in st.legal_actions()
    play(st, move("sugar"))
    w = st.observation(0)["players"][0]["warehouse"]
    assert w == {"sugar": 2}


def test_two_card_removes_from_four_with_capacity_three():
    #   1 2 3 4 5 6 7 8
    #   . . . o . . . .    play 2 from the factory: 2 and 3 are empty, 4 is taken
    st = new(2)
    st.set_position(board=board(". . . o . . . ."), hands=[["2"], ["1"]],
                    warehouses=[{"sugar": 2, "chocolate": 2, "cacao": 1}, {}], coins=[0, 0])
    play(st, card("2"), A["from"])
    turn = st.observation(0)["turn"]
    # The outlet on space 4 is offered before the pawn leaves.
    assert (turn["space"], turn["capacity_left"], turn["ability"]) == (4, 3, "outlet")
    assert st.observation(0)["board"] == [4]
    play(st, A["sell"] + GOODS.index("cacao"))
    assert st.observation(0)["board"] == []
    assert st.observation(0)["players"][0]["coins"] == 2
    # Cacao cannot be shipped from the Plantation; sugar and chocolate can be mixed.
    assert move("cacao") not in st.legal_actions()
    play(st, move("sugar"), move("chocolate"), move("chocolate"))
    assert st.observation(0)["players"][0]["trucks"]["big"] == {"sugar": 1, "chocolate": 2}
    assert st.current_player() == 1   # capacity 3 used up: the turn ended


def test_wrap_around_from_eight_to_one():
    #   1 2 3 4 5 6 7 8
    #   . . . . . . o o    play 7 to the factory: 7, 8 taken, 1 free -> capacity 3
    st = new(2)
    st.set_position(board=board(". . . . . . o o"), hands=[["7"], ["1"]])
    play(st, card("7"), A["to"])
    turn = st.observation(0)["turn"]
    assert (turn["space"], turn["capacity_left"]) == (1, 3)


def test_full_factory_forbids_to_and_empty_factory_forbids_from():
    st = new(2)
    st.set_position(board=board("o o o o o o o o"), hands=[["3"], ["1"]], coins=[0, 0])
    play(st, card("3"))
    assert st.legal_actions() == [A["from"]]
    st.set_position(board=[], hands=[["3"], ["1"]], coins=[0, 0])
    play(st, card("3"))
    assert st.legal_actions() == [A["to"]]


def test_warehouse_holds_seven():
    st = new(2)
    st.set_position(board=board("o o o o o o o ."), hands=[["1"], ["1"]],
                    warehouses=[{"sugar": 3, "cacao": 3}, {}])
    play(st, card("1"), A["to"])            # tries 1..8: capacity 8, one space free
    play(st, move("sugar"))
    assert st.observation(0)["players"][0]["warehouse"] == {"sugar": 4, "cacao": 3}
    # No room for more: transport ends by itself and the outlet of space 8 is offered.
    assert st.current_player() == 0 and st.legal_actions() == [A["stop"], A["sell"] + GOODS.index("cacao")]


def test_one_truck_per_turn_unless_trucker():
    #   1 2 3 4 5 6 7 8
    #   . o . . . . . .    play 1 from the factory: capacity 2, from the Break Room
    #                      (no coin to recruit, so the engine passes it)
    st = new(2)
    st.set_position(board=board(". o . . . . . ."), hands=[["1", "trucker"], ["1"]],
                    warehouses=[{"sugar": 4}, {}], coins=[0, 0])
    play(st, card("1"), A["from"], move("sugar", "small"))
    moves = [a for a in st.legal_actions() if a >= A["move"]]
    assert moves == [move("sugar", "small")]
    # With the Trucker every truck stays open (die face 1 -> the same move).
    st.set_position(board=board(". o . . . . . ."), die=1, hands=[["trucker"], ["1"]],
                    warehouses=[{"sugar": 4}, {}], coins=[0, 0])
    play(st, card("trucker"), A["keep_face"], A["from"], move("sugar", "small"))
    assert {move("sugar", t) for t in TRUCKS} <= set(st.legal_actions())


def test_trucker_may_take_sugar_and_cacao():
    st = new(2)
    st.set_position(board=[], die=2, hands=[["trucker"], ["1"]], coins=[0, 0])
    play(st, card("trucker"), A["keep_face"], A["to"])   # space 2, capacity 1
    assert {move("sugar"), move("cacao")} <= set(st.legal_actions())


# ---- specialists and the die ----

def test_a_roll_must_be_used_and_the_die_keeps_its_face():
    st = new(2)
    st.set_position(board=[], die=5, hands=[["temp", "3"], ["1"]], coins=[0, 0])
    play(st, card("temp"), A["roll"])
    face = st.observation(0)["die"]
    assert st.observation(0)["turn"]["number"] == face
    play(st, A["to"])
    assert st.observation(0)["turn"]["space"] == face
    assert st.observation(1)["die"] == face


def test_runner_wraps_eight_to_two():
    st = new(2)
    st.set_position(board=[], die=8, hands=[["runner"], ["1"]], coins=[0, 0])
    play(st, card("runner"), A["keep_face"])
    assert sorted(st.legal_actions()) == [A["run"] + d for d in (-2, -1, 0, 1, 2)]
    play(st, A["run"] + 2, A["to"])
    assert st.observation(0)["turn"]["space"] == 2


def test_sorter_goes_counter_clockwise():
    #   1 2 3 4 5 6 7 8
    #   . . o o . . . .    sorter on 4, counter-clockwise: 4, 3 taken, 2 free
    st = new(2)
    st.set_position(board=board(". . o o . . . ."), die=4, hands=[["sorter"], ["1"]], coins=[0, 0])
    play(st, card("sorter"), A["keep_face"], A["ccw"], A["to"])
    turn = st.observation(0)["turn"]
    assert (turn["space"], turn["capacity_left"]) == (2, 3)


def test_space_and_capacity_on_every_board_both_ways():
    # The engine finds the space by rotating the board mask; walk the ring here instead,
    # one space at a time, on boards from empty to full, from every face, both ways.
    rng = np.random.default_rng(5)
    boards = [[], list(range(1, 9))] + [sorted(rng.choice(np.arange(1, 9), k, replace=False).tolist())
                                        for k in range(1, 8) for _ in range(3)]
    st = new(2)
    for occupied in boards:
        for die in range(1, 9):
            for way in ("cw", "ccw"):
                for to in (True, False):
                    step = -1 if way == "ccw" else 1
                    tried = [(die - 1 + step * i) % 8 + 1 for i in range(8)]
                    hits = [i for i, sp in enumerate(tried) if (sp in occupied) != to]
                    if not hits:   # a full factory has no "to", an empty one no "from"
                        continue
                    st.set_position(board=occupied, die=die, hands=[["sorter"], ["1"]], coins=[0, 0])
                    play(st, card("sorter"), A["keep_face"], A[way])
                    # (Described before it is played: the visit may end the turn at once.)
                    said = st.describe(A["to" if to else "from"])
                    assert f"space {tried[hits[0]]} " in said and said.endswith(f"capacity {hits[0] + 1}"), \
                        (occupied, die, way, to, said)


def test_lift_operator_adds_one():
    st = new(2)
    st.set_position(board=[], die=3, hands=[["lift_operator"], ["1"]], coins=[0, 0])
    play(st, card("lift_operator"), A["keep_face"], A["to"])
    assert st.observation(0)["turn"]["capacity_left"] == 2


def test_machinist_mixes_after_the_space_ability_when_the_space_comes_first():
    # Space 4 is an outlet; the Machinist adds a Chocolate Mixer use, after the space's
    # ability under machinist_order = space_first (the order is chosen by default, see
    # test_manfredini_readings.py).
    st = new(2, machinist_order="space_first")
    st.set_position(board=[], die=4, hands=[["machinist"], ["1"]],
                    warehouses=[{"sugar": 1, "cacao": 2}, {}], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["to"], A["stop"])
    assert st.observation(0)["turn"]["ability"] == "outlet"
    play(st, A["stop"])
    assert st.observation(0)["turn"]["ability"] == "mixer"
    play(st, A["mix"])
    assert st.observation(0)["players"][0]["warehouse"] == {"cacao": 1, "chocolate": 1}


def test_packer_stacks_identical_goods_and_they_unstack_when_moved():
    st = new(2)
    st.set_position(board=[], die=1, hands=[["packer", "2"], ["1"]],
                    warehouses=[{"sugar": 4, "cacao": 3}, {}], coins=[0, 0])
    # Full warehouse: only a stacked sugar fits.
    play(st, card("packer"), A["keep_face"], A["to"])
    assert move("sugar") not in st.legal_actions() and move("sugar", stacked=True) in st.legal_actions()
    play(st, move("sugar", stacked=True))
    me = st.observation(0)["players"][0]
    assert me["warehouse"] == {"sugar": 5, "cacao": 3, "stacks": {"sugar": 1}}
    st.check_invariants()
    # A decorated candy never stacks on a plain one.
    st2 = new(2)
    st2.set_position(half=1, board=[], die=1, hands=[["packer"], ["1"]],
                     recipes=["chocolate_peanuts", "truffles", "bonbons"],
                     warehouses=[{"chocolate_peanuts": 1}, {}],
                     trucks=[{"big": {"decorated_chocolate_peanuts": 1, "chocolate_peanuts": 1}}, {}],
                     coins=[0, 0])
    play(st2, card("packer"), A["keep_face"], A["to"])
    legal = st2.legal_actions()
    assert move("chocolate_peanuts", "big", True) in legal
    assert move("decorated_chocolate_peanuts", "big", True) not in legal


def test_stacked_goods_move_as_individuals():
    st = new(2)
    #   1 2 3 4 5 6 7 8
    #   . o . . . . . .    play 1 from the factory: capacity 2
    st.set_position(board=board(". o . . . . . ."), hands=[["1"], ["1"]],
                    warehouses=[{"sugar": 2, "stacks": {"sugar": 1}}, {}], coins=[0, 0])
    play(st, card("1"), A["from"], move("sugar"), move("sugar"))
    me = st.observation(0)["players"][0]
    assert me["trucks"]["big"] == {"sugar": 2} and me["warehouse"] == {}


# ---- abilities ----

def test_break_room_recruit_keeps_one_rest_to_bottom_no_draw():
    st = new(2)
    st.set_position(board=[], hands=[["2", "5"], ["1"]], decks=[["8", "7"], []], coins=[1, 0],
                    spec_deck=["packer", "trucker", "runner", "sorter", "lift_operator"])
    play(st, card("2"), A["to"], A["stop"], A["recruit"])
    assert st.observation(0)["turn"]["looking_at"] == ["lift_operator", "sorter", "runner"]
    assert st.observation(1)["turn"]["looking_at"] == 3
    play(st, A["pick"] + SPECIALISTS.index("sorter"))
    d = st.to_dict()
    assert d["specialist_deck"] == ["lift_operator", "runner", "packer", "trucker"]
    assert sorted(d["players"][0]["hand"]) == ["5", "sorter"]   # no draw this turn
    assert d["players"][0]["coins"] == 0 and d["piles"]["coins"] == 15


def test_outlet_pays_two_coins_for_a_cacao_in_the_plantation_one_for_anything_in_the_candy_factory():
    st = new(2)
    st.set_position(board=[], hands=[["4"], ["1"]], warehouses=[{"cacao": 1, "sugar": 1}, {}], coins=[0, 0])
    play(st, card("4"), A["to"], A["stop"])
    assert st.legal_actions() == [A["stop"], A["sell"] + GOODS.index("cacao")]
    st2 = new(2)
    st2.set_position(half=1, board=[], hands=[["4"], ["1"]], recipes=["gumdrops", "truffles", "bonbons"],
                     warehouses=[{"gumdrops": 1, "sugar": 1}, {}], coins=[0, 0])
    play(st2, card("4"), A["to"], A["sell"] + GOODS.index("gumdrops"))
    assert st2.observation(0)["players"][0]["coins"] == 1
    assert st2.observation(0)["candy_supply"]["gumdrops"] == 6


def test_candy_machine_uses_and_supply_running_out():
    # Chocolate Peanuts: 1 chocolate -> 2 candies, twice per visit. Five peanuts are
    # already on seat 1's truck, so only one token is left on the recipe card.
    st = new(2)
    st.set_position(half=1, board=[], hands=[["1"], ["1"]],
                    recipes=["chocolate_peanuts", "truffles", "bonbons"],
                    warehouses=[{"chocolate": 3}, {}],
                    trucks=[{}, {"big": {"chocolate_peanuts": 5}}], coins=[0, 0])
    play(st, card("1"), A["to"], A["make"] + 0)
    me = st.observation(0)["players"][0]
    assert me["warehouse"] == {"chocolate": 2, "chocolate_peanuts": 1}
    assert st.current_player() == 1   # no token left: the second use is not offered
    st.check_invariants()


def test_candy_that_finds_no_space_stays_on_the_card():
    st = new(2)
    st.set_position(half=1, board=[], hands=[["1"], ["1"]],
                    recipes=["caramels", "truffles", "bonbons"],
                    warehouses=[{"sugar": 3, "chocolate": 3}, {}], coins=[0, 0])
    # Caramels: 3 sugar -> 2 candies. Warehouse 6 of 7 used, paying frees 3: 2 fit.
    play(st, card("1"), A["to"], A["make"] + 8)
    assert st.observation(0)["players"][0]["warehouse"] == {"chocolate": 3, "caramels": 2}
    st3 = new(2)
    st3.set_position(half=1, board=[], hands=[["1"], ["1"]], recipes=["fudge", "truffles", "bonbons"],
                     warehouses=[{"sugar": 2, "chocolate": 2, "truffles": 1, "stacks": {"sugar": 1, "chocolate": 1}}, {}],
                     coins=[0, 0])
    # Fudge: 1 sugar + 2 chocolate -> 2 candies; the chocolate stack frees one space,
    # the sugar taken off its stack none: 3 - 1 = 2 spaces used, both candies fit.
    play(st3, card("1"), A["to"], A["make"] + 7)
    assert st3.observation(0)["players"][0]["warehouse"]["fudge"] == 2


def test_decorating_one_or_all_for_a_coin():
    st = new(2)
    st.set_position(half=1, board=[], hands=[["2", "6"], ["1"]], recipes=["gumdrops", "truffles", "bonbons"],
                    warehouses=[{"gumdrops": 2, "truffles": 1}, {}], coins=[1, 0])
    play(st, card("2"), A["to"])
    assert set(st.legal_actions()) == {A["stop"], A["deco"] + 4, A["deco"] + 5, A["deco_all"]}
    play(st, A["deco_all"])
    me = st.observation(0)["players"][0]
    assert me["warehouse"] == {"decorated_gumdrops": 2, "decorated_truffles": 1} and me["coins"] == 0


def test_shift_change_once_per_factory_coin_on_the_whistle():
    st = new(2)
    st.set_position(board=[], hands=[["3", "4"], ["1", "2"]], decks=[["5"], ["6"]], coins=[2, 0])
    play(st, card("3"), A["shift_add"] + 2)   # a pawn on 3
    assert A["shift_add"] + 0 not in st.legal_actions()
    play(st, A["to"], A["stop"])
    assert st.observation(0)["players"][0]["whistle"] and st.observation(0)["players"][0]["coins"] == 1
    play(st, card("1"), A["to"], A["stop"])
    play(st, card("4"))
    assert [a for a in st.legal_actions() if a >= A["shift_add"]] == []


def test_mixer_converts_one_sugar_and_one_cacao():
    st = new(2)
    st.set_position(board=[], hands=[["1"], ["1"]], warehouses=[{"sugar": 2, "cacao": 2}, {}], coins=[0, 0])
    play(st, card("1"), A["to"], A["stop"], A["mix"])
    assert st.observation(1)["players"][0]["warehouse"] == {"sugar": 1, "cacao": 1, "chocolate": 1}
    assert st.observation(1)["piles"]["sugar"] == 30 - 2 + 1


# ---- turn order and the halves ----

def test_players_without_cards_are_skipped():
    st = new(3)
    st.set_position(board=[], hands=[["1", "2"], [], ["3"]], coins=[0, 0, 0])
    play(st, card("1"), A["to"], A["stop"])
    assert st.current_player() == 2


def test_transition_keeps_one_specialist_per_uncovered_icon():
    # Seat 0 plays the last card of the Plantation. Its big truck is full (icon covered),
    # the small has 3 of 4 spaces used, the spare is empty: 2 icons uncovered for the
    # Temp, Runner and Packer it played -> it discards one.
    st = new(2)
    st.set_position(board=[], hands=[["8"], []], coins=[0, 0],
                    played=[["temp", "runner", "packer"], ["temp"]],
                    trucks=[{"big": {"sugar": 6}, "small": {"chocolate": 3}}, {"spare": {"sugar": 1}}])
    play(st, card("8"), A["to"], A["stop"])
    assert st.phase_label() == "factory transition" and st.current_player() == 0
    assert sorted(st.legal_actions()) == [A["discard"] + k for k in (0, 3, 6)]
    assert st.interim(0)[0] == st.standings()[0]
    play(st, A["discard"] + 0)
    d = st.to_dict()
    assert d["half"] == "candy" and d["players"][0]["kept"] == {"runner": 1, "packer": 1}
    assert sorted(d["players"][0]["hand"] + d["players"][0]["deck"]) == sorted(
        [str(i) for i in range(1, 9)] + ["packer", "runner"])
    # Seat 1 kept its Temp (3 icons uncovered) and the warehouses were emptied.
    assert d["players"][1]["kept"] == {"temp": 1}
    assert all(p["warehouse"] == {} for p in d["players"]) and d["board"] == []
    # The player who took the last turn of the first half starts the second.
    assert st.current_player() == 0


def test_candy_only_setup_loads_seven_sugar_and_four_chocolate():
    st = new(2, "candy")
    st.new_game(5)
    bot = build("manfredini", "random")
    from simcore.strategy import RngView
    rng = RngView.seeded(1)
    while st.phase_label() == "candy-only setup":
        st.apply(bot.choose_action(st, rng))
    for p in st.to_dict()["players"]:
        loaded = {}
        for box in p["trucks"].values():
            for g, n in box.items():
                loaded[g] = loaded.get(g, 0) + n
        assert loaded == {"sugar": 7, "chocolate": 4}
        assert len(p["hand"]) + len(p["deck"]) == 8 + 3 and "temp" not in p["hand"] + p["deck"]


def test_setup_by_player_count():
    for n, recipes in ((2, 3), (3, 4), (4, 5)):
        st = new(n)
        st.new_game(n)
        d = st.to_dict()
        assert len(d["recipes"]) == recipes
        for p in d["players"]:
            assert p["coins"] == 1 and p["warehouse"] == {"sugar": 1, "cacao": 1}
            assert p["hand"].count("temp") == 1 and len(p["hand"]) == 3 and len(p["deck"]) == 6


def test_bad_params_are_rejected():
    with pytest.raises(UserError):
        SPEC.params(players=5)
    with pytest.raises(UserError):
        SPEC.params(players=2, sets={"variant": "short"})
    with pytest.raises(UserError):
        SPEC.params(players=2, sets={"factory.plantation": ["mixer"]})
    with pytest.raises(UserError):
        SPEC.params(players=2, sets={"factory.pawns": 9})
    with pytest.raises(UserError):
        SPEC.params(players=4, sets={"variant": "candy", "candy_only.specialists": 5})


# ---- many games ----

@pytest.mark.parametrize("variant", ["full", "plantation", "candy"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_keep_every_invariant(players, variant):
    # The checked build asserts legality and every invariant after every move.
    st, out = batch(players, variant, 3000 if CHECKED_BUILD else 500)
    assert (out["rank"] >= 1).all() and (out["win"].reshape(-1, players).sum(axis=1) > 0.99).all()
    # And through the Python API, which checks legality itself.
    bots = [build("manfredini", "random") for _ in range(players)]
    from simcore.strategy import RngView
    for seed in range(20):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            legal = st.legal_actions()
            assert len(set(legal)) == len(legal) and all(st.describe(a) for a in legal)
            st.apply(bots[st.current_player()].choose_action(st, rng))
            st.check_invariants()
        for p in st.to_dict()["players"]:
            assert p["hand"] == [] and p["deck"] == []


def test_determinism():
    _, a = batch(3, "full", 300, seed=99)
    _, b = batch(3, "full", 300, seed=99)
    for k in a:
        assert np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("variant", ["full", "candy"])
def test_determinize_keeps_what_the_observer_sees(variant):
    # Through whole games (recruits hidden in hands, cards seen at the Break Room), every
    # resampled world keeps the invariants, the observer's view and each seat's cards.
    from simcore.strategy import RngView
    st = new(3, variant)
    bot = build("manfredini", "random")

    def numbered(pl):
        return sorted(c for c in pl["hand"] + pl["deck"] if c.isdigit())

    for seed in range(15):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        k = 0
        while not st.is_terminal():
            if k % 5 == 0:
                for observer in range(3):
                    other = st.determinized(observer, 1234 * seed + k + observer)
                    other.check_invariants()
                    assert other.observation(observer) == st.observation(observer)
                    assert other.legal_actions() == st.legal_actions() or st.current_player() != observer
                    d, e = st.to_dict(), other.to_dict()
                    for p in range(3):
                        assert numbered(d["players"][p]) == numbered(e["players"][p])
            st.apply(bot.choose_action(st, rng))
            k += 1


def test_copies_are_independent():
    from simcore.strategy import RngView
    st = new(2)
    st.new_game(8)
    bot = build("manfredini", "random")
    rng = RngView.seeded(8)
    for _ in range(30):
        st.apply(bot.choose_action(st, rng))
    before = st.to_dict()
    c = st.copy()
    while not c.is_terminal():
        c.apply(bot.choose_action(c, rng))
    assert st.to_dict() == before


def test_features_and_interims_are_named():
    st, out = batch(4, "full", 200)
    names = st.feature_names()
    assert len(names) == st.n_features and st.interim_names() == ["transition", "end"]
    f = out["features"].T
    coins = f[:, names.index("coins")]
    assert (coins >= 0).all() and f[:, names.index("seat_turns")].min() >= 8
    # The end interim is the final score.
    assert np.array_equal(out["interim"].T[:, 1], out["score"])


@pytest.mark.parametrize("variant", ["full", "plantation", "candy"])
def test_heuristic_plays_legal_games_and_beats_random(variant):
    st, out = batch(2, variant, 300, bots="heuristic")
    assert (out["score"] > 0).mean() > 0.9
    spec_st = new(2, variant)
    bots = [build("manfredini", "heuristic"), build("manfredini", "random")]
    perms = np.array([[0, 1], [1, 0]], np.int32)
    n = 400
    res = result_arrays(spec_st, n)
    play_batch(spec_st, bots, perms, 0, 3, 0, n, **res)
    assert res["win"][res["seat_strategy"] == 0].mean() > 0.8


def test_heuristic_weights_are_named_and_tunable():
    bot = build("manfredini", "heuristic(chocolate_value=3, recruit_min_coins=2)")
    assert bot.weights["chocolate_value"] == 3.0 and bot.weights["recruit_min_coins"] == 2.0
    with pytest.raises(UserError):
        build("manfredini", "heuristic(no_such_weight=1)")


def test_house_rules_change_the_game_and_keep_the_invariants():
    # A smaller factory with fewer pawns, bigger hands, a shallower Break Room.
    sets = {"factory.spaces": 6, "factory.pawns": 5, "hand_size": 4,
            "factory.plantation": ["mixer", "break_room", "outlet"] * 2,
            "factory.candy": ["candy_machine", "decorating", "outlet"] * 2,
            "plantation.break_room_look": 2, "trucks.spare.capacity": 0, "trucks.spare.icons": 0}
    st = SPEC.new_state(SPEC.params(players=3, sets=sets))
    bots = [build("manfredini", "random") for _ in range(3)]
    from simcore.strategy import RngView
    for seed in range(30):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            st.apply(bots[st.current_player()].choose_action(st, rng))
            st.check_invariants()
            assert len(st.observation(0)["board"]) <= 5
        for p in st.to_dict()["players"]:
            assert p["trucks"]["spare"] == {}
