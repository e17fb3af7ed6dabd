"""The balance experiment's budget (analysis.experiments.budget): the projection of the
games that decide a headline, checked against the analytic answer and by simulating the
decision at the projected games; where a time budget puts the games; and runs that hold
fewer games than their manifest asks for."""
from __future__ import annotations

import functools
import json
import math
import time

import numpy as np
import pytest
from scipy.stats import norm

import strategies
from analysis import api
from analysis.experiments import balance as bal
from analysis.experiments import balance_run
from analysis.experiments import budget
from analysis.render.balance import plan_text
from helpers import cli
from simcore.parts import PART_GLOB, tally_path
from simcore.registry import get_game
from simcore.runner import run
from test_balance import synthetic_run

GAME = "fabryka"
Z = norm.ppf(0.975)


def bernoulli_pairs(rng: np.random.Generator, games: int, top: float, second: float) -> np.ndarray:
    """Paired differences at two players: the 1st player wins with probability `top` in
    the top rung's mirror and `second` in the other's, independently; the 2nd
    player's difference is minus the 1st's."""
    d = (rng.random(games) < top).astype(float) - (rng.random(games) < second)
    return np.stack([d, -d], axis=1)


def decided(d: np.ndarray, margin: float) -> str:
    """The convergence rule on paired differences (points): every position's 95% interval
    within ±margin, or one wholly beyond it."""
    mean, half = 100 * d.mean(axis=0), 100 * Z * d.std(axis=0, ddof=1) / math.sqrt(len(d))
    if np.all((mean - half >= -margin) & (mean + half <= margin)):
        return "converged"
    if np.any((mean - half > margin) | (mean + half < -margin)):
        return "moves"
    return "undecided"


def test_a_planted_change_projects_the_analytic_games():
    """The 1st player wins 55% at the top rung and 50% below: a change of 5 points, a
    game's paired difference spread sqrt(.55 .45 + .5 .5); beyond a margin of 1 point
    by 4, moving is decided with 80% probability at ((z.975 + z.8) sd / 4)^2 games."""
    rng = np.random.default_rng(1)
    sd = 100 * math.sqrt(0.55 * 0.45 + 0.25)
    analytic = ((Z + norm.ppf(0.8)) * sd / 4) ** 2
    x = budget.project(bernoulli_pairs(rng, 200_000, 0.55, 0.5), 1.0, cpu_per_game=0.036)
    assert x.route == "moves" and x.position in (0, 1)
    assert abs(x.games / analytic - 1) < 0.2
    assert x.core_hours == pytest.approx(x.games * 0.036 / 3600)


def test_exact_moments_give_the_closed_form():
    """Differences whose mean and spread are exactly the planted ones: the projection is
    the closed form (the far tail, below -margin, adds nothing visible)."""
    z = np.random.default_rng(2).standard_normal(5000)
    d = 0.07 + 0.6 * (z - z.mean()) / z.std(ddof=1)  # 7 points, spread 60 points
    x = budget.project(d[:, None], 2.0)
    assert x.route == "moves"
    assert x.games == pytest.approx(((Z + norm.ppf(0.8)) * 60 / 5) ** 2, rel=0.01)
    null = 0.6 * (z - z.mean()) / z.std(ddof=1)
    y = budget.project(null[:, None], 2.0)
    # A null change: both ends of the interval must fall inside, each missing with 10%.
    assert y.route == "converged"
    assert y.games == pytest.approx(((Z + norm.ppf(0.9)) * 60 / 2) ** 2, rel=0.01)


@pytest.mark.parametrize("top, second, margin, route", [(0.5, 0.5, 5.0, "converged"),
                                                        (0.6, 0.5, 5.0, "moves")])
