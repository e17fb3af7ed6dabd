"""Enemy Chocolatier: hand-worked positions from the rule sheet, then random play.

The default (assumed) board, segments placed in the listed order 1..6 around the
Factory. House ids run segment by segment: I1 +0..2, I2 +3..5, O1 +6..9, O2 +10..14 on
top of 15 x (segment - 1). Prices, colour initial (p pink Sugar, b brown Chocolate,
t tan Nuts, r red Love, g gray) and rewards:

    seg | I1 ($1)   | I2          | O1                    | O2
    1   | 1p 2b 2t  | 1r 2g 3p $1 | 2b 2t 3r 4g  *1+$10H  | 2p 3b 3t 4r 5g  Buy 3
    2   | 1b 2t 2r  | 1g 2p 3b *1 | 2t 2r 3g 4p  $2+$5=1* | 2b 3t 3r 4g 5p  All $+1
    3   | 1t 2r 2g  | 1p 2b 3t $1 | 2r 2g 3p 4b  *1       | 2t 3r 3g 4p 5b  $5=1*
    4   | 1r 2g 2p  | 1b 2t 3r *1 | 2g 2p 3b 4t  $2+All$ | 2r 3g 3p 4b 5t  All *+1
    5   | 1g 2p 2b  | 1t 2r 3g $1 | 2p 2b 3t 4r  *2       | 2g 3p 3b 4t 5r  Buy Closed
    6   | 1p 2b 2t  | 1r 2g 3p *1 | 2b 2t 3r 4g  $2+All* | 2p 3b 3t 4r 5g  Buy Anywhere

One segment, and how it touches its neighbours in the ring (segment 6 touches 1):

      ...-O2(k-1) | O1(k)  O2(k) | O1(k+1)-...
      ...-I2(k-1) | I1(k)  I2(k) | I1(k+1)-...
    ===================== FACTORY =====================
"""
import json

import numpy as np
import pytest

import strategies
from simcore.batch import play_batch, result_arrays
from simcore.errors import UserError
from simcore.registry import get_game
from simcore.state import IllegalAction
from simcore.strategy import RngView

SPEC = get_game("enemy_chocolatier")
STOP = 256
COLOUR = {"p": "pink", "b": "brown", "t": "tan", "r": "red", "g": "gray"}


def H(seg, slot):
    """House ids of neighbourhood `slot` of segment `seg` on the default board."""
    base = 15 * (seg - 1)
    return {"I1": [base, base + 1, base + 2], "I2": [base + 3, base + 4, base + 5],
            "O1": list(range(base + 6, base + 10)), "O2": list(range(base + 10, base + 15))}[slot]


def new_state(players=2, **sets):
    return SPEC.new_state(SPEC.params(players=players, sets=sets or None))


def owned(seat, *hoods):
    """{house: seat} for whole neighbourhoods given as (segment, slot)."""
    return {h: seat for seg, slot in hoods for h in H(seg, slot)}


def bank(st):
    return st.to_dict()["bank"]


# ---- params ----

def test_every_board_and_recipe_param_is_marked_assumed():
    info = {p.name: p for p in SPEC.defaults()}
    for name in ("recipes", "board.segments", "board.slots", "board.inner_touch",
                 "board.next_touch", "board.factory_slots", "board.ring_closed", "sim.round_cap"):
        assert info[name].source == "assumed", name
    for name in ("start_money.first", "income.base", "buyout.price", "buyout.ten_price", "win.points"):
        assert info[name].source == "rulebook", name
    p = SPEC.params(players=6)
    assert sum(len(nb.prices) for seg in p.board.segments for nb in seg) == 90
    assert all(sum(r) == 19 for r in p.recipes)


