"""The balance experiment (analysis.experiments.balance): verdicts from mirror matches on a
skill ladder, convergence, the komi, and the report and files written beside it.

Synthetic runs with a planted truth are written where the plan expects its cells, so the
analysis is checked against known answers; the real-game tests check the pieces that the
engine decides (the confirmation run of the komi, a separate `run` agreeing with the
ladder's rates)."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis import api
from analysis.experiments import balance as bal
from analysis.experiments import balance_run
from analysis.experiments import budget
from analysis.render.balance import headline, overall
from simcore.batch import seeds_of_games
from simcore.errors import UserError
from helpers import cli

GAME = "fabryka"


def synthetic_run(path: Path, specs: list[str], winners: np.ndarray, params: dict, seating: str = "fixed",
                  features: dict[str, np.ndarray] | None = None) -> None:
    """A run directory as the runner writes it: winners[g] is the seat that wins game g
    (seat = turn position, seat s holds specs[s]), scores 10 for the winner and 5 for
    the others."""
    n = len(specs)
    g = len(winners)
    path.mkdir(parents=True)
    manifest = {"run_id": path.name, "game": GAME, "players": n, "seed": 0, "seating": seating,
                "n_games": g, "chunk_size": g, "params": params,
                "strategies": [{"spec": s, "class": "x.Bot", "weights": {}} for s in specs]}
    (path / "manifest.json").write_text(json.dumps(manifest))
    game = np.repeat(np.arange(g), n)
    seat = np.tile(np.arange(n), g)
    won = seat == np.repeat(winners, n)
    df = pl.DataFrame({
        "run_id": path.name, "game": game, "seed": seeds_of_games(0, game), "seat": seat,
        "strategy": [specs[s] for s in seat], "score": np.where(won, 10, 5), "rank": np.where(won, 1, 2),
        "win": won.astype(float), "first": seat == 0, "position": seat, "turns": 40,
        "end_reason": "scoring", **{k: v.ravel() for k, v in (features or {}).items()}})
    df = df.with_columns(pl.col("run_id", "strategy", "end_reason").cast(pl.Categorical),
                         pl.col("seat", "rank", "position").cast(pl.Int8), pl.col("win").cast(pl.Float32),
                         pl.col("score", "turns").cast(pl.Int32))
    df.write_ipc(path / "part-00000.arrow")


def winners(rng: np.random.Generator, games: int, first_wins: float) -> np.ndarray:
    return (rng.random(games) >= first_wins).astype(int)


def plant(p: bal.Plan, mirrors: dict[str, np.ndarray], meeting: np.ndarray) -> None:
    """Mirror runs with the given winners, and the meeting of the two rungs (the first
    rung in seat 0, the second in seat 1) with the seats `meeting` gives as winners."""
    params = p.params(2).model_dump(mode="json")
    for rung, w in mirrors.items():
        synthetic_run(p.mirror(2, rung).path, [rung, rung], w, params)
    (cell,) = p.meetings(2)
    synthetic_run(cell.path, list(cell.specs), meeting, params, seating="rotate")


@pytest.fixture
def ladder_plan(tmp_path: Path) -> bal.Plan:
    return bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], compensation=False)


def test_a_position_effect_only_at_the_strongest_rung_still_moves_with_skill(ladder_plan):
    rng = np.random.default_rng(1)
    plant(ladder_plan, {"random": winners(rng, 20_000, 0.5), "heuristic": winners(rng, 20_000, 0.6)},
          meeting=np.ones(20_000, dtype=int))  # seat 1 (heuristic) wins every game
    r = bal.analyze(ladder_plan)
    (v,) = r.sizes
    assert v.strongest == "heuristic" and v.top.rating[0] > v.rung("random").rating[0]
    assert v.convergence.state == "moves"
    change, low, high, q = v.convergence.changes[0]
    assert 8 < change < 12 and low > 1 and q < 0.05
    assert v.top.rates[0].value == pytest.approx(0.6, abs=0.01)
    assert "Still moves with skill" in headline(v, r.margin)
    assert "1st-player advantage" in headline(v, r.margin)
    assert r.verdict()["sizes"][0]["converged"] is False


def test_identical_rates_at_the_top_two_rungs_converged(ladder_plan):
    rng = np.random.default_rng(2)
    same = winners(rng, 40_000, 0.55)
    plant(ladder_plan, {"random": same, "heuristic": same}, meeting=np.ones(40_000, dtype=int))
    r = bal.analyze(ladder_plan)
    (v,) = r.sizes
    assert v.convergence.state == "converged"
    # Every paired game agreed: no zero-width interval, but ±600/games points (rule of three).
    assert all(c[0] == 0 and c[2] == pytest.approx(600 / 40_000) for c in v.convergence.changes)
    assert "Converged: the two strongest rungs agree within ±0.1 percentage points" in headline(v, r.margin)
    assert r.verdict()["sizes"][0]["converged"] is True
    assert r.verdict()["sizes"][0]["convergence"]["agreement_points"] == pytest.approx(600 / 40_000)
    assert overall(r).endswith("at 2 players 1st-player advantage of +5.0 percentage points over the fair 50.0% "
                               "(converged: agreeing within ±0.1 percentage points).")


def test_two_players_name_the_1st_player_whichever_deviation_rounds_larger():
    # 8 wins in 14: |8/14 - 1/2| comes out a hair smaller in floating point than
    # |6/14 - 1/2|, and the same advantage was once called a 2nd-player disadvantage.
    from types import SimpleNamespace

    from analysis.render.balance import _balance_word

    rates = [SimpleNamespace(value=v, low=v - 0.2, high=v + 0.2, p_value=1e-6) for v in (8 / 14, 6 / 14)]
    v = SimpleNamespace(players=2, top=SimpleNamespace(rates=rates))
    assert abs(6 / 14 - 0.5) > abs(8 / 14 - 0.5)
    assert _balance_word(v, 1.0).startswith("a 1st-player advantage of +7.1 percentage points")


def test_a_null_difference_with_few_games_is_undecided_not_converged(ladder_plan):
    rng = np.random.default_rng(3)
    plant(ladder_plan, {"random": winners(rng, 400, 0.5), "heuristic": winners(rng, 400, 0.5)},
          meeting=np.ones(400, dtype=int))
    (v,) = bal.analyze(ladder_plan).sizes
    assert v.convergence.state == "undecided"


def test_a_handful_of_games_never_decides_convergence(ladder_plan):
    """Ten games where the first player always wins at the top rung and never below: the
    normal intervals would call it significant, but ten games decide nothing."""
    plant(ladder_plan, {"random": np.ones(10, dtype=int), "heuristic": np.zeros(10, dtype=int)},
          meeting=np.ones(10, dtype=int))
    (v,) = bal.analyze(ladder_plan).sizes
    assert v.convergence.state == "too few games" and v.convergence.games == 10
    assert v.convergence.changes == [] and v.convergence.agreement is None


def test_a_mismatched_lineup_never_enters_the_position_verdict(ladder_plan):
    """The meeting of two rungs has a huge first-seat effect; the verdict's position rates
    are the mirrors' alone (50%), and the table holds mirror rungs only."""
    rng = np.random.default_rng(4)
    plant(ladder_plan, {"random": winners(rng, 20_000, 0.5), "heuristic": winners(rng, 20_000, 0.5)},
          meeting=winners(rng, 20_000, 0.95))
    r = bal.analyze(ladder_plan)
    (v,) = r.sizes
    assert all(abs(x.value - 0.5) < 0.015 for g in v.rungs for x in g.rates)
    assert set(r.table["rung"]) == {"random", "heuristic"}
    assert r.table.columns == ["players", "rung", "strongest", "rating", "rating_low", "rating_high",
                               "position", "win_rate", "low", "high", "fair", "games"]


