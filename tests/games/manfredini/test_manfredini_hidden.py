"""Chocolate Factory (Manfredini): the components restricted play forbids
(action_component) and what determinize may depend on (only what the observer sees).

Boards are drawn as the eight factory spaces 1..8 clockwise, `o` = a worker pawn
(Plantation: 1, 3, 5, 7 Mixer; 2, 6 Break Room; 4, 8 Outlet. Candy Factory: 1, 3, 5, 7
Candy Machine; 2, 6 Decorating Station; 4, 8 Outlet).
"""
import pytest

from simcore.games.manfredini.rules import ACTION_BASES as A, GOODS
from simcore.games.manfredini.params import RECIPES, SPECIALISTS
from games.manfredini.test_manfredini import card, new, play
from simcore.strategy import RngView
from strategies import build


def component(st, action):
    k = st.action_component(action)
    return None if k < 0 else st.component_names()[k]


# ---- restricted play: the component each action takes ----

def test_components_are_the_specialists_abilities_and_recipes():
    names = new().component_names()
    assert names == (list(SPECIALISTS[1:])
                     + ["mixer", "break_room", "outlet_plantation", "decorating", "outlet_candy",
                        "shift_change"] + list(RECIPES))


def test_plantation_components_on_a_hand_built_turn():
    #   1 2 3 4 5 6 7 8
    #   . . . . . . . .    seat 0 holds 2, the Runner and the Temp; one coin
    st = new(2)
    st.set_position(board=[], hands=[["2", "runner", "temp"], ["1"]], coins=[2, 0],
                    warehouses=[{"sugar": 1, "cacao": 2}, {}],
                    spec_deck=["packer", "trucker", "machinist"])
    assert {a: component(st, a) for a in st.legal_actions()} == {
        card("2"): None, card("runner"): "runner", card("temp"): None}
    play(st, card("2"))
    legal = st.legal_actions()                       # to, from is impossible, the shift changes
    assert component(st, A["to"]) is None
    assert {component(st, a) for a in legal if a != A["to"]} == {"shift_change"}
    play(st, A["to"], A["stop"])             # space 2, the Break Room
    assert {a: component(st, a) for a in st.legal_actions()} == {A["stop"]: None, A["recruit"]: "break_room"}
    play(st, A["recruit"])
    # Keeping a specialist takes that specialist.
    assert {a: component(st, a) for a in st.legal_actions()} == {
        A["pick"] + SPECIALISTS.index(k): k for k in ("machinist", "trucker", "packer")}
    # The Mixer and the Plantation's Outlet.
    st.set_position(board=[], hands=[["4", "5"], ["1"]], warehouses=[{"sugar": 1, "cacao": 2}, {}])
    play(st, card("5"), A["to"], A["stop"])
    assert component(st, A["mix"]) == "mixer"
    st.set_position(board=[], hands=[["4", "5"], ["1"]], warehouses=[{"sugar": 1, "cacao": 2}, {}])
    play(st, card("4"), A["to"], A["stop"])
    assert component(st, A["sell"] + GOODS.index("cacao")) == "outlet_plantation"


def test_candy_factory_components_on_a_hand_built_turn():
    st = new(2)
    st.set_position(half=1, board=[], hands=[["1", "2", "4"], ["1"]], coins=[1, 0],
                    recipes=["gumdrops", "truffles", "bonbons"],
                    warehouses=[{"sugar": 2, "chocolate": 3, "gumdrops": 1}, {}])
    play(st, card("1"), A["to"])             # the Candy Machine
    assert {a: component(st, a) for a in st.legal_actions()} == {
        A["stop"]: None, A["make"] + 4: "gumdrops", A["make"] + 5: "truffles",
        A["make"] + 9: "bonbons"}
    st.set_position(half=1, board=[], hands=[["2"], ["1"]], coins=[1, 0],
                    recipes=["gumdrops", "truffles", "bonbons"], warehouses=[{"gumdrops": 1}, {}])
    play(st, card("2"), A["to"])             # the Decorating Station
    assert {a: component(st, a) for a in st.legal_actions()} == {
        A["stop"]: None, A["deco"] + 4: "decorating", A["deco_all"]: "decorating"}
    st.set_position(half=1, board=[], hands=[["4"], ["1"]], coins=[1, 0],
                    recipes=["gumdrops", "truffles", "bonbons"], warehouses=[{"gumdrops": 1}, {}])
    play(st, card("4"), A["to"])             # the Candy Factory's Outlet
    assert component(st, A["sell"] + GOODS.index("gumdrops")) == "outlet_candy"


FEATURE_OF = {"mixer": "used_mixer", "break_room": "used_break_room",
              "outlet_plantation": "used_outlet_plantation", "decorating": "used_decorating",
              "outlet_candy": "used_outlet_candy", "shift_change": "used_shift_change"}


