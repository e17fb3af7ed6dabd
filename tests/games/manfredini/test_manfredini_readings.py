"""Chocolate Factory (Manfredini): the readings of unclear rulebook text, each
on a hand-built position whose answer is worked out from the rulebook, under the reading
the text supports and under the alternative a param keeps.

Boards are drawn as the eight factory spaces 1..8 clockwise, `o` = a worker pawn. The
Candy Factory spaces (assumed layout): 1, 3, 5, 7 Candy Machine; 2, 6 Decorating Station;
4, 8 Outlet. The Plantation's: 1, 3, 5, 7 Chocolate Mixer; 2, 6 Break Room; 4, 8 Outlet.
"""
import pytest

from simcore.errors import UserError
from simcore.games.manfredini.rules import ACTION_BASES as A, GOODS
from simcore.games.manfredini.params import RECIPES, SPECIALISTS
from test_manfredini import SPEC, card, new, play


def make(recipe):
    return A["make"] + RECIPES.index(recipe)


def warehouse(st, seat=0):
    return st.observation(seat)["players"][seat]["warehouse"]


# ---- 1. The Machinist's machine and the space's ability: the player chooses the order ----

def _machinist_on_the_decorating_station(**sets):
    #   1 2 3 4 5 6 7 8
    #   . . . . . . . .    the Machinist on die face 2, to the factory: space 2, the
    #                      Decorating Station; one sugar, no candy yet, no coin.
    # Gumdrops: 1 sugar -> 1 candy. Nothing is on the trucks, so nothing is transported.
    st = new(2, **sets)
    st.set_position(half=1, board=[], die=2, hands=[["machinist"], ["1"]],
                    recipes=["gumdrops", "truffles", "bonbons"],
                    warehouses=[{"sugar": 1}, {}], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["to"])
    return st


def test_machinist_makes_candy_then_decorates_it_on_the_same_turn():
    # "[The Machinist] may use the machine ability ... in addition to the special ability
    # on the factory space"; no order is given, so the player picks it. Making the
    # gumdrop first leaves a candy for the Decorating Station to decorate.
    st = _machinist_on_the_decorating_station()
    assert st.observation(0)["turn"]["step"] == "order"
    assert st.legal_actions() == [A["space_first"], A["machine_first"]]
    play(st, A["machine_first"])
    assert st.legal_actions() == [A["stop"], make("gumdrops")]
    play(st, make("gumdrops"))
    # No sugar left for a second use: the engine moves on to the Decorating Station.
    assert st.legal_actions() == [A["stop"], A["deco"] + RECIPES.index("gumdrops")]
    play(st, A["deco"] + RECIPES.index("gumdrops"))
    assert warehouse(st) == {"decorated_gumdrops": 1} and st.current_player() == 1


def test_machinist_space_first_leaves_the_candy_plain():
    # The space first: nothing to decorate yet (passed by the engine), then the machine.
    st = _machinist_on_the_decorating_station()
    play(st, A["space_first"], make("gumdrops"))
    assert warehouse(st) == {"gumdrops": 1} and st.current_player() == 1
    # machinist_order = space_first (the engine's former reading) never asks.
    st = _machinist_on_the_decorating_station(machinist_order="space_first")
    assert st.legal_actions() == [A["stop"], make("gumdrops")]
    play(st, make("gumdrops"))
    assert warehouse(st) == {"gumdrops": 1} and st.current_player() == 1


def test_machinist_order_asked_only_when_it_can_matter():
    # On a Candy Machine space the two abilities are the same machine: no question.
    st = new(2)
    st.set_position(half=1, board=[], die=1, hands=[["machinist"], ["1"]],
                    recipes=["gumdrops", "truffles", "bonbons"],
                    warehouses=[{"sugar": 2}, {}], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["to"])
    assert st.observation(0)["turn"]["step"] == "ability"
    # Break Room without a coin and a mixer without sugar or cacao: neither can act.
    st = new(2)
    st.set_position(board=[], die=2, hands=[["machinist"], ["1"]], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["to"])   # capacity 1: take one cacao
    play(st, A["move"] + (GOODS.index("cacao") * 3) * 2)
    assert st.current_player() == 1