def test_the_strongest_rung_is_the_highest_rated_not_the_last_listed(ladder_plan):
    rng = np.random.default_rng(5)
    plant(ladder_plan, {"random": winners(rng, 5000, 0.5), "heuristic": winners(rng, 5000, 0.5)},
          meeting=np.zeros(5000, dtype=int))  # seat 0 (random) wins every game
    (v,) = bal.analyze(ladder_plan).sizes
    assert v.strongest == "random"
    assert any("above heuristic" in n for n in v.notes)


def test_a_component_that_helps_at_one_rung_and_hurts_at_another_is_a_reversal(ladder_plan):
    """Pink cards: the winner held them in 70% of the random mirror's games (the loser in
    the rest), in 30% of the heuristic mirror's: a finding of each sign."""
    rng = np.random.default_rng(6)
    params = ladder_plan.params(2).model_dump(mode="json")
    for rung, held_by_winner in (("random", 0.7), ("heuristic", 0.3)):
        w = winners(rng, 20_000, 0.5)
        winner_has = rng.random(20_000) < held_by_winner
        holder = np.where(winner_has, w, 1 - w)
        pink = (np.arange(2)[None, :] == holder[:, None]).astype(np.int8)
        synthetic_run(ladder_plan.mirror(2, rung).path, [rung, rung], w, params, features={"cards_pink": pink})
    (cell,) = ladder_plan.meetings(2)
    synthetic_run(cell.path, list(cell.specs), np.ones(20_000, dtype=int), params, seating="rotate")
    (v,) = bal.analyze(ladder_plan).sizes
    (text,) = v.reversals  # P(win | has) - P(win | not) = 0.7 - 0.3 = +40 points, then -40
    assert text.startswith("Having cards_pink goes with winning more under random (+4")
    assert "winning less under heuristic (-4" in text


