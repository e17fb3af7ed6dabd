"""The Alley Cat heuristic (strategies/alleycat.pyx): hand-built positions whose right
move is worked out from the rules, its weights' declared ranges, and its edge over the
first heuristic (`heuristic_v1`, kept for comparison) in played games.

Belts are drawn square by square from the entrance; orders are (size, index within
the size in `orders.*`, stage), as `set_seat` takes them. Small order 4 is
"2 boxed = 8"."""
from __future__ import annotations

import math

import pytest

import strategies
from simcore.errors import UserError
from simcore.registry import get_game
from simcore.runner import seat_orders
from simcore.strategy import RngView

from helpers import run_batch
from test_alleycat import do, texts

GAME = get_game("alleycat")
BOTS = ("heuristic", "heuristic_v1")


def choice(state, spec, seed=1):
    bot = strategies.build("alleycat", spec)
    bot.prepare(state)
    return state.describe(bot.choose_action(state, RngView.seeded(seed)))


def play_out(state, spec, seed=1):
    """Let `spec` play the seat to move until the game ends; the descriptions played."""
    bot = strategies.build("alleycat", spec)
    bot.prepare(state)
    rng, moves = RngView.seeded(seed), []
    while not state.is_terminal():
        action = bot.choose_action(state, rng)
        moves.append(state.describe(action))
        state.apply(action)
    return moves


def saturday_last_shift():
    """Solo, Saturday's last shift: 2 Boxed in the store room, no coal, the Small order
    "2 boxed = 8", and the only objective "money 8". Ending the shift and fulfilling
    the order wins the week; trading a Boxed for coal (offered) loses it."""
    state = GAME.new_state(GAME.params(players=1, sets={
        "solo.targets": ["money 8"], "solo.initial_demands": 0, "solo.daily_demands": 0}))
    state.new_game(3)
    state.enter("run", 0, day=6)
    do(state, "end the shift", "end the shift")
    state.set_seat(0, coal=0, store=["boxed", "boxed"], belt=[[], [], [], []],
                   orders=[("small", 4, 1), ("medium", 0, 1), ("large", 0, 1)])
    assert texts(state) == ["end the shift", "trade boxed for coal"]
    return state


def test_saturday_last_shift_keeps_the_pieces_of_its_order_and_wins_the_week():
    state = saturday_last_shift()
    assert play_out(state, "heuristic") == ["end the shift", "fulfil stage 1 of 2 boxed = 8",
                                            "done with orders"]
    assert state.end_reason() == "solo_win" and (state.scores(), state.ranks()) == ([8], [1])
    # The first heuristic valued the shift by piece weights and the orders by money.
    state = saturday_last_shift()
    assert play_out(state, "heuristic_v1")[0] == "trade boxed for coal"
    assert state.end_reason() == "solo_loss"


@pytest.mark.parametrize("players", [1, 2])
def test_monday_first_shift_runs_the_roaster_before_ending_the_shift(players):
    # Monday, first shift: 5 coal and the shift's bean under the Roaster (T1). Roasting
    # costs a coal and gains a cocoa; ending the shift only brings the next bean, which
    # comes anyway. The first heuristic counted that bean as a gain and ended the shift.
    state = GAME.new_state(GAME.params(players=players))
    state.new_game(3)
    state.enter("run", 0, day=1)
    state.set_seat(0, coal=5, belt=[["bean"], [], [], []])
    assert texts(state) == ["end the shift", "operate Roaster on T1"]
    assert choice(state, "heuristic") == "operate Roaster on T1"
    assert choice(state, "heuristic_v1") == "end the shift"


