"""Sweeps: a planted monotone effect found, a planted crossing recovered by the fair
point, refused points reported while the rest run, re-running finishes only what is
missing, the same seeds at every point, and bad input (one line, exit 2, nothing lost)."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from analysis import api, stats
from analysis.experiments.sweep import Point, _fair_points, parse_vary
from analysis.render.sweep import figures
from analysis.rundir import scan_run
from simcore.errors import UserError
from helpers import cli

SEATS = [["heuristic", "random"]]




def snapshot(directory):
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def rounds_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s"
    return api.sweep("fabryka", SEATS, {"rounds": [1, 2, 3], "collect_count": [0, 5]}, 1000, out)


def test_a_planted_monotone_effect_is_found(rounds_sweep):
    """More rounds, longer games: every step of rounds lengthens the game, paired."""
    t = rounds_sweep.table.filter(pl.col("metric") == "turns").sort("rounds")
    assert t["rounds"].to_list() == [1, 2, 3]
    assert np.all(np.diff(t["value"].to_numpy()) > 5)
    assert (t["low"] <= t["value"]).all() and (t["value"] <= t["high"]).all()
    steps = rounds_sweep.neighbours.filter((pl.col("param") == "rounds") & (pl.col("metric") == "turns"))
    assert steps.height == 2 and (steps["low"] > 0).all() and (steps["q"] < 0.05).all()


def test_a_refused_point_is_reported_and_the_rest_run(rounds_sweep):
    refused = [p for p in rounds_sweep.points if p.refused]
    assert [p.values["collect_count"] for p in refused] == [0, 0, 0]
    assert all("collect_count = 0" in p.refused for p in refused)
    assert rounds_sweep.table["collect_count"].unique().to_list() == [5]
    assert all((p.path / "manifest.json").exists() for p in rounds_sweep.points if not p.refused)


def test_every_point_plays_the_same_seeds(rounds_sweep):
    seeds = [scan_run(p.path).select("game", "seed").unique()
             .sort("game").collect() for p in rounds_sweep.points if not p.refused]
    assert all(s.equals(seeds[0]) for s in seeds[1:])


def test_the_tidy_table_is_on_disk(rounds_sweep):
    on_disk = pl.read_parquet(rounds_sweep.path / "metrics.parquet")
    assert on_disk.equals(rounds_sweep.table)
    assert pl.read_csv(rounds_sweep.path / "metrics.csv").height == on_disk.height
    assert {"lineup", "rounds", "collect_count", "metric", "value", "low", "high", "se"} <= set(on_disk.columns)


def test_a_whole_number_param_ticks_at_whole_numbers(rounds_sweep, monkeypatch):
    import analysis.render.sweep as render

    drawn = []
    monkeypatch.setattr(render, "_svg", lambda fig: drawn.append(fig) or "")
    figures(rounds_sweep)
    ticks = [t for fig in drawn for ax in fig.axes if ax.get_xlabel() == "rounds" for t in ax.get_xticks()
             if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks  # rounds 1, 2, 3: never 1.5


def test_two_params_get_a_heatmap(rounds_sweep):
    captions = [c for c, _ in figures(rounds_sweep)]
    assert any("the 1st player's advantage over rounds and collect_count" in c for c in captions)
    assert any("every metric against rounds" in c for c in captions)


def test_rerunning_finishes_only_what_is_missing(tmp_path):
    out = tmp_path / "s"
    first = api.sweep("fabryka", SEATS, {"rounds": [2, 3]}, 400, out)
    assert first.played == 800
    victim = next(p for p in first.points if p.values["rounds"] == 3)
    next(victim.path.glob("part-*.arrow")).unlink()
    again = api.sweep("fabryka", SEATS, {"rounds": [2, 3]}, 400, out)
    assert 0 < again.played < 400
    assert api.sweep("fabryka", SEATS, {"rounds": [2, 3]}, 400, out).played == 0


def test_the_fair_point_recovers_a_planted_crossing_at_the_stated_rate():
    """A position advantage falling linearly through zero at x = 5.5, measured at
    x = 3..8 with noise: the interval covers 5.5 at about 95%."""
    rng = np.random.default_rng(3)
    x = np.arange(3, 9, dtype=float)
    se = np.full(len(x), 0.004)
    truth = 0.05 - 0.02 * (x - 3)
    reps, covered, found = 300, 0, []
    for seed in range(reps):
        c = stats.zero_crossing(x, truth + se * rng.standard_normal(len(x)), se, draws=1000, seed=seed)
        covered += c.low <= 5.5 <= c.high
        found.append(c.x)
    assert abs(np.mean(found) - 5.5) < 0.01
    assert covered / reps >= 0.92


def test_no_crossing_is_no_fair_point_and_an_open_end_is_infinite():
    x = np.arange(3, 8, dtype=float)
    assert stats.zero_crossing(x, 0.1 - 0.01 * x, np.full(5, 0.001)) is None
    c = stats.zero_crossing(x, 0.04 - 0.01 * (x - 3), np.full(5, 0.004))  # crosses at the last point
    assert c.x == pytest.approx(7.0) and c.high == np.inf


def planted_point(path, advantage: float, games: int, rng) -> None:
    """A hand-made two-player run directory whose first player wins 50% + advantage."""
    path.mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps({"game": "synthetic", "n_games": games, "players": 2,
                                                    "strategies": [{"spec": "a"}, {"spec": "b"}]}))
    first = (rng.random(games) < 0.5 + advantage).astype(np.float32)
    pl.DataFrame({"game": np.repeat(np.arange(games), 2), "position": np.tile([0, 1], games).astype(np.int8),
                  "win": np.column_stack([first, 1 - first]).ravel()}).write_ipc(path / "part-00000.arrow")


def test_the_fair_point_of_a_sweep_recovers_a_planted_crossing(tmp_path):
    """Points whose first player's advantage falls through zero at k = 4.25."""
    adv = {3: 0.06, 4: 0.02, 5: -0.06, 6: -0.09}
    rng = np.random.default_rng(4)
    points = [Point(("a", "b"), {"k": k}, tmp_path / str(k)) for k in adv]
    for p in points:
        planted_point(p.path, adv[p.values["k"]], 4000, rng)
    rows = [{"lineup": "a,b", "k": k, "metric": f"pos{p}", "value": 50 + 100 * (a if p == 0 else -a),
             "se": 100 * np.sqrt(0.25 / 4000), "fair": 50.0} for k, a in adv.items() for p in (0, 1)]
    fair, unreached = _fair_points(["k"], points, pl.DataFrame(rows))
    assert unreached == []  # a crossing: nothing to widen
    assert fair["position"].to_list() == [0, 1]
    assert fair["x"].to_list() == pytest.approx([4.25, 4.25])
    assert (fair["low"] < 4.25).all() and (fair["high"] > 4.25).all() and (fair["high"] < 5).all()
    assert "bootstrap replicates resampling blocks of games" in fair["method"][0]