def test_the_projection_decides_near_its_games(top, second, margin, route):
    """A planted null (and a planted move) projected from a pilot of 2,000 paired games:
    at the projected games, simulated runs decide that way about 80% of the time; at a
    quarter of them, far less often."""
    rng = np.random.default_rng(3)
    x = budget.project(bernoulli_pairs(rng, 2000, top, second), margin)
    assert x.route == route
    at = [decided(bernoulli_pairs(rng, x.games, top, second), margin) for _ in range(400)]
    quarter = [decided(bernoulli_pairs(rng, x.games // 4, top, second), margin) for _ in range(400)]
    assert 0.65 <= at.count(route) / 400 <= 0.93
    assert quarter.count(route) / 400 < 0.45


def test_what_cannot_be_projected_says_why():
    few = budget.project(np.ones((5, 2)), 1.0)
    assert few.games is None and "fewer than 10" in few.reason
    same = budget.project(np.zeros((50, 2)), 1.0)
    assert same.games is None and "never differ" in same.reason
    at_margin = np.array([0.02, 0.0] * 25)[:, None]  # +1.00 point, the margin itself
    edge = budget.project(at_margin, 1.0)
    assert edge.games is None and "exactly the margin" in edge.reason
    near = np.array([0.0101, -0.0099] * 5000)[:, None] * 50  # +0.5 points at a margin of 0.49
    far = budget.project(near, 0.49)
    assert far.route == "moves" and far.capped and far.games == budget.PROJECTION_CAP


def test_a_projection_never_promises_a_decision_the_verdict_would_withhold():
    # A huge change on a dozen pairs "decides" by the normal approximation within a
    # handful of games, but the verdict states no move before NEEDS.agreement games.
    huge = np.array([1.0, 0.0, 1.0, 1.0] * 3)[:, None]
    x = budget.project(huge, 1.0)
    assert x.route == "moves" and x.games == bal.NEEDS.agreement


def test_paired_differences_pair_games_by_index(tmp_path):
    """Two mirrors, one cut short: only the games both played pair, game by game."""
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], compensation=False)
    params = p.params(2).model_dump(mode="json")
    top = np.array([0, 0, 1, 0, 1, 1])
    second = np.array([1, 0, 1, 1])
    synthetic_run(p.mirror(2, "heuristic").path, ["heuristic"] * 2, top, params)
    synthetic_run(p.mirror(2, "random").path, ["random"] * 2, second, params)
    d = budget.paired_differences(p.mirror(2, "heuristic").path, p.mirror(2, "random").path, 2)
    first = (top[:4] == 0).astype(float) - (second == 0)
    assert d.tolist() == np.stack([first, -first], axis=1).tolist()


def _cut_run(path, games: int, chunk: int) -> None:
    """A heuristic mirror run of `games` games whose last chunk never finished (as when
    the command is killed): its part and tally removed."""
    spec = get_game(GAME)
    specs = ["heuristic", "heuristic"]
    run(spec, spec.params(players=2), specs, functools.partial(strategies.build_lineup, GAME, specs), path,
        n_games=games, seating="fixed", chunk_size=chunk, jobs=1, quiet=True)
    last = sorted(path.glob(PART_GLOB))[-1]
    last.unlink()
    tally_path(last).unlink()


def test_a_run_cut_short_is_reported_with_its_shortfall(tmp_path):
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], games=600, precision=5,
                 compensation=False)
    top = p.mirror(2, "heuristic")
    _cut_run(top.path, 600, 200)
    bal.play(p, [c for c in p.ladder_cells() if c != top], jobs=1)
    assert budget.shortfall(top.path) == (400, 600)
    out = tmp_path / "out" / "r.html"
    r = api.balance(GAME, html=out, ladder=["random", "heuristic"], games=600, precision=5, compensation=False,
                    evidence=False, runs=tmp_path / "runs", play=False)
    (short,) = r.short
    assert (short["label"], short["games"], short["asked"], short["missing"]) == ("heuristic", 400, 600, 200)
    assert r.sizes[0].top.games == 400  # the verdict reads the games there are
    verdict = json.loads((out.parent / "verdict.json").read_text())
    assert verdict["short_runs"][0]["missing"] == 200
    assert "400 of the 600 games its manifest asks for (200 missing" in out.read_text()


def test_a_budget_tops_up_a_run_cut_short_before_it_grows(tmp_path):
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], minutes=1, compensation=False)
    path = p.mirror(2, "heuristic").path
    _cut_run(path, 600, 200)
    spender = budget.Spender(p, jobs=1)
    s = spender.state(p.mirror(2, "heuristic"))
    assert (s.games, s.asked) == (400, 600)
    spender.extend(s, 500)  # fewer than the manifest asks: the missing chunk is played, no more
    assert (s.games, s.played) == (600, 200) and budget.shortfall(path) == (600, 600)


@pytest.mark.statistical  # half a minute of budget
def test_a_time_budget_puts_the_games_on_the_two_strongest_rungs(tmp_path):
    """Three cheap rungs: the weakest gets the floor, the two strongest the rest, game for
    game; the plan is said before the main phase and kept in the result."""
    lines = []
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "greedy", "heuristic"], minutes=0.5,
                 precision=0.2, compensation=False)
    r = balance_run.balance(p, jobs=1, log=lines.append)
    games = {v.spec: v.games for v in r.sizes[0].rungs}
    # How far the pair gets depends on the machine's load; that it is paired, past the
    # pilot, and that the weakest rung stops at the floor, does not.
    assert games["random"] <= budget.FLOOR_GAMES
    assert games["greedy"] == games["heuristic"] > budget.PILOT_PAIRS
    cpu = {x["label"]: x["cpu_seconds"] for x in r.runs}
    assert min(cpu["heuristic"], cpu["greedy"]) > cpu["random"]  # the most CPU of any rung
    (plan,) = r.plans
    assert plan.pilot is not None and plan.pilot.pairs >= 1 and plan.played == games["heuristic"]
    assert plan.final is not None and plan.final.pairs == plan.played
    assert sum(x.startswith("plan, 2 players: ") for x in lines) == 1
    assert len(lines) <= 6  # one line a phase, and the plan
    assert f"this run played {plan.played:,}" in plan_text(plan, p.margin)