# ---- the komi ----

@pytest.mark.statistical  # 20,000 heuristic games, then the paired runs of the bonus and of each knob value
def test_komi_is_confirmed_by_a_paired_run_in_fabryka(tmp_path):
    """Fabryka's heuristic mirror: the second player wins about 56%; two points to the
    first player even it out (a sweep measured 49.9%, 95% CI 49.2-50.6, at 20,000
    games). The paired run with that bonus as a house rule confirms it."""
    p = bal.plan(GAME, tmp_path / "runs", ladder=["heuristic"], games=20_000, precision=0.05)
    r = balance_run.balance(p, jobs=1)  # the same games on any jobs; one thread spares the pool's cost
    (v,) = r.sizes
    assert v.top.games == 20_000 and v.convergence is None
    assert v.komi.points == [2, 0]
    assert 1.5 < -v.komi.estimate[1][0] < 2.5
    assert v.komi.confirm_games == 20_000
    first = v.komi.confirmed[0]
    assert first.low < 0.5 < first.high and v.komi.balanced
    assert v.komi.changes[0][0] > 5  # the first player's rate rose by about 6 points
    # The game's own knobs: every value of each played on the same seeds.
    assert [k.param for k in v.knobs] == ["collect_count", "opening_belt"]
    assert [pt.value for pt in v.knobs[0].points] == [3, 4, 5, 6, 7]
    verdict = r.verdict()["sizes"][0]["compensation"]
    assert verdict["komi"]["points"] == [2, 0]


def test_enemy_chocolatier_says_a_score_bonus_cannot_balance_it(tmp_path):
    p = bal.plan("enemy_chocolatier", tmp_path / "runs", players=[2], ladder=["heuristic"], games=2000,
                 precision=5, compensation=True)
    (v,) = balance_run.balance(p, jobs=1).sizes
    assert v.komi is None and "cannot balance" in v.komi_note
    assert [k.param for k in v.knobs] == ["start_money.step"]


# ---- the ladder and the plan ----

def test_default_ladder_offers_tuned_weights_only_where_validated():
    at2, notes2 = bal.default_ladder("enemy_chocolatier", 2)
    at5, notes5 = bal.default_ladder("enemy_chocolatier", 5)
    assert bal.TUNED in at2 and not notes2
    assert bal.TUNED not in at5 and "not validated" in notes5[0]
    # The search bot's budget by table size (400 at 2 players, 25 at 5), and its doubling.
    assert at2[-2:] == ["mcts(iterations=400)", "mcts(iterations=800)"]
    assert at5[-2:] == ["mcts(iterations=25)", "mcts(iterations=50)"]
    assert bal.default_ladder("fabryka", 2, lowest="heuristic")[0][0] == "heuristic"


def test_a_rung_with_weights_not_validated_at_a_size_is_refused(tmp_path):
    with pytest.raises(UserError, match="validated at 2, 3, 4 players, not 6"):
        bal.plan("enemy_chocolatier", tmp_path, players=[6], ladder=["heuristic", bal.TUNED])


@pytest.mark.parametrize("kwargs, message", [
    ({"players": [1]}, "needs two seats or more"),
    ({"players": [7]}, "allows 2 to 6"),
    ({"precision": math.inf}, "precision = inf"),
    ({"margin": 0}, "margin = 0"),
    ({"ladder": ["heuristic", "heuristic"]}, "listed twice"),
    ({"ladder": ["nosuchbot"]}, "unknown strategy"),
    ({"sets": {"players": 3}}, "--players"),
    ({"lowest": "mcts(iterations=5)"}, "not a rung"),
])
def test_bad_plans_are_one_line(tmp_path, kwargs, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        bal.plan("enemy_chocolatier", tmp_path, **kwargs)
    assert "\n" not in str(e.value)


def test_every_table_size_by_default_and_cells_per_size(tmp_path):
    p = bal.plan("manfredini", tmp_path)
    assert p.sizes == [2, 3, 4]
    # Manfredini's budget by table size (4,480 at 2 players, 9 at 3), doubled.
    assert p.ladders[2][-1] == "mcts(iterations=8960)" and p.ladders[3][-1] == "mcts(iterations=18)"
    meetings = p.meetings(3)
    # Adjacent rungs, both ways round at an odd size; seats rotate up to 3 players.
    assert len(meetings) == 2 * (len(p.ladders[3]) - 1)
    assert {c.seating for c in meetings} == {"rotate"} and {c.seating for c in p.meetings(4)} == {"random"}
    assert p.mirror(3, "random").path.parts[-3:] == ("balance", "3p", "random")


# ---- budget, resumption, files, API and CLI ----

def test_a_time_budget_plays_every_cell_and_a_rerun_extends(tmp_path):
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], minutes=0.1, compensation=False)
    cells = p.ladder_cells()
    pair = budget.top_pair(p, 2)
    # A step of these bots takes about 0.1 s (a second on a busy machine): the pilot and
    # the floor stop at their targets, long before their time.
    first = budget.Spender(p, deadline=time.monotonic() + 60)
    budget.pilot(first, cells, [pair], 30)
    assert all(first.state(c).games > 0 for c in cells)
    assert first.state(pair[0]).games == first.state(pair[1]).games == budget.PILOT_PAIRS
    again = budget.Spender(p, deadline=time.monotonic() + 60)
    budget.floor(again, [c for c in cells if c not in pair], time.monotonic() + 30)
    assert [again.state(c).games for c in cells if c not in pair] == [budget.FLOOR_GAMES]  # the meeting