def test_a_sweep_that_never_reaches_fair_says_which_way_to_widen(tmp_path):
    """Planted: the first player's advantage falls with k (+9, +7, +5, +3 points at k = 3..6)
    but never reaches zero: no fair point, and the range is to be widened above 6 (the
    planted line reaches zero at 7.5)."""
    adv = {3: 0.09, 4: 0.07, 5: 0.05, 6: 0.03}
    rng = np.random.default_rng(8)
    points = [Point(("a", "b"), {"k": k}, tmp_path / str(k)) for k in adv]
    for p in points:
        planted_point(p.path, adv[p.values["k"]], 4000, rng)
    rows = [{"lineup": "a,b", "k": k, "metric": f"pos{p}", "value": 50 + 100 * (a if p == 0 else -a),
             "se": 100 * np.sqrt(0.25 / 4000), "fair": 50.0} for k, a in adv.items() for p in (0, 1)]
    fair, unreached = _fair_points(["k"], points, pl.DataFrame(rows))
    assert fair.height == 0
    assert unreached == ["No value of k swept reaches fair (a,b). The 1st player's win rate falls as k grows, "
                         "above its fair share at every value from 3 to 6: try values above 6 (a straight "
                         "line through them reaches fair near 7.50)."]


def _correlated_points(tmp_path, rng, games: int) -> tuple[list[Point], pl.DataFrame, np.ndarray]:
    """Two points (k = 0, 1) on the same seeds: the first player wins 52% at k = 0 and
    47% at k = 1 (a crossing at k = 0.4), the same game's outcomes agreeing 70% of the
    time beyond chance, as common seeds make them."""
    u = rng.random(games)
    first = np.column_stack([u < 0.52, u < 0.47]).astype(float)
    redraw = rng.random((games, 2)) < 0.3
    first = np.where(redraw, (rng.random((games, 2)) < [0.52, 0.47]).astype(float), first)
    points, rows = [], []
    for k in (0, 1):
        path = tmp_path / str(k)
        path.mkdir(parents=True)
        (path / "manifest.json").write_text(json.dumps({"game": "synthetic", "n_games": games, "players": 2,
                                                        "strategies": [{"spec": "a"}, {"spec": "b"}]}))
        f = first[:, k].astype(np.float32)
        pl.DataFrame({"game": np.repeat(np.arange(games), 2), "position": np.tile([0, 1], games).astype(np.int8),
                      "win": np.column_stack([f, 1 - f]).ravel()}).write_ipc(path / "part-00000.arrow")
        points.append(Point(("a", "b"), {"k": k}, path))
        mean, se = f.mean(), f.std(ddof=1) / np.sqrt(games)
        rows += [{"lineup": "a,b", "k": k, "metric": f"pos{p}", "value": 100 * (mean if p == 0 else 1 - mean),
                  "se": 100 * se, "fair": 50.0} for p in (0, 1)]
    return points, pl.DataFrame(rows), first