@pytest.mark.statistical  # twenty seconds of budget
def test_cli_balance_says_its_phases_and_plan_on_stderr_and_its_verdict_on_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHOCOSIM_PROGRESS_INTERVAL", "0")  # a progress line at every step
    code, out, err = cli(capsys, "balance", GAME, "--ladder", "random,heuristic", "--minutes", "0.35",
                         "--no-compensation", "--no-evidence", "-o", "r/fab.html")
    assert code is None or code == 0, err
    lines = err.splitlines()
    assert sum(x.startswith("plan, 2 players: ") for x in lines) == 1
    progress = [x for x in lines if x.startswith("balance: ")]
    phases = list(dict.fromkeys(x.split(" · ")[1].split(":")[0] for x in progress if " · " in x))
    assert phases == ["pilot", "floor", "headline", "report"]
    assert all("of the 21 s budget" in x and "ETA" in x for x in progress[:-1])
    assert out.splitlines()[-1].startswith("balance report: r/fab.html; ")
    verdict = json.loads((tmp_path / "r" / "verdict.json").read_text())
    (plan,) = verdict["plans"]
    assert plan["players"] == 2 and plan["pilot"]["from_paired_games"] >= 1
    assert plan["final"]["from_paired_games"] == plan["paired_games"] > 0


def test_without_a_budget_the_report_still_prices_a_decision(tmp_path):
    r = api.balance(GAME, ladder=["random", "heuristic"], games=2000, precision=5, compensation=False,
                    runs=tmp_path / "runs", jobs=1)
    (plan,) = r.plans
    assert plan.pilot is None and plan.reach is None and plan.played == r.sizes[0].top.games >= 1000
    assert plan.final.pairs == plan.played and 0 < plan.final.cpu_per_game < 1
    assert all(x["cpu_seconds"] > 0 for x in r.runs)
    assert f"this run played {plan.played:,}" in plan_text(plan, r.margin)
    again = api.balance(GAME, ladder=["random", "heuristic"], games=2000, precision=5, compensation=False,
                        runs=tmp_path / "runs", play=False)  # nothing timed: no price
    assert again.plans[0].final.core_hours is None and again.plans[0].final.games == plan.final.games


def test_a_ladder_of_one_rung_grows_that_rung(tmp_path):
    p = bal.plan(GAME, tmp_path / "runs", ladder=["heuristic"], minutes=1, compensation=False)
    pairs = {2: budget.top_pair(p, 2)}
    assert pairs[2] == (p.mirror(2, "heuristic"),)
    spender = budget.Spender(p, jobs=1, deadline=time.monotonic() + 60)
    budget.pilot(spender, p.ladder_cells(), list(pairs.values()), 30)
    assert spender.state(pairs[2][0]).games == budget.PILOT_PAIRS
    budget.headline(spender, pairs, time.monotonic() + 3)
    assert spender.state(pairs[2][0]).games >= 2 * budget.PILOT_PAIRS


def test_a_resumed_runs_fixed_cost_is_not_priced_as_its_games(tmp_path):
    """Reopening a run of many parts costs a second or more whatever the step: a pricing
    step of 2 games then costs ~0.6 s a game, where the 98 games after it cost 0.02 s
    each. The cell's own steps price its games; the cheapest step of any cell (a fresh
    one, 0.1 s) would not take that fixed cost off."""
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], minutes=1, compensation=False)
    s = budget.Played(p.mirror(2, "heuristic"))
    s.record(2, 1.2 + 2 * 0.02, 1.24)
    s.record(98, 1.2 + 98 * 0.02, 3.16)
    assert s.per_game(0.1) == pytest.approx(0.02)
    assert s.cpu_per_game(0.1) == pytest.approx(0.02)
    fresh = budget.Played(p.mirror(2, "random"))
    fresh.record(2, 0.1 + 2 * 0.001, 0.102)  # one step: only the common fixed cost comes off
    assert fresh.per_game(0.1) == pytest.approx(0.001)


def test_the_compensation_keeps_to_its_share_and_the_headline_gets_the_rest(tmp_path, monkeypatch):
    """However early the headline's first phase ends (in a resumed run it once ended after
    one step), the score bonus and the knobs get their share of the budget, not all that
    is left; the headline then gets the rest, and only what it leaves goes back to them."""
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], minutes=1)
    played = budget.Spender(p, jobs=1)
    for c in p.ladder_cells():
        played.extend(played.state(c), 400)
    headline, compensation = [], []
    monkeypatch.setattr(budget, "pilot", lambda *a: None)  # the ladder's games are played above
    monkeypatch.setattr(budget, "floor", lambda *a: None)
    monkeypatch.setattr(budget, "headline", lambda spender, pairs, until: headline.append(until - time.monotonic()))
    monkeypatch.setattr(budget, "headline_halfwidth", lambda *a: 0.0)  # the headline means something
    monkeypatch.setattr(balance_run, "_compensate",
                        lambda p, spender, v, until: compensation.append(until - time.monotonic()))
    balance_run.balance(p, jobs=1)
    share, rest = compensation  # here the headline returns at once: then the rest comes back
    assert 0 < share <= budget.COMPENSATION_SHARE * 60 + 0.1
    assert len(headline) == 2 and headline[1] > 60 * budget.COMPENSATION_SHARE  # the rest first
    assert rest == pytest.approx(headline[1], abs=1.0)
