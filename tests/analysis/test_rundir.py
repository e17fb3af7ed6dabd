"""The one reader of a run directory (analysis.rundir.RunDir) and the one tally of its
rows (analysis.tally), on run directories built by hand with known contents: complete,
short (a part missing), corrupt, unproven (a layout-1 part without a tally); every
count equal to a direct count of the part files' rows."""
from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import strategies
from analysis import stats
from analysis.effects import SeatStates, effect_columns, effect_moments
from analysis.metrics import analyze, component_table, component_thresholds
from analysis.rundir import RunDir, open_run, scan_run
from analysis.summary import summarize
from helpers import DATA
from simcore.errors import UserError
from simcore.parts import MANIFEST, part_name, tally_path, write_part
from simcore.meta import FeatureRoles
from simcore.registry import get_game
from simcore.rundir import finished_games, held_games, read_manifest
from simcore.runner import run

FABRYKA = get_game("fabryka")
SPECS = ["random", "greedy"]
LAYOUT1 = DATA / "fabryka_layout1"  # random v greedy, seed 11, 40 games, parts of 10


def play(out: Path, n_games: int = 40) -> Path:
    run(FABRYKA, FABRYKA.params(players=2), SPECS, functools.partial(strategies.build_lineup, "fabryka", SPECS),
        out, seed=11, n_games=n_games, chunk_size=10, jobs=1, quiet=True)
    return out


@pytest.fixture(scope="module")
def complete(tmp_path_factory) -> Path:
    return play(tmp_path_factory.mktemp("rundir") / "r")


def direct(parts: list[Path]) -> pl.DataFrame:
    """The rows of the part files read straight with polars (no reader of ours): the
    columns a compact part stores are the counted ones."""
    return pl.concat([pl.read_ipc(p, columns=["seat", "position", "strategy", "win", "score", "end_reason"])
                      .with_columns(pl.col("seat", "position").cast(pl.Int64), pl.col("strategy", "end_reason")
                                    .cast(pl.String), pl.col("win").cast(pl.Float64), pl.col("score").cast(pl.Int64))
                      for p in parts])


def cells_of(rows: pl.DataFrame) -> pl.DataFrame:
    return (rows.group_by("seat", "position", "strategy", "end_reason")
            .agg(rows=pl.len().cast(pl.Int64), wins=pl.col("win").sum(), score_sum=pl.col("score").sum())
            .sort("seat", "position", "strategy", "end_reason"))


# ---- a complete run ----

def test_a_complete_run_is_its_manifest_and_every_part(complete):
    r = RunDir(complete)
    assert r.manifest == json.loads((complete / MANIFEST).read_text())
    assert r.parts == [complete / part_name(i) for i in range(4)]
    assert r.unproven == () and r.players == 2 and r.strategies == SPECS and r.n_games == 40
    assert r.features[:3] == ["cards_biscuits", "cards_blueberries", "cards_strawberries"]
    assert r.standings == ["interim_round_1", "interim_round_2", "interim_round_3", "interim_round_4"]
    assert r.scan().select(pl.len()).collect().item() == 80  # 40 games x 2 seats
    assert held_games(complete) == 40 and finished_games(complete) == 40


def test_the_part_tallies_equal_a_direct_count_of_the_rows(complete):
    r = RunDir(complete)
    cells, group, key = r.part_cells()
    got = cells.select("seat", "position", "strategy", "end_reason", "rows", "wins", "score_sum") \
        .sort("seat", "position", "strategy", "end_reason")
    assert got.equals(cells_of(direct(r.parts)))
    assert group is None and key is None  # Fabryka has no grouping feature
    assert cells["rows"].sum() == 80


def test_the_analysis_tally_equals_a_direct_count_of_the_rows(complete):
    a = analyze(complete)
    rows = direct(RunDir(complete).parts)
    assert a.games == 40
    by_seat = rows.group_by("seat").agg(pl.col("win").sum()).sort("seat")["win"].to_list()
    assert [w.successes for w in a.seats.win] == pytest.approx(by_seat)
    by_position = rows.group_by("position").agg(pl.col("win").sum()).sort("position")["win"].to_list()
    assert [w.successes for w in a.seats.positions.win] == pytest.approx(by_position)
    scores = dict(rows.group_by("score").agg(pl.len()).iter_rows())
    assert dict(a.outcomes.scores.counts) == scores
    # head to head at two seats: a strategy's wins against the other are its win shares
    m = a.strategies.matchups
    by_strategy = rows.group_by("strategy").agg(pl.col("win").sum())
    wins = dict(by_strategy.iter_rows())
    assert m.wins[m.names.index("random"), m.names.index("greedy")] == pytest.approx(wins["random"])