@pytest.mark.parametrize("variant", ["full", "candy"])
def test_every_action_takes_exactly_the_component_it_names(variant):
    # Over random games: an action naming a component moves that component's counter
    # (a specialist: played or recruited; an ability: its uses; a recipe: a Candy Machine
    # use of that recipe), and one naming none moves none of them.
    st = new(3, variant, shift_change_ability=True)
    names = st.feature_names()
    comps = st.component_names()
    bot = build("manfredini", "random")
    counters = ([f"played_{k}" for k in SPECIALISTS[1:]] + [f"recruited_{k}" for k in SPECIALISTS[1:]]
                + list(FEATURE_OF.values()) + ["used_candy_machine"])
    idx = [names.index(c) for c in counters]
    seen = set()
    for seed in range(40):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            p = st.current_player()
            a = bot.choose_action(st, rng)
            k = st.action_component(a)
            recipe = st.observation(p)["turn"]["recipe"]
            before = st.features(p)
            st.apply(a)
            after = st.features(p)
            moved = {counters[i] for i, j in enumerate(idx) if after[j] != before[j]}
            if k < 0:
                assert moved == set(), (st.describe(a), moved)
                continue
            name = comps[k]
            seen.add(name)
            if name in SPECIALISTS:
                assert moved in ({f"played_{name}"}, {f"recruited_{name}"}), (name, moved)
            elif name in FEATURE_OF:
                assert moved == {FEATURE_OF[name]}, (name, moved)
            else:
                assert moved == {"used_candy_machine"} and a == A["make"] + RECIPES.index(name)
                assert recipe in (None, name)
    assert {"runner", "machinist", "decorating", "outlet_candy", "shift_change"} <= seen
    if variant == "full":
        assert {"mixer", "break_room", "outlet_plantation"} <= seen


# ---- determinize: a function of what the observer sees ----

def canonical(st):
    """The whole state, each hand as a sorted list (its slot order carries nothing)."""
    d = st.to_dict()
    for p in d["players"]:
        p["hand"] = sorted(p["hand"])
    return d


def _recruits(deck0, hand1, deck1, keeps):
    # Seat 0 recruits at the Break Room of space 2 from the three-card specialist deck:
    # it sees the Machinist, the Trucker and the Packer, keeps the Trucker, and the
    # other two go to the bottom. Seat 1 then recruits at space 6: it sees those two,
    # keeps `keeps`, and the other goes back. Seat 0 knows seat 1 holds one of the two
    # and the deck the other, but not which.
    st = new(2)
    st.set_position(board=[], hands=[["2", "4", "5"], hand1], decks=[deck0, deck1], coins=[1, 1],
                    spec_deck=["packer", "trucker", "machinist"])
    play(st, card("2"), A["to"], A["stop"], A["recruit"])
    assert st.observation(0)["turn"]["looking_at"] == ["machinist", "trucker", "packer"]
    play(st, A["pick"] + SPECIALISTS.index("trucker"))
    play(st, card("6"), A["to"], A["stop"], A["recruit"])
    play(st, A["pick"] + SPECIALISTS.index(keeps))
    assert st.current_player() == 0
    return st


def test_determinize_does_not_depend_on_what_the_observer_cannot_see():
    # Two states seat 0 cannot tell apart: seat 1 kept the Packer or the Machinist,
    # holds other numbered cards, and both decks are in another order.
    a = _recruits(["8", "7", "1", "3"], ["6", "1", "3"], ["2", "8", "5", "4", "7"], "packer")
    b = _recruits(["1", "3", "8", "7"], ["6", "8", "4"], ["5", "3", "1", "7", "2"], "machinist")
    assert a.observation(0) == b.observation(0)
    assert canonical(a) != canonical(b)
    for seed in range(30):
        wa, wb = a.determinized(0, seed), b.determinized(0, seed)
        assert canonical(wa) == canonical(wb)
        assert wa.observation(0) == a.observation(0)
        # Consistent with what seat 0 saw: the two cards are the Packer and the Machinist.
        d = wa.to_dict()
        held = [c for c in d["players"][1]["hand"] if not c.isdigit()]
        assert sorted(held + d["specialist_deck"]) == ["machinist", "packer"]
    # Seat 1, who knows which it kept, keeps it in every world.
    for seed in range(10):
        assert "packer" in a.determinized(1, seed).to_dict()["players"][1]["hand"]
        assert "machinist" in b.determinized(1, seed).to_dict()["players"][1]["hand"]