def test_without_a_budget_every_cell_plays_to_precision_or_cap(tmp_path):
    p = bal.plan(GAME, tmp_path / "runs", ladder=["random", "heuristic"], games=3000, precision=0.1,
                 compensation=False)
    played = bal.play(p, p.ladder_cells(), jobs=1)
    assert [s.stopped for s in played] == ["cap"] * 3
    assert [s.games for s in played] == [3000, 3000, 3000]


def test_api_writes_the_report_the_tidy_table_and_the_verdict(tmp_path):
    out = tmp_path / "out" / "fab.html"
    r = api.balance(GAME, html=out, ladder=["random", "heuristic"], games=2000, precision=5,
                    compensation=False, runs=tmp_path / "runs", jobs=1)
    table = pl.read_parquet(out.parent / "balance.parquet")
    assert table.equals(r.table)
    assert pl.read_csv(out.parent / "balance.csv").height == table.height == 4
    verdict = json.loads((out.parent / "verdict.json").read_text())
    assert verdict == json.loads(json.dumps(r.verdict()))
    assert verdict["sizes"][0]["rung"] == r.sizes[0].strongest
    html = out.read_text()
    assert html.index('id="verdict"') < html.index('id="contents"') < html.index('id="p2"')
    assert 'href="fab-evidence.html"' in html and (out.parent / "fab-evidence.html").is_file()
    # The report's rates are the table's.
    row = table.filter(pl.col("strongest"), pl.col("position") == 0).row(0, named=True)
    assert f"{100 * row['win_rate']:.1f}%" in html


@pytest.mark.statistical  # 20,000 games a rung and a mirror run as long
def test_the_ladders_rates_agree_with_a_separate_mirror_run(tmp_path):
    """A heuristic mirror run on its own (another seed) agrees with the ladder's rung
    within the intervals (independent samples: the difference within 4 standard errors)."""
    r = api.balance(GAME, ladder=["random", "heuristic"], games=20_000, precision=0.01,
                    compensation=False, runs=tmp_path / "runs", jobs=1)
    rung = r.sizes[0].rung("heuristic")
    alone = api.run(GAME, ["heuristic", "heuristic"], games=20_000, out=tmp_path / "alone", seed=9, jobs=1)
    rates = api.results(alone.path).group_by("position").agg(pl.col("win").mean()).sort("position")
    for pos, mine in enumerate(rung.rates):
        se = math.sqrt(2 * mine.value * (1 - mine.value) / 20_000)
        assert abs(mine.value - rates["win"][pos]) < 4 * se


def test_cli_balance_prints_the_verdict_and_writes_files(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "balance", GAME, "--ladder", "random,heuristic", "--minutes", "0",
                         "--games", "1000", "--precision", "5", "--no-compensation", "--no-evidence",
                         "--quiet", "-o", "r/fab.html")
    assert code is None or code == 0, err
    assert out.startswith("Fabryka Czekolady, among the strongest bots here")
    assert "At 2 players, with heuristic in every seat" in out
    assert {p.name for p in (tmp_path / "r").iterdir()} == {"fab.html", "balance.parquet", "balance.csv",
                                                           "verdict.json"}


def test_cli_balance_bad_input_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "balance", GAME, "--players", "3", "-o", "x.html")
    lines = [x for x in err.splitlines() if not x.startswith("chocosim: warning")]  # the checked build says so
    assert code == 2 and len(lines) == 1 and "allows 2" in lines[0]
    assert not (tmp_path / "runs").exists()