def test_bad_params_are_rejected_with_the_field_named():
    with pytest.raises(UserError, match="recipe"):
        SPEC.params(players=3, sets={"recipes": [[7, 5, 4, 3], [3, 7, 5, 4]]})
    with pytest.raises(UserError, match="players"):
        SPEC.params(players=7)
    bad = [[{"slot": "I1", "prices": [1, 2], "colours": ["pink"], "dollars": 1, "points": 0,
             "abilities": []}]]
    with pytest.raises(UserError, match="board"):
        SPEC.params(players=2, sets={"board.segments": bad})
    with pytest.raises(UserError, match="unknown param"):
        SPEC.params(players=2, sets={"buyout.prize": 7})


def test_a_designer_board_loads_from_a_toml_file(tmp_path):
    # Three segments of two places in a line (no ring): A touches the Factory, B lies
    # behind A, and B touches the next segment's B.
    #     B1 - B2 - B3
    #     A1   A2   A3
    #    === FACTORY ===
    board = tmp_path / "tiny.toml"
    board.write_text("""
[board]
slots = ["A", "B"]
factory_slots = ["A"]
inner_touch = [["A", "B"]]
next_touch = [["B", "B"]]
ring_closed = false
shuffle_segments = false
segments = [
  [{ slot = "A", prices = [1, 1], colours = ["pink", "brown"], dollars = 1, points = 0, abilities = [] },
   { slot = "B", prices = [2, 2], colours = ["tan", "red"], dollars = 0, points = 2, abilities = [] }],
  [{ slot = "A", prices = [1, 1], colours = ["brown", "tan"], dollars = 1, points = 0, abilities = [] },
   { slot = "B", prices = [3], colours = ["gray"], dollars = 0, points = 0, abilities = ["buy3"] }],
  [{ slot = "A", prices = [1, 2], colours = ["red", "pink"], dollars = 0, points = 1, abilities = [] },
   { slot = "B", prices = [2, 2, 2], colours = ["pink", "tan", "red"], dollars = 0, points = 0, abilities = ["buy_closed"] }],
]
[win]
points = 6
""")
    params = SPEC.params(rules_file=board, players=3, sets={"recipes": [[2, 0, 1, 1], [0, 2, 1, 1], [1, 1, 0, 2]]})
    st = SPEC.new_state(params)
    st.set_position(owners={0: 0, 1: 0}, money=[5, 5, 5])
    assert st.open_neighbourhoods() == ["1.B", "2.A", "3.A"]
    st.set_position(owners={4: 0, 5: 0}, money=[5, 5, 5])      # 2.A closed
    assert st.open_neighbourhoods() == ["1.A", "2.B", "3.A"]
    st.set_position(owners={6: 0}, money=[5, 5, 5])            # 2.B closed: 1.B, 3.B open
    assert st.open_neighbourhoods() == ["1.A", "1.B", "2.A", "3.A", "3.B"]
    bot = strategies.build("enemy_chocolatier", "random")
    ends = set()
    for seed in range(100):
        st.new_game(seed)
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            st.apply(bot.choose_action(st, rng))
            st.check_invariants()
        ends.add(st.end_reason())
    assert {"points", "recipe"} <= ends


# ---- setup ----

@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_setup_money_by_turn_order_recipes_and_open_inner_ring(players):
    st = new_state(players)
    placements = set()
    for seed in range(40):
        st.new_game(seed)
        d = st.to_dict()
        first = st.first_player()
        feats = [dict(zip(st.feature_names(), st.features(p))) for p in range(players)]
        for p in range(players):
            order = (p - first) % players
            assert feats[p]["turn_order"] == order
            assert feats[p]["start_money"] == 4 + order
        # The first player has already collected its $2 base income.
        assert st.current_player() == first and d["money"][first] == 4 + 2
        assert len({tuple(r.values()) for r in d["recipes"]}) == players
        assert sorted(d["placement"]) == [1, 2, 3, 4, 5, 6]
        placements.add(tuple(d["placement"]))
        assert len(d["open"]) == 12 and all(name.endswith(("I1", "I2")) for name in d["open"])
    assert len(placements) > 30