def test_the_packer_doubles_the_pieces_the_first_push_would_send_out():
    # Monday, before the first push, with the Packer: 2 Boxed left overnight on the last
    # square. Doubled there, 4 Boxed reach the store room at the push; after it, the
    # square the Packer could double holds only what the push moved along.
    state = GAME.new_state(GAME.params(players=2))
    state.new_game(3)
    state.set_seat(0, employee="packer", belt=[[], [], [], ["boxed", "boxed"]])
    state.enter("run", 0, day=1)
    assert texts(state) == ["load and push the first tile", "use the packer"]
    bot = strategies.build("alleycat", "heuristic")
    bot.prepare(state)
    rng = RngView.seeded(1)
    for _ in range(2):
        state.apply(bot.choose_action(state, rng))
    assert state.observation(0)["players"][0]["store_room"] == ["boxed"] * 4


@pytest.mark.parametrize("players", [1, 2, 4])
def test_the_last_orders_pay_every_stage_the_store_room_can(players):
    # Saturday's orders: a payable stage is money now; after "done" nothing pays it.
    state = GAME.new_state(GAME.params(players=players))
    state.new_game(5)
    state.enter("orders", 0, day=6)
    state.set_seat(0, money=0, store=["boxed", "boxed"], orders=[("small", 4, 1)])
    assert "fulfil stage 1 of 2 boxed = 8" in texts(state)
    moves = []
    while state.current_player() == 0 and not state.is_terminal():
        moves.append(choice(state, "heuristic"))
        do(state, moves[-1])
    assert "fulfil stage 1 of 2 boxed = 8" in moves
    assert state.observation(0)["players"][0]["money"] >= 8


def test_a_late_shift_keeps_coal_that_buys_nothing_better_than_the_end_value():
    # 2 players, Saturday's last shift, a bean under the Roaster: at the end a bean and
    # a coal are worth £1 each, and a cocoa no more than the bean, so roasting loses £1.
    state = GAME.new_state(GAME.params(players=2))
    state.new_game(3)
    state.enter("run", 0, day=6)
    do(state, "end the shift", "end the shift")
    state.set_seat(0, coal=3, belt=[["bean"], [], [], []], store=[],
                   orders=[("small", 0, 1), ("medium", 0, 1), ("large", 0, 1)])
    assert "operate Roaster on T1" in texts(state)
    assert choice(state, "heuristic") == "end the shift"


# ---- weights ----

def test_every_weight_has_a_declared_range_holding_its_default():
    for name in BOTS:
        cls = strategies.available("alleycat")[name]
        assert set(cls.WEIGHT_RANGES) == set(cls.WEIGHTS), name
        for key, (low, high, scale) in cls.WEIGHT_RANGES.items():
            assert scale in ("linear", "log"), key
            assert low < high and low <= cls.WEIGHTS[key] <= high, key
            assert scale == "linear" or low > 0, key


def test_weights_are_named_and_change_play():
    # With a coal worth 1.0 the Monday roast no longer pays: cocoa 0.9 - bean 0.3 < 1.0.
    state = GAME.new_state(GAME.params(players=1))
    state.new_game(3)
    state.enter("run", 0, day=1)
    state.set_seat(0, coal=5, belt=[["bean"], [], [], []])
    assert choice(state, "heuristic(coal=1.0)") == "end the shift"
    with pytest.raises(UserError, match="unknown weight 'nonsense'"):
        strategies.build("alleycat", "heuristic(nonsense=1)")


# ---- played games ----

def win_share(players, n, seed):
    """Win share of one `heuristic` against heuristic_v1 in every other seat, seats
    rotated, and its 95% interval (normal approximation over games)."""
    state = GAME.new_state(GAME.params(players=players))
    bots = [strategies.build("alleycat", "heuristic")] + [
        strategies.build("alleycat", "heuristic_v1") for _ in range(players - 1)]
    out = run_batch(state, bots, n, run_seed=seed, perms=seat_orders(players, "rotate"), seating=0)
    won = (out["win"].reshape(n, players) * (out["seat_strategy"].reshape(n, players) == 0)).sum(1)
    half = 1.96 * won.std(ddof=1) / math.sqrt(n)
    return won.mean(), won.mean() - half, won.mean() + half


def test_it_beats_the_first_heuristic_at_two_players():
    share, low, _ = win_share(2, 600, seed=91)
    assert low > 0.5, share


