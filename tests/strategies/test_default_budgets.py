"""The search bot's default budget by table size: what the bot plays at, what the skill
ladder and the balance ladder take as their strongest rungs, and the rule that sets it
(scripts/budget_curve.py) on planted curves."""
import importlib.util

import pytest

import strategies
import strategies.mcts as mcts
from analysis.experiments.balance_plan import default_ladder
from analysis.experiments.skill import search_budget
from helpers import ROOT
from simcore.registry import get_game


def _budget_curve():
    spec = importlib.util.spec_from_file_location("budget_curve", ROOT / "scripts" / "budget_curve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prepared(game, players, spec="mcts"):
    bot = strategies.build(game, spec)
    bot.prepare(get_game(game).new_state(get_game(game).params(players=players)))
    return bot


@pytest.mark.parametrize("game", sorted(mcts.GAME_DEFAULTS))
def test_every_bundled_game_has_a_budget_for_each_table_size_it_allows(game):
    budget = mcts.GAME_DEFAULTS[game]["iterations"]
    assert isinstance(budget, dict)
    lo, hi = get_game(game).players
    assert sorted(budget) == list(range(lo, hi + 1))
    assert all(isinstance(b, int) and b >= 1 for b in budget.values())
    # Any other weight set by table size (Alley Cat's cut-off, Enemy Chocolatier's opponent
    # model) names every size too.
    for value in mcts.GAME_DEFAULTS[game].values():
        if isinstance(value, dict):
            assert sorted(value) == list(range(lo, hi + 1))


def test_the_bot_the_ladders_and_the_skill_trace_take_the_budget_of_the_table_size(monkeypatch):
    monkeypatch.setitem(mcts.GAME_DEFAULTS, "manfredini", {**mcts.GAME_DEFAULTS["manfredini"],
                                                           "iterations": {2: 40, 3: 20, 4: 10}})
    for players, budget in ((2, 40), (3, 20), (4, 10)):
        assert _prepared("manfredini", players).weights["iterations"] == budget
        assert search_budget("manfredini", "mcts", players) == budget
        assert default_ladder("manfredini", players)[0][-2:] == [f"mcts(iterations={budget})",
                                                                f"mcts(iterations={2 * budget})"]
    # A budget the spec names is the budget, at every size.
    assert _prepared("manfredini", 3, "mcts(iterations=7)").weights["iterations"] == 7
    assert search_budget("manfredini", "mcts(iterations=7)", 4) == 7


def _curve(shares, low=10):
    return [{"low": low * 2**k, "high": low * 2 ** (k + 1), "share": s} for k, s in enumerate(shares)]


def _costs(curve, seconds_per_iteration):
    budgets = {d["low"] for d in curve} | {d["high"] for d in curve}
    return {b: {"s_game": b * seconds_per_iteration} for b in budgets}


def test_the_rule_stops_where_no_doubling_pays_any_more():
    bc = _budget_curve()
    curve = _curve([0.70, 0.60, 0.54, 0.52])
    assert bc.pick(curve, _costs(curve, 1e-6))[0] == 40
    # Exactly the bar pays.
    curve = _curve([0.70, 0.55, 0.50, 0.50])
    assert bc.pick(curve, _costs(curve, 1e-6))[0] == 40
    # None pays: the curve's first budget.
    curve = _curve([0.51, 0.49, 0.50, 0.52])
    assert bc.pick(curve, _costs(curve, 1e-6))[0] == 10
    # A dip between doublings that pay does not stop it.
    curve = _curve([0.70, 0.54, 0.58, 0.52])
    assert bc.pick(curve, _costs(curve, 1e-6))[0] == 80


def test_where_every_doubling_pays_the_rule_takes_the_largest_budget_the_ladder_affords():
    bc = _budget_curve()
    curve = _curve([0.70, 0.60, 0.58, 0.56])
    assert bc.pick(curve, _costs(curve, 1e-6))[0] == 160
    # A mirror game costing 0.05 s an iteration: 20,000 games at b and 2b cost 20,000 x 3 x
    # 0.05 b seconds, within 100 core-hours up to b = 120.
    budget, why = bc.pick(curve, _costs(curve, 0.05))
    assert budget == 80 and "affords" in why
    # A budget is never lowered below the curve's first.
    assert bc.pick(curve, _costs(curve, 10.0))[0] == 10


@pytest.mark.parametrize("game, players", [("fabryka", 2), ("manfredini", 3)])
def test_a_doubling_of_the_bot_against_itself_is_fair_at_even_and_odd_tables(game, players):
    # The same bot on both sides: the swapped seatings mirror each other exactly.
    d = _budget_curve().doubling(game, players, 4, 4, 40)
    assert d["share"] == 0.5 and d["lo"] == d["hi"] == 0.5


def test_a_doubling_finds_a_planted_difference_in_strength():
    # Eight times the budget is a much stronger player.
    d = _budget_curve().doubling("manfredini", 3, 2, 16, 60)
    assert d["lo"] > 0.55, d