@pytest.mark.statistical
def test_the_fair_points_interval_is_as_wide_as_the_delta_methods(tmp_path):
    """With 100 blocks the bootstrap's interval was 0.83-1.21 times as wide as
    the delta method's (crossing x = y0 / (y0 - y1), its variance from the points'
    covariance over the common games); enough blocks make it agree within a few percent.
    60 planted sweeps of 20,000 games."""
    rng = np.random.default_rng(6)
    ratios, hit = [], 0
    for r in range(60):
        points, table, first = _correlated_points(tmp_path / str(r), rng, 20_000)
        row = _fair_points(["k"], points, table)[0].filter(pl.col("position") == 0).row(0, named=True)
        y = first.mean(axis=0) - 0.5
        d = y[0] - y[1]
        g = np.array([-y[1], y[0]]) / d ** 2
        se = np.sqrt(g @ np.cov(first.T) @ g / len(first))
        ratios.append((row["high"] - row["low"]) / (2 * stats.Z95 * se))
        hit += row["low"] <= 0.4 <= row["high"]
    assert 0.9 < min(ratios) and max(ratios) < 1.1 and np.std(ratios) < 0.04, (min(ratios), max(ratios))
    assert hit >= 52  # 95% of 60 is 57; below 52 would be 2.8 SE short


def test_the_block_bootstrap_keeps_the_correlation_of_common_seeds():
    """Two points on the same games (highly correlated): the replicates of their
    difference are as tight as the true paired difference, not as two independent ones."""
    rng = np.random.default_rng(5)
    a = rng.random(100_000)
    b = a + 0.1 * rng.random(100_000)
    blocks = np.arange(100_000) * 100 // 100_000
    sums = np.column_stack([np.bincount(blocks, a), np.bincount(blocks, b)])
    counts = np.column_stack([np.bincount(blocks)] * 2).astype(float)
    reps = stats.block_bootstrap(sums, counts, draws=2000)
    sd_diff = np.std(reps[:, 1] - reps[:, 0])
    true_sd = np.std(b - a) / np.sqrt(len(a))
    assert 0.7 * true_sd < sd_diff < 1.3 * true_sd
    assert sd_diff < 0.2 * np.std(reps[:, 0]) * np.sqrt(2)