def test_placement_decides_which_segments_touch():
    # A closed 1.O2 opens what touches it: 1.I2 and 1.O1 in its segment, and the O1 of
    # the segment placed after segment 1.
    st = new_state()
    st.set_position(owners=owned(0, (1, "O2")), money=[10, 10], placement=[1, 2, 3, 4, 5, 6])
    assert {"1.O1", "2.O1"} <= set(st.open_neighbourhoods())
    st.set_position(owners=owned(0, (1, "O2")), money=[10, 10], placement=[1, 3, 2, 4, 5, 6])
    assert "3.O1" in st.open_neighbourhoods() and "2.O1" not in st.open_neighbourhoods()
    # A closed 1.O1 opens the O2 of the segment placed before it (the ring wraps around).
    st.set_position(owners=owned(0, (1, "O1")), money=[10, 10], placement=[1, 2, 3, 4, 5, 6])
    assert "6.O2" in st.open_neighbourhoods()
    st.set_position(owners=owned(0, (1, "O1")), money=[10, 10], placement=[2, 1, 3, 4, 5, 6])
    assert "2.O2" in st.open_neighbourhoods() and "6.O2" not in st.open_neighbourhoods()


# ---- buying and openness ----

def test_closing_a_neighbourhood_opens_its_neighbours_in_the_same_turn():
    # Seat 0 owns two houses of 1.I1 and three of 1.O1 (unavailable: nothing closed
    # touches it).      1.O1 [0 0 0 .]   1.O2 [. . . . .]
    #                   1.I1 [0 0 .]     1.I2 [. . .]
    st = new_state()
    st.set_position(owners={0: 0, 1: 0, 6: 0, 7: 0, 8: 0}, money=[20, 20])
    assert "1.O1" not in st.open_neighbourhoods() and 9 not in st.legal_actions()
    st.apply(2)                       # closes 1.I1: 1.O1 opens at once
    assert "1.I1" not in st.open_neighbourhoods() and "1.O1" in st.open_neighbourhoods()
    assert 9 in st.legal_actions() and st.current_player() == 0
    st.apply(9)                       # closes 1.O1: 1.O2 and 6.O2 open
    opened = set(st.open_neighbourhoods())
    assert {"1.O2", "6.O2"} <= opened and "1.O1" not in opened
    d = st.to_dict()
    assert d["closed_by"] == {"1.I1": 0, "1.O1": 0}
    assert d["money"][0] == 20 - 2 - 4       # two purchases used the limit of two
    assert st.current_player() == 1                    # so the turn passed
    f = dict(zip(st.feature_names(), st.features(0)))
    assert f["nbhds_closed"] == 2 and f["income_dollars"] == 3 and f["income_points"] == 1


def test_cannot_buy_own_house_unavailable_or_unaffordable():
    st = new_state()
    st.set_position(owners={0: 0}, money=[1, 0])
    legal = st.legal_actions()
    # $1 buys only the $1 houses of the open inner ring; house 0 is seat 0's own.
    assert set(legal) == {3, 15, 18, 30, 33, 45, 48, 60, 63, 75, 78, STOP}
    with pytest.raises(IllegalAction):
        st.apply(6)                   # 1.O1 is unavailable


def test_buying_away_costs_6_split_2_bank_4_owner():
    st = new_state()
    st.set_position(owners={3: 0}, money=[0, 10], to_move=1)
    before = bank(st)
    st.apply(3)
    d = st.to_dict()
    assert d["money"] == [4, 4] and bank(st) == before + 2
    assert d["owners"][3] == 1
    assert d["ingredients"][0]["red"] == 0 and d["ingredients"][1]["red"] == 1
    f0 = dict(zip(st.feature_names(), st.features(0)))
    f1 = dict(zip(st.feature_names(), st.features(1)))
    assert f1["houses_bought_away"] == 1 and f0["houses_lost"] == 1