def test_machinist_order_going_from_the_factory_comes_before_the_goods_leave():
    # From the factory: both abilities before the pawn leaves, in the chosen order.
    #   1 2 3 4 5 6 7 8
    #   . . . o . . . .    the Machinist on 4 (an Outlet), from the factory: capacity 1
    st = new(2)
    st.set_position(board=[4], die=4, hands=[["machinist"], ["1"]],
                    warehouses=[{"sugar": 1, "cacao": 1}, {}], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["from"])
    assert st.legal_actions() == [A["space_first"], A["machine_first"]]
    # Mixing first uses the one cacao: nothing is left to sell, and the chocolate ships.
    play(st, A["machine_first"], A["mix"])
    assert warehouse(st) == {"chocolate": 1}
    assert st.observation(0)["board"] == [] and st.observation(0)["turn"]["step"] == "transport"


# ---- 2. Candy-only setup: the hand is drawn before the specialists are shuffled in ----

def _opening(st, seed):
    st.new_game(seed)
    return st.to_dict()["players"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_candy_only_opening_hand_holds_no_specialist(players):
    # "Set up Candy Factory as normal [shuffle the eight workers, draw three]. Then, each
    # player shuffles three random specialist workers into his deck."
    st = new(players, "candy")
    for seed in range(40):
        for p in _opening(st, seed):
            assert len(p["hand"]) == 3 and all(c.isdigit() for c in p["hand"])
            assert sum(not c.isdigit() for c in p["deck"]) == 3 and len(p["deck"]) == 8


def test_candy_only_specialists_in_opening_hand_param_restores_the_old_deal():
    # Drawing 3 of 8 workers + 3 specialists: P(no specialist) = C(8,3)/C(11,3) = 56/165,
    # so about 66% of opening hands hold one; 400 hands: 95% within +-5 points.
    st = new(2, "candy", **{"candy_only.specialists_in_opening_hand": True})
    hands = [p["hand"] for seed in range(200) for p in _opening(st, seed)]
    share = sum(any(not c.isdigit() for c in h) for h in hands) / len(hands)
    assert 0.59 < share < 0.73, share


# ---- 3. Candy-only setup: no starting coin (a param) ----

def test_candy_only_starts_without_coins_by_default():
    # The coin comes with the Plantation setup (step 6), which candy-only does not use.
    st = new(3, "candy")
    st.new_game(1)
    d = st.to_dict()
    assert [p["coins"] for p in d["players"]] == [0, 0, 0] and d["piles"]["coins"] == 15
    st = new(3, "candy", **{"candy_only.coins": 1})
    st.new_game(1)
    d = st.to_dict()
    assert [p["coins"] for p in d["players"]] == [1, 1, 1] and d["piles"]["coins"] == 12
    # The full game still deals the Plantation's coin.
    st = new(3)
    st.new_game(1)
    assert [p["coins"] for p in st.to_dict()["players"]] == [1, 1, 1]


def test_candy_only_coins_beyond_the_bank_are_rejected():
    with pytest.raises(UserError, match="candy_only.coins"):
        SPEC.params(players=4, sets={"variant": "candy", "candy_only.coins": 4})


# ---- open reading: a recipe's uses are counted over the turn ----

def _machinist_on_a_candy_machine(**sets):
    #   1 2 3 4 5 6 7 8
    #   . . . . . . . .    the Machinist on 1 (a Candy Machine): the space's machine and
    #                      the Machinist's. Six sugar; Gumdrops (1 sugar -> 1, 3 uses),
    #                      Lollipops (2 sugar -> 1, 2 uses).
    st = new(2, **sets)
    st.set_position(half=1, board=[], die=1, hands=[["machinist"], ["1"]],
                    recipes=["gumdrops", "lollipops", "truffles"],
                    warehouses=[{"sugar": 6}, {}], coins=[0, 0])
    play(st, card("machinist"), A["keep_face"], A["to"])
    play(st, make("gumdrops"), make("gumdrops"), make("gumdrops"))
    return st


def test_recipe_uses_are_per_turn_across_both_machines():
    # "Some recipes can be used more than once on a turn (as indicated by the arrow)":
    # Gumdrops' arrow says 3 a turn, so the Machinist's machine cannot make a fourth;
    # it may still use another recipe.
    st = _machinist_on_a_candy_machine()
    assert st.legal_actions() == [A["stop"], make("lollipops")]
    play(st, make("lollipops"))
    assert warehouse(st) == {"sugar": 1, "gumdrops": 3, "lollipops": 1} and st.current_player() == 1


def test_recipe_uses_per_machine_param_restarts_the_count():
    st = _machinist_on_a_candy_machine(**{"candy.recipe_uses": "per_machine"})
    assert st.legal_actions() == [A["stop"], make("lollipops"), make("gumdrops")]
    play(st, make("gumdrops"), make("gumdrops"), make("gumdrops"))
    assert warehouse(st) == {"gumdrops": 6} and st.current_player() == 1


# ---- open reading: a shift change does not trigger the space's ability (a param) ----

def test_shift_change_offers_no_ability_by_default():
    #   1 2 3 4 5 6 7 8
    #   . . . . . . . .    add a pawn on 4 (an Outlet) with a cacao in the warehouse
    st = new(2)
    st.set_position(board=[], hands=[["3"], ["1"]], warehouses=[{"cacao": 1}, {}], coins=[1, 0])
    play(st, card("3"), A["shift_add"] + 3)
    assert st.observation(0)["turn"]["step"] == "to_from"
    assert set(st.legal_actions()) == {A["to"], A["from"]}


def test_shift_change_ability_param_offers_the_space_then_goes_on():
    st = new(2, shift_change_ability=True)
    st.set_position(board=[], hands=[["3"], ["1"]], warehouses=[{"cacao": 1}, {}], coins=[1, 0])
    play(st, card("3"), A["shift_add"] + 3)
    assert st.legal_actions() == [A["stop"], A["sell"] + GOODS.index("cacao")]
    play(st, A["sell"] + GOODS.index("cacao"))       # 2 coins for the cacao
    assert st.observation(0)["players"][0]["coins"] == 2
    assert set(st.legal_actions()) == {A["to"], A["from"]}
    # Removing a pawn: its space's ability comes first (Break Room, a coin to pay).
    st.set_position(board=[2], hands=[["5"], ["1"]], coins=[2, 0],
                    spec_deck=["packer", "trucker", "runner"])
    play(st, card("5"), A["shift_remove"] + 1, A["recruit"])
    assert st.observation(0)["turn"]["looking_at"] == ["runner", "trucker", "packer"]
    play(st, A["pick"] + SPECIALISTS.index("runner"))
    assert st.observation(0)["board"] == [] and set(st.legal_actions()) == {A["to"]}


def test_reading_params_reject_unknown_values():
    with pytest.raises(UserError, match="machinist_order"):
        SPEC.params(players=2, sets={"machinist_order": "machine_first"})
    with pytest.raises(UserError, match="recipe_uses"):
        SPEC.params(players=2, sets={"candy.recipe_uses": "per_visit"})


@pytest.mark.parametrize("sets", [
    {"machinist_order": "space_first", "candy.recipe_uses": "per_machine"},
    {"shift_change_ability": True},
    {"variant": "candy", "candy_only.specialists_in_opening_hand": True, "candy_only.coins": 1},
])
def test_random_games_keep_every_invariant_under_the_other_readings(sets):
    # The Python API checks legality; the checked build also every invariant after
    # every move. Every hand and deck is played out.
    from simcore.strategy import RngView
    from strategies import build
    sets = {"variant": "full", **sets}
    st = new(3, **sets)
    bots = [build("manfredini", b) for b in ("random", "heuristic", "random")]
    for seed in range(30):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            st.apply(bots[st.current_player()].choose_action(st, rng))
        assert all(p["hand"] == [] and p["deck"] == [] for p in st.to_dict()["players"])