@pytest.mark.parametrize("variant", ["full", "candy", "plantation"])
def test_determinize_depends_only_on_the_observation_in_random_games(variant):
    # For states along random games: b is a itself with everything hidden from the
    # observer resampled, so the observer cannot tell a from b. Determinized from the
    # same seed, both give the same world, down to the chance stream (the same moves
    # then play the same game).
    st = new(3, variant)
    bot = build("manfredini", "random")
    for seed in range(8):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        k = 0
        while not st.is_terminal():
            if k % 7 == 0:
                for observer in range(3):
                    b = st.determinized(observer, 999 + k)
                    assert b.observation(observer) == st.observation(observer)
                    wa = st.determinized(observer, 5 + k)
                    wb = b.determinized(observer, 5 + k)
                    assert canonical(wa) == canonical(wb)
                    ra, rb = RngView.seeded(k), RngView.seeded(k)
                    for _ in range(40):
                        if wa.is_terminal():
                            break
                        act = bot.choose_action(wa, ra)
                        assert act == bot.choose_action(wb, rb)
                        wa.apply(act)
                        wb.apply(act)
                    assert canonical(wa) == canonical(wb)
            st.apply(bot.choose_action(st, rng))
            k += 1


def _seen_then_drawn(hand1, deck1, keeps):
    # The specialist deck, bottom to top: Runner, Sorter, Lift Operator, Packer.
    # Seat 1 recruits first (space 2): it sees the Packer, the Lift Operator and the
    # Sorter, keeps the Packer; the other two go to the bottom, unseen by seat 0.
    # Seat 0 recruits (space 6): it sees the Runner, the Sorter and the Lift Operator,
    # keeps the Runner and puts the Sorter and the Lift Operator back: it knows the deck
    # is those two. Seat 1 recruits again (from space 2): it looks at both and keeps
    # `keeps`. Seat 0 knows seat 1 now holds the Packer (unseen) and one of the Sorter
    # and the Lift Operator, and the deck the other.
    st = new(2)
    st.set_position(board=[], to_move=1, hands=[["6", "3", "4"], hand1], decks=[["8", "7"], deck1],
                    coins=[1, 2], spec_deck=["runner", "sorter", "lift_operator", "packer"])
    play(st, card("2"), A["to"], A["stop"], A["recruit"], A["pick"] + SPECIALISTS.index("packer"))
    play(st, card("6"), A["to"], A["stop"], A["recruit"])
    assert st.observation(0)["turn"]["looking_at"] == ["runner", "sorter", "lift_operator"]
    play(st, A["pick"] + SPECIALISTS.index("runner"))
    play(st, card("1"), A["from"], A["recruit"], A["pick"] + SPECIALISTS.index(keeps))
    assert st.current_player() == 0 and st.to_dict()["specialist_deck"] == [
        "sorter" if keeps == "lift_operator" else "lift_operator"]
    return st


def test_determinize_keeps_what_the_observer_saw_of_cards_drawn_by_another():
    a = _seen_then_drawn(["2", "1", "5"], ["7", "8", "4"], "lift_operator")
    b = _seen_then_drawn(["2", "1", "8"], ["5", "4", "7"], "sorter")
    assert a.observation(0) == b.observation(0)
    decks = set()
    for seed in range(40):
        wa, wb = a.determinized(0, seed), b.determinized(0, seed)
        assert canonical(wa) == canonical(wb)
        wa.check_invariants()
        d = wa.to_dict()
        held = sorted(c for c in d["players"][1]["hand"] if not c.isdigit())
        # Never the Packer in the deck: seat 0 knows the deck is the Sorter or the Lift
        # Operator, seat 1 the Packer and the other.
        assert d["specialist_deck"] in (["sorter"], ["lift_operator"])
        assert held == sorted(["packer", "sorter" if d["specialist_deck"] == ["lift_operator"] else "lift_operator"])
        decks.add(d["specialist_deck"][0])
    assert decks == {"sorter", "lift_operator"}
    # Seat 1 plays its Packer face up: which of its two recruits it was, seat 0 cannot
    # tell, yet it still knows the deck holds the Sorter or the Lift Operator.
    for st in (a, b):
        play(st, card("3"), A["to"], A["stop"])
        play(st, card("packer"))
    assert a.observation(0) == b.observation(0)
    for seed in range(20):
        wa, wb = a.determinized(0, seed), b.determinized(0, seed)
        assert canonical(wa) == canonical(wb)
        d = wa.to_dict()
        assert d["specialist_deck"] in (["sorter"], ["lift_operator"])
        assert sorted(d["specialist_deck"] + [c for c in d["players"][1]["hand"] if not c.isdigit()]) \
            == ["lift_operator", "sorter"]


@pytest.mark.parametrize("players", [3, 4])
def test_knowledge_groups_stay_consistent_in_games_with_many_recruits(players):
    # Heuristic bots recruit often at large tables (a card seen at the bottom is drawn
    # by another seat in about one recruit in 14 at 4 players): after every move, and in
    # every world resampled for any seat, each seat's groups match the cards they hold.
    st = new(players)
    bots = [build("manfredini", "heuristic" if i % 2 == 0 else "random") for i in range(players)]
    for seed in range(25):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        k = 0
        while not st.is_terminal():
            st.apply(bots[st.current_player()].choose_action(st, rng))
            st.check_invariants()
            k += 1
            if k % 4 == 0:
                for o in range(players):
                    w = st.determinized(o, k)
                    w.check_invariants()
                    assert w.observation(o) == st.observation(o)