def test_buying_away_from_a_ten_dollar_houses_owner_costs_10_split_4_and_6():
    # Seat 0 holds 1.O1 ($10 Houses) and house 3 of 1.I2.
    st = new_state()
    st.set_position(owners={**owned(0, (1, "O1")), 3: 0}, money=[0, 12], to_move=1)
    assert "ten_dollar_houses" in st.to_dict()["abilities"][0]
    assert "for $10 from seat 0" in st.describe(3)
    assert not set(H(1, "O1")) & set(st.legal_actions())   # closed: no Buy Closed
    before = bank(st)
    st.apply(3)
    assert st.to_dict()["money"][:2] == [6, 2] and bank(st) == before + 4
    # Seat 1 cannot afford a second $10 house; its $2 buys an empty one.
    assert all(h not in st.legal_actions() for h in H(1, "O1"))


def test_buy_closed_reopens_the_neighbourhood_and_strands_its_neighbours():
    #   1.O1 [0 . . .]  <- open only because 1.I1 is closed
    #   1.I1 [0 0 0] closed by seat 0 ($1 income)
    # Seat 1 holds 5.O2 (Buy Closed) and buys a house of 1.I1 away for $6.
    st = new_state()
    st.set_position(owners={**owned(0, (1, "I1")), 6: 0, **owned(1, (5, "O2"))},
                    money=[0, 10], to_move=1)
    assert "1.I1" in st.buyable_neighbourhoods(1) and "1.I1" not in st.buyable_neighbourhoods(0)
    assert "1.O1" in st.open_neighbourhoods()
    assert st.to_dict()["income"][0]["dollars"] == 3
    st.apply(1)
    d = st.to_dict()
    assert "1.I1" not in d["closed_by"] and "1.I1" in d["open"]
    assert "1.O1" not in d["open"]           # no closed neighbour left
    assert d["income"][0]["dollars"] == 2    # losing a neighbourhood loses its rewards
    assert d["money"][:2] == [4, 4]
    f0 = dict(zip(st.feature_names(), st.features(0)))
    assert f0["nbhds_lost"] == 1 and f0["nbhds_held"] == 0 and f0["houses_lost"] == 1


def test_buy_anywhere_reaches_unavailable_neighbourhoods_but_not_closed_ones():
    st = new_state()
    st.set_position(owners={**owned(1, (6, "O2")), **owned(0, (1, "I1"))}, money=[30, 30], to_move=1)
    legal1 = set(st.legal_actions())
    assert set(H(3, "O2")) <= legal1         # unavailable, reached by Buy Anywhere
    assert not set(H(1, "I1")) & legal1      # closed: Buy Anywhere is not Buy Closed
    st.set_position(owners={**owned(1, (6, "O2")), **owned(0, (1, "I1"))}, money=[30, 30], to_move=0)
    assert not set(H(3, "O2")) & set(st.legal_actions())


def test_buy_closed_and_buy_anywhere_together_reach_an_isolated_closed_neighbourhood():
    # 3.O2 is closed by seat 0 but touches nothing closed: only both abilities reach it.
    hoods = owned(1, (5, "O2"), (6, "O2"))
    st = new_state()
    st.set_position(owners={**owned(0, (3, "O2")), **hoods}, money=[0, 30], to_move=1)
    assert set(H(3, "O2")) <= set(st.legal_actions())
    st.set_position(owners={**owned(0, (3, "O2")), **owned(1, (5, "O2"))}, money=[0, 30], to_move=1)
    assert not set(H(3, "O2")) & set(st.legal_actions())


# ---- income and abilities ----