def test_scan_and_read_give_the_same_rows(complete):
    r = RunDir(complete)
    whole = pl.concat([r.read(p) for p in r.parts])
    assert whole.equals(scan_run(complete).collect())
    assert r.read(r.parts[1], ["game", "seat"])["game"].to_list() == [g for g in range(10, 20) for _ in (0, 1)]


# ---- short, corrupt, unproven ----

def test_a_short_run_reads_the_parts_it_has_and_is_not_complete(complete, tmp_path):
    out = tmp_path / "short"
    shutil.copytree(complete, out)
    (out / part_name(3)).unlink()
    tally_path(out / part_name(3)).unlink()
    r = RunDir(out)
    assert len(r.parts) == 3 and finished_games(out) == 30 and held_games(out) == 40
    s = summarize(out)
    assert s.games == 30 and not s.complete
    assert analyze(out).games == 30


def test_a_corrupt_part_is_refused_in_one_line(complete, tmp_path):
    out = tmp_path / "corrupt"
    shutil.copytree(complete, out)
    part = out / part_name(2)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    for read in (open_run, summarize, scan_run, lambda p: RunDir(p).parts):
        with pytest.raises(UserError, match=f"results part {part} is damaged"):
            read(out)


def test_an_unproven_part_is_counted_and_named(tmp_path):
    out = tmp_path / "old"
    shutil.copytree(LAYOUT1, out)
    part = out / part_name(1)
    tally_path(part).unlink()  # a layout-1 part without its tally: checked row by row
    r = RunDir(out)
    assert len(r.parts) == 4 and not r.proven(part) and r.proven(out / part_name(0))
    assert r.unproven == ((f"results part {part} has no tally ({tally_path(part).name}): its rows are this "
                           "run's games, but nothing proves its figures; running the run's command again "
                           "plays its games again"),)
    cells, _, _ = r.part_cells()
    got = cells.select("seat", "position", "strategy", "end_reason", "rows", "wins", "score_sum") \
        .sort("seat", "position", "strategy", "end_reason")
    assert got.equals(cells_of(direct(r.parts)))
    assert not summarize(out).complete and analyze(out).run.unproven == r.unproven