@pytest.mark.parametrize("vary, needle", [
    ("roundz=2,3", "--vary roundz: unknown param"),
    ("rounds=2,three", "value 'three' is a string, but rounds takes a integer"),
    ("rounds=2.5", "value 2.5 is a number, but rounds takes a integer"),
    ("rounds=", "empty grid"),
    ("rounds", "expected NAME=V1,V2"),
    ("rounds=2,2", "listed twice"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_is_lost(capsys, tmp_path, vary, needle):
    out = tmp_path / "s"
    api.sweep("fabryka", SEATS, {"rounds": [2]}, 100, out)
    before = snapshot(out)
    html = tmp_path / "s.html"
    code, _, err = cli(capsys, "sweep", "fabryka", "--seats", "heuristic,random", "--vary", vary,
                       "--games", "100", "--dir", str(out), "-o", str(html))
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert snapshot(out) == before and not html.exists()


def test_a_sweep_the_game_refuses_entirely_is_an_error(tmp_path):
    with pytest.raises(UserError, match="refuses every point"):
        api.sweep("fabryka", SEATS, {"collect_count": [0]}, 100, tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_a_directory_that_is_not_a_sweep_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not a sweep directory"):
        api.sweep("fabryka", SEATS, {"rounds": [2]}, 100, tmp_path)
    assert snapshot(tmp_path) == {tmp_path.joinpath("notes.txt").relative_to(tmp_path): b"mine"}


def test_the_cli_writes_the_report_and_says_where(capsys, tmp_path):
    html = tmp_path / "s.html"
    code, out, err = cli(capsys, "sweep", "fabryka", "--seats", "heuristic,random", "--vary", "rounds=2,3",
                         "--games", "200", "--dir", str(tmp_path / "s"), "-o", str(html), "--quiet")
    assert code == 0 and "sweep of 2 grid point(s) (0 refused), 400 games played" in out and err == ""
    text = html.read_text()
    assert "Fair points (where a knob equalises the positions)" in text and "src=\"http" not in text
    assert json.loads((tmp_path / "s" / "sweep.json").read_text())["vary"] == {"rounds": [2, 3]}


def test_parse_vary_reads_toml_values():
    assert parse_vary("rounds=2, 3") == ("rounds", [2, 3])
    assert parse_vary("recipes=[[1,2],[3]],[[4]]") == ("recipes", [[[1, 2], [3]], [[4]]])


def test_parse_vary_takes_tunes_integer_range_form():
    assert parse_vary("rounds=3..6") == ("rounds", [3, 4, 5, 6])
    assert parse_vary("compensation.points=-1..1") == ("compensation.points", [-1, 0, 1])
    for bad in ("rounds=6..3", "rounds=0..5000"):
        with pytest.raises(UserError, match="LOW <= HIGH"):
            parse_vary(bad)


def test_a_sweep_over_lineups_keeps_each_lineup_apart(tmp_path):
    lineups = [["heuristic", "random"], ["random", "random"]]
    result = api.sweep("fabryka", lineups, {"rounds": [2, 3]}, 200, tmp_path / "s")
    assert sorted(set(result.table["lineup"])) == ["heuristic,random", "random,random"]
    assert len({p.path for p in result.points}) == 4
    strategies = result.table.filter(pl.col("group") == "strategies")
    assert set(strategies["lineup"]) == {"heuristic,random"}  # a mirror has no skill gap
    steps = result.neighbours.filter(pl.col("metric") == "turns")
    assert sorted(steps["lineup"]) == ["heuristic,random", "random,random"] and (steps["change"] > 0).all()