def test_five_dollars_one_point_counts_cash_before_income():
    # 2.O1: $2 income and $5 = 1 Point. $9 held: 1 point (not 2, as $13 would give).
    st = new_state()
    st.set_position(owners=owned(0, (2, "O1")), money=[9, 0], begin=True)
    d = st.to_dict()
    assert d["points"][0] == 1 and d["money"][0] == 9 + 2 + 2
    # Two such abilities (2.O1 and 3.O2): each $5 held is worth 2 points.
    st.set_position(owners=owned(0, (2, "O1"), (3, "O2")), money=[10, 0], begin=True)
    d = st.to_dict()
    assert d["points"][0] == 4 and d["money"][0] == 14


def test_all_plus_one_abilities_stack_on_every_producing_neighbourhood():
    # Dollars: 1.I1 $1, 2.I1 $1, 4.O1 $2 (+All $+1), 6.O1 $2 (+All *+1); 2.O2 All $+1.
    # Points: 1.O1 *1, 2.I2 *1; 4.O2 All *+1.
    hoods = [(1, "I1"), (2, "I1"), (4, "O1"), (6, "O1"), (2, "O2"), (1, "O1"), (2, "I2"), (4, "O2")]
    st = new_state()
    st.set_position(owners=owned(0, *hoods), money=[0, 0], begin=True)
    d = st.to_dict()
    # $2 base (not raised) + (1 + 1 + 2 + 2) + 4 producing neighbourhoods x 2 abilities.
    assert d["income"][0]["dollars"] == 2 + 6 + 4 * 2 == d["money"][0]
    # (1 + 1) + 2 producing neighbourhoods x 2 abilities.
    assert d["income"][0]["points"] == 2 + 2 * 2 == d["points"][0]


def test_buy_three_acts_in_the_turn_it_is_gained():
    # 1.I2 closed opens 1.O2; seat 0 owns four of its five houses and buys the fifth.
    st = new_state()
    st.set_position(owners={**owned(0, (1, "I2")), 10: 0, 11: 0, 12: 0, 13: 0}, money=[30, 0])
    st.apply(14)                      # 1.O2 closed: Buy 3
    st.apply(0)
    assert st.current_player() == 0                    # a third purchase, no rain check needed
    assert not st.describe(1).endswith("rain check")
    st.apply(1)
    assert st.current_player() == 1
    f = dict(zip(st.feature_names(), st.features(0)))
    assert f["ability_buy3"] == 1 and f["rain_checks_spent"] == 0


# ---- rain checks ----

def test_a_turn_without_purchase_earns_a_rain_check():
    st = new_state()
    st.set_position(money=[10, 10])
    assert st.describe(STOP) == "stop buying (earns a rain check)"
    st.apply(STOP)
    assert st.to_dict()["rain_checks"] == [1, 0] and st.current_player() == 1
    st.apply(0)
    st.apply(STOP)                    # bought something: no rain check
    assert st.to_dict()["rain_checks"] == [1, 0]


def test_rain_checks_buy_beyond_the_limit():
    st = new_state()
    st.set_position(money=[20, 0], rain=[2, 0])
    st.apply(0)
    st.apply(3)
    assert st.current_player() == 0 and st.describe(15).endswith("spending a rain check")
    st.apply(15)
    st.apply(18)
    assert st.current_player() == 1                    # limit 2 + 2 rain checks used up
    d = st.to_dict()
    assert d["rain_checks"][0] == 0 and d["money"][0] == 20 - 4
    f = dict(zip(st.feature_names(), st.features(0)))
    assert f["rain_checks_spent"] == 2


# ---- winning ----

def recipe_short_of_one_red(seat=0):
    """Owners giving `seat` recipe card 0 (7 Sugar, 5 Chocolate, 4 Nuts, 3 Love) less one
    Love, from the outer neighbourhoods without closing any of them."""
    want = {"pink": 7, "brown": 5, "tan": 4, "red": 2}
    params = SPEC.params(players=2)
    out = {}
    for k, seg in enumerate(params.board.segments):
        for j, nb in enumerate(seg[2:]):                       # O1, O2
            first = 15 * k + 6 + 4 * j
            for i, colour in enumerate(nb.colours[:-1]):       # never the whole of it
                if want.get(colour, 0) > 0:
                    want[colour] -= 1
                    out[first + i] = seat
    assert not any(want.values())
    return out