@pytest.mark.parametrize("manifest, message", [
    (None, "is not a run directory (no manifest.json)"),
    ({"game": "fabryka"}, "manifest.json lacks n_games"),
    ({"game": "fabryka", "n_games": 4, "players": "two"}, "garbles players"),
])
def test_a_bad_manifest_is_one_line(tmp_path, manifest, message):
    out = tmp_path / "r"
    out.mkdir()
    if manifest is not None:
        (out / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_manifest(out)
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RunDir(out)


def test_the_lineup_is_checked_when_asked(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / MANIFEST).write_text(json.dumps({"game": "fabryka", "n_games": 4}))
    r = RunDir(out)  # a summary needs no lineup
    with pytest.raises(UserError, match="lacks or garbles players or strategies"):
        r.check_lineup()
    with pytest.raises(UserError, match="lacks or garbles players or strategies"):
        open_run(out)


# ---- the effects' thresholds: guessed from the first part, corrected by the run ----

def hand_run(out: Path, values: list[np.ndarray], wins: list[np.ndarray]) -> None:
    """A proven run of a synthetic two-player game with one component feature "gems":
    one part per array, one row per game x seat."""
    out.mkdir()
    games = sum(len(v) // 2 for v in values)
    sizes = [len(v) // 2 for v in values]
    manifest = {"game": "synthetic", "run_id": "hand", "seed": 3, "players": 2, "n_games": games,
                "strategies": [{"spec": "a"}, {"spec": "b"}], "chunk_size": sizes[0],
                "segments": [[0, sizes[0], sizes[0]], *([[sizes[0], games, sizes[1]]] if len(sizes) > 1 else [])]}
    (out / MANIFEST).write_text(json.dumps(manifest))
    first = 0
    for index, (v, w) in enumerate(zip(values, wins, strict=True)):
        n = len(v) // 2
        game = np.repeat(np.arange(first, first + n), 2)
        table = pl.DataFrame({
            "run_id": ["hand"] * (2 * n), "game": game, "seed": game.astype(np.uint64), "seat": np.tile([0, 1], n),
            "strategy": np.tile(["a", "b"], n), "score": (w * 10).astype(np.int32), "rank": (2 - w).astype(np.int8),
            "win": w.astype(np.float32), "first": np.tile([True, False], n), "position": np.tile([0, 1], n),
            "turns": np.full(2 * n, 9, np.int32), "end_reason": ["end"] * (2 * n), "gems": v.astype(np.int16)})
        tally = {"index": index, "first_game": first, "games": n, "end": first + n, "run_id": "hand", "seed": 3,
                 "rows": 2 * n}
        write_part(out / part_name(index), table, tally, layout=1)
        first += n


def test_effects_at_a_threshold_the_first_part_did_not_give(tmp_path):
    """Part 0's gems split at "present at all" (1); the whole run has gems at nearly every
    seat, so it splits them at their median: the effect is read again at that threshold
    and equals the one computed straight from every row."""
    rng = np.random.default_rng(5)
    v0 = rng.integers(0, 2, 400)  # half the seats without gems
    v1 = rng.integers(1, 5, 40_000)  # every seat with some
    values = [v0, v1]
    wins = []
    for v in values:
        w = np.zeros(len(v))
        w[0::2] = (v[0::2] >= v[1::2]).astype(float)  # more gems wins (seat 0 on a tie)
        w[1::2] = 1 - w[0::2]
        wins.append(w)
    out = tmp_path / "r"
    hand_run(out, values, wins)
    roles = FeatureRoles()
    first = analyze(out, roles=roles)
    row = first.components.row(0, named=True)
    assert row["feature"] == "gems" and row["threshold"] == 3  # the pooled median split, not 1
    part0 = pl.DataFrame({"feature": "gems", "strategy": "a", "value": [0, 1],
                          "n": [int((v0 == 0).sum()), int((v0 == 1).sum())], "wins": [0.0, 0.0]})
    assert component_thresholds(part0, ["gems"], roles) == {"gems": 1}  # what part 0 alone gives
    value, win = np.concatenate(values).reshape(-1, 2), np.concatenate(wins).reshape(-1, 2)
    strategy = np.tile([0, 1], len(value)).reshape(-1, 2)
    moments = stats.Moments(8)
    moments.add(effect_columns(strategy, value, win, 3, 2))
    expect = component_table(_hist(value, win), ["gems"], roles, games={"gems": moments})
    assert row["diff"] == pytest.approx(expect.row(0, named=True)["diff"], rel=1e-12)
    assert row["diff_low"] == pytest.approx(expect.row(0, named=True)["diff_low"], rel=1e-12)
    again = analyze(out, roles=roles)  # from the caches beside the parts
    assert again.components.equals(first.components)


def _hist(value: np.ndarray, win: np.ndarray) -> pl.DataFrame:
    """feature, strategy, value, n, wins of every seat (strategy a at seat 0, b at 1)."""
    rows = pl.DataFrame({"strategy": np.tile(["a", "b"], len(value)), "value": value.ravel().astype(np.int64),
                         "win": win.ravel()})
    return (rows.group_by("strategy", "value").agg(n=pl.len().cast(pl.Int64), wins=pl.col("win").sum())
            .select(feature=pl.lit("gems"), strategy="strategy", value="value", n="n", wins="wins"))


def test_effect_moments_equal_the_moments_of_every_games_columns():
    """Counted per distinct game, the moments are those of every game's columns: at 2 to
    6 seats, 1 to 3 strategies, shared victories, and seats whose 0 means missing."""
    rng = np.random.default_rng(1)
    for n, k in ((2, 1), (3, 2), (4, 3), (6, 2)):
        g = 3000
        strategy = rng.integers(0, k, (g, n))
        value = rng.integers(0, 6, (g, n)).astype(np.int8)
        win = np.zeros((g, n), np.float32)
        win[np.arange(g), rng.integers(0, n, g)] = 1
        tie = rng.random(g) < 0.1
        win[tie] = 0
        win[tie, 0] = win[tie, 1] = 0.5
        for threshold in (1, 3):
            for missing in (False, True):
                expect = stats.Moments(4 * k)
                expect.add(effect_columns(strategy, value, win, threshold, k, missing))
                got = effect_moments(SeatStates(strategy, win, k), value, threshold, missing)
                assert got.n == expect.n == g
                np.testing.assert_allclose(got.total, expect.total, rtol=1e-12)
                np.testing.assert_allclose(got.cross, expect.cross, rtol=1e-12)