@pytest.mark.statistical
@pytest.mark.parametrize("players", [3, 4])
def test_it_beats_the_first_heuristic_at_three_and_four_players(players):
    share, low, _ = win_share(players, 1200, seed=92)
    assert low > 1 / players, share


# The revised solo cards of the assumed components (Weekly Targets £20-£50, Demands
# +£5/+£5/+£10, a lighter store-step Demand), set here so the test does not depend on
# the defaults.
REVISED_SOLO = {
    "solo.targets": ["money 50", "money 40; orders 2", "money 30; orders 1 large",
                     "money 30; orders 1 medium; orders 1 small", "money 25; steps 1 x 5",
                     "money 20; special medium", "money 20; special large",
                     "money 35; special medium; orders 1 large"],
    "solo.demands": [*(f"steps 2 at {z}" for z in ("palace", "fresh_fancies", "salters",
                                                    "house_of_luxury", "dunstan_gilbert")),
                     "steps 1 x 3", "steps 2 x 2", "steps 3 x 1", "supply 3 different refined",
                     "supply 4 same refined", "supply 2 boxed", "supply chunks + fingers + caramel",
                     "money 5", "money 5", "money 10", "orders 1 small", "orders 1 medium",
                     "orders 1 large"],
}


def test_it_wins_solo_weeks_the_first_heuristic_does_not():
    # About 5-6% of weeks against well under 1% (see the strategy's docstring): 29 and 1
    # with these seeds.
    state = GAME.new_state(GAME.params(players=1, sets=REVISED_SOLO))
    wins = {bot: int(run_batch(state, [strategies.build("alleycat", bot)], 400, run_seed=17)["win"].sum())
            for bot in BOTS}
    assert wins["heuristic"] >= 10 and wins["heuristic_v1"] <= 4, wins


# ---- the evaluation of cut-off rollouts (the search bot's) ----

def test_evaluation_values_coal_in_the_currency_of_the_position_valued():
    # 2 players, £1 a coal at the end (Chocolate Factory, final scoring). On Saturday's
    # orders a coal is worth exactly its end value, mid-week its use (the `coal` weight,
    # 0.5), whatever the bot decided last: here a Monday shift, whose currency (a coal
    # at its use) once leaked into Saturday's evaluation.
    bot = strategies.build("alleycat", "heuristic")
    assert bot.weights["coal"] == 0.5
    for day, worth in ((6, 1.0), (2, 0.5)):
        monday = GAME.new_state(GAME.params(players=2))
        monday.new_game(3)
        monday.enter("run", 0, day=1)
        bot.prepare(monday)
        bot.choose_action(monday, RngView.seeded(1))
        values = []
        for coal in (2, 3):
            state = GAME.new_state(GAME.params(players=2))
            state.new_game(5)
            state.enter("orders", 0, day=day)
            state.set_seat(0, coal=coal)
            values.append(bot.evaluation(state, 0))
        assert values[1] - values[0] == pytest.approx(worth, abs=1e-12), day


def test_evaluation_needs_no_prepare_and_counts_the_orders():
    # An unprepared bot (the search bot asks evaluates() before binding it) values a
    # position as a prepared one does: the Corner Shop order table it reads is filled
    # on first use. Mid-week orders: 2 Boxed in the store room pay "2 boxed = 8" at
    # `ready` (0.9) plus `complete` (5.0) at `ready`, so they are worth more than in
    # a store room without the order.
    state = GAME.new_state(GAME.params(players=2))
    state.new_game(5)
    state.enter("orders", 0, day=2)
    state.set_seat(0, store=["boxed", "boxed"], orders=[("small", 4, 1)])
    fresh = strategies.build("alleycat", "heuristic")
    prepared = strategies.build("alleycat", "heuristic")
    prepared.prepare(state)
    assert fresh.evaluation(state, 0) == prepared.evaluation(state, 0)
    without = state.copy()
    without.set_seat(0, orders=[("small", 0, 1)])
    assert prepared.evaluation(state, 0) > prepared.evaluation(without, 0)