def test_points_win_at_income_comes_before_a_recipe_win_in_the_same_turn():
    # Seat 0 has 19 points and 2.I2 (*1); house 3 ($1 red) would complete its recipe.
    # Income comes first: 20 points win before any purchase.
    owners = {**recipe_short_of_one_red(), **owned(0, (2, "I2"))}
    st = new_state()
    st.set_position(owners=owners, money=[5, 5], points=[19, 0], recipes=[0, 1], begin=True)
    assert st.is_terminal() and st.end_reason() == "points"
    assert st.ranks() == [1, 2]
    f = dict(zip(st.feature_names(), st.features(0)))
    assert f["won_points"] == 1 and f["won_recipe"] == 0


def test_recipe_win_the_moment_the_last_ingredient_is_bought():
    owners = {**recipe_short_of_one_red(), **owned(0, (2, "I2"))}
    st = new_state()
    st.set_position(owners=owners, money=[5, 5], points=[18, 0], recipes=[0, 1], begin=True)
    assert not st.is_terminal() and st.to_dict()["points"][0] == 19
    st.apply(3)                       # $1 red in 1.I2, one purchase still left
    assert st.is_terminal() and st.end_reason() == "recipe"
    assert (st.scores(), st.ranks()) == ([19, 0], [1, 2])
    f = dict(zip(st.feature_names(), st.features(0)))
    assert f["won_recipe"] == 1 and f["recipe_progress"] == 19


def test_standing_is_the_way_to_the_nearer_win_in_per_mille():
    st = new_state()
    # Seat 0: 17 of 19 ingredients of recipe card 0 (7/5/4/3), 5 points; seat 1: 12 points.
    owners = {h: 0 for h in recipe_short_of_one_red() if h != 13}   # less a red too
    st.set_position(owners=owners, money=[0, 0], points=[5, 12], recipes=[0, 1])
    assert st.standings() == [17 * 1000 // 19, 12 * 1000 // 20]


def test_heuristic_takes_a_recipe_win_when_one_purchase_gives_it():
    owners = recipe_short_of_one_red()
    st = new_state()
    st.set_position(owners=owners, money=[5, 5], recipes=[0, 1])
    bot = strategies.build("enemy_chocolatier", "heuristic")
    st.apply(bot.choose_action(st, RngView.seeded(0)))   # any open red house wins
    assert st.end_reason() == "recipe"


def test_round_cap_ends_the_game_as_a_draw():
    st = new_state(3, **{"sim.round_cap": 2})
    bot = strategies.build("enemy_chocolatier", "random")
    st.new_game(7)
    rng = RngView.seeded(1)
    while not st.is_terminal():
        st.apply(bot.choose_action(st, rng))
    assert st.end_reason() == "cap" and st.ranks() == [1, 1, 1]
    assert st.to_dict()["round"] == 3        # two rounds played


# ---- search support and bots ----

def test_clone_is_independent_and_determinize_hides_only_other_recipes():
    st = new_state(4)
    st.new_game(3)
    for a in (st.legal_actions()[0], STOP):
        st.apply(a)
    copy = st.copy()
    copy.apply(copy.legal_actions()[0])
    assert copy.to_dict() != st.to_dict()
    seen = set()
    for seed in range(30):
        d = st.determinized(st.current_player(), seed).to_dict()
        mine = st.to_dict()
        assert d["recipes"][st.current_player()] == mine["recipes"][st.current_player()]
        assert {k: v for k, v in d.items() if k not in ("recipes", "standings")} == \
               {k: v for k, v in mine.items() if k not in ("recipes", "standings")}
        seen.add(str(d["recipes"]))
    assert len(seen) > 5


def test_heuristic_does_not_read_other_recipes():
    bot = strategies.build("enemy_chocolatier", "heuristic")
    st = new_state(3)
    for seed in range(20):
        st.new_game(seed)
        choice = bot.choose_action(st, RngView.seeded(0))
        for k in range(5):
            other = st.determinized(st.current_player(), k)
            assert bot.choose_action(other, RngView.seeded(0)) == choice


def test_heuristic_weights_are_named_and_loadable():
    bot = strategies.build("enemy_chocolatier", "heuristic(rain_save=0, block=5)")
    assert bot.weights["block"] == 5.0 and bot.weights["rain_save"] == 0.0
    with pytest.raises(UserError):
        strategies.build("enemy_chocolatier", "heuristic(nonsense=1)")


def run_batch(players, bot, games, seed=11):
    st = new_state(players)
    bots = [strategies.build("enemy_chocolatier", bot) for _ in range(players)]
    g, n = games, players
    out = result_arrays(st, g)
    play_batch(st, bots, np.array([list(range(n))], np.int32), 1, seed, 0, g, **out)
    return st, out


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("bot,games", [("random", 3000), ("heuristic", 300)])
def test_random_games_keep_the_invariants_and_end_properly(players, bot, games):
    # In the checked build the batch loop asserts every invariant after every move.
    st, out = run_batch(players, bot, games)
    names = st.feature_names()
    f = out["features"].T.reshape(games, players, -1)
    rank = out["rank"].reshape(games, players)
    won = f[:, :, names.index("won_points")] + f[:, :, names.index("won_recipe")]
    capped = out["end_reason"] == 2
    assert np.all(won[~capped].sum(axis=1) == 1)
    assert np.all((rank[~capped] == 1).sum(axis=1) == 1)
    assert np.all(rank[capped] == 1) and np.all(won[capped] == 0)
    points = out["score"].reshape(games, players)
    by_points = out["end_reason"] == 0
    assert np.all(points[by_points].max(axis=1) >= 20)
    assert np.all(np.sort(f[:, :, names.index("start_money")], axis=1) == 4 + np.arange(players))
    # Every house bought away was lost by someone; every neighbourhood lost was closed.
    col = {name: f[:, :, names.index(name)] for name in names}
    assert np.array_equal(col["houses_bought_away"].sum(axis=1), col["houses_lost"].sum(axis=1))
    assert np.all(col["nbhds_lost"].sum(axis=1) <= col["nbhds_closed"].sum(axis=1))
    assert np.all(col["nbhds_held"] == col["nbhds_closed"] - col["nbhds_lost"])
    # Interim values: points then recipe progress per round, never decreasing points.
    R = st.n_interim // 2
    interim = out["interim"].T.reshape(games, players, 2 * R)
    assert np.all(np.diff(interim[:, :, :R], axis=2) >= 0)
    assert np.all(interim[:, :, R:] <= 19)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_invariants_after_every_move_through_the_python_api(players):
    st = new_state(players)
    bot = strategies.build("enemy_chocolatier", "random")
    for seed in range(40):
        st.new_game(seed)
        st.check_invariants()
        rng = RngView.seeded(seed)
        while not st.is_terminal():
            st.apply(bot.choose_action(st, rng))
            st.check_invariants()


def test_same_seed_same_games():
    _, a = run_batch(4, "heuristic", 50, seed=5)
    _, b = run_batch(4, "heuristic", 50, seed=5)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    _, c = run_batch(4, "random", 50, seed=6)
    assert not np.array_equal(a["turns"], c["turns"])


def test_trace_text_and_json():
    from simcore.play import play_game
    bots = [strategies.build("enemy_chocolatier", s) for s in ("random", "heuristic")]
    t = play_game(SPEC, SPEC.params(players=2), bots, seed=3)
    text = t.render()
    assert "buy house" in text and "end:" in text
    d = json.loads(json.dumps(t.to_dict()))
    assert len(d["final_state"]["recipes"]) == 2
