"""The runner and the run summary: results independent of how a run is executed,
resume, refusal of foreign run directories, seating, manifest, schema, statistics."""
from __future__ import annotations

import functools
import json
import math
import sys
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path

import numpy as np
import joblib
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import strategies
from analysis.rundir import scan_run
from analysis.summary import summarize, wilson
from helpers import snapshot, table
from simcore import runner
from simcore.batch import seating_row, seed_of_game
from simcore.errors import UserError
from simcore.games.fabryka.rules import FabrykaState
from simcore.play import play_game
from simcore.registry import get_game
from simcore.parts import part_name, tally_path
from simcore.runner import (CHUNK_BYTES, DEFAULT_CHUNK_SIZE, bytes_per_game, check_columns, default_chunk_size,
                            run, seat_orders)
from simcore.state import CHECKED_BUILD
from simcore.strategy import PythonStrategy
from strategies.mcts import GAME_DEFAULTS

FABRYKA = get_game("fabryka")
RANDOM2 = ["random", "random"]


class FirstLegal(PythonStrategy):
    """A plain-Python bot (the GIL-holding path of the batch loop): the first legal action."""

    def decide(self, observation, legal, rng):
        return legal[0]


FIRST_LEGAL = f"{FirstLegal.__module__}:FirstLegal"  # a spec workers can import
MIXED = ["random", FIRST_LEGAL]


def play(out: Path, specs=RANDOM2, sets=None, **kw):
    params = FABRYKA.params(sets=sets, players=len(specs))
    kw.setdefault("n_games", 60)
    return run(FABRYKA, params, specs, functools.partial(strategies.build_lineup, "fabryka", specs),
               out, quiet=True, **kw)


# ---- results do not depend on how the run is executed ----

@pytest.mark.parametrize("specs", [RANDOM2, MIXED], ids=["compiled", "python-bot"])
def test_results_do_not_depend_on_jobs_backend_or_chunks(tmp_path, specs):
    ways = {
        "one_job": dict(jobs=1, backend="processes"),
        "two_processes": dict(jobs=2, backend="processes", chunk_size=7),
        "two_threads": dict(jobs=2, backend="threads", chunk_size=25),
    }
    tables = {}
    for name, kw in ways.items():
        play(tmp_path / name, specs, seed=11, **kw)
        tables[name] = table(tmp_path / name)
    assert tables["one_job"].height == 60 * 2
    for name in ("two_processes", "two_threads"):
        assert_frame_equal(tables["one_job"], tables[name])
    assert len(list((tmp_path / "two_processes").glob("part-*.arrow"))) == 9  # ceil(60 / 7)


def test_different_seeds_give_different_games(tmp_path):
    play(tmp_path / "a", seed=1)
    play(tmp_path / "b", seed=2)
    assert not table(tmp_path / "a")["seed"].equals(table(tmp_path / "b")["seed"])


def test_play_game_is_game_0_of_a_fixed_run(tmp_path):
    specs = [FIRST_LEGAL, "random"]
    play(tmp_path / "r", specs, seed=7, seating="fixed", n_games=3)
    bots = strategies.build_lineup("fabryka", specs)
    trace = play_game(FABRYKA, FABRYKA.params(players=2), bots, seed=7, index=2)
    game2 = table(tmp_path / "r").filter(pl.col("game") == 2)
    assert game2["score"].to_list() == trace.scores
    assert game2["rank"].to_list() == trace.ranks
    assert game2["turns"][0] == len(trace.steps)
    assert game2["seed"][0] == trace.game_seed == seed_of_game(7, 2)


def test_a_dask_cluster_gives_the_same_results(tmp_path):
    import distributed  # the test extra installs it
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        result = play(tmp_path / "dask", seed=11, backend="dask",
                      scheduler=cluster.scheduler_address)
    assert result.manifest["chunk_size"] == 8  # 60 games, 4 chunks for each of 2 threads
    play(tmp_path / "local", seed=11, jobs=1)
    assert_frame_equal(table(tmp_path / "local"), table(tmp_path / "dask"))


def test_an_unreachable_dask_scheduler_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "DASK_TIMEOUT", 0.5)
    with pytest.raises(UserError, match="cannot reach the dask scheduler at 'tcp://127.0.0.1:9'"):
        play(tmp_path / "r", backend="dask", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "r").exists()


def test_dask_not_installed_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(UserError, match=r"needs dask.distributed: pip install 'chocosim\[dask\]'"):
        play(tmp_path / "r", backend="dask", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "r").exists()


# ---- the results table ----

def test_schema_as_a_reader_gets_it(tmp_path):
    result = play(tmp_path / "r", specs=["greedy", "random"], n_games=4, chunk_size=2)
    schema = scan_run(tmp_path / "r").collect_schema()  # two parts, read together
    state = FABRYKA.new_state(FABRYKA.params(players=2))
    fixed = {
        "run_id": pl.Enum([result.manifest["run_id"]]), "game": pl.Int64, "seed": pl.UInt64,
        "seat": pl.Int8, "strategy": pl.Enum(["greedy", "random"]), "score": pl.Int32,
        "rank": pl.Int8, "win": pl.Float32, "first": pl.Boolean, "position": pl.Int8,
        "turns": pl.Int32, "end_reason": pl.Enum(["scoring", "white_chocolate"]),
    }
    features = {name: pl.Int8 for name in state.feature_names()}  # the 45-card deck bounds them
    interim = {f"interim_{name}": pl.Int16 for name in state.interim_names()}
    assert dict(schema) == fixed | features | interim
    assert list(schema) == list(fixed) + list(features) + list(interim)


@pytest.mark.parametrize("biscuits, dtype", [(88, pl.Int16), (87, pl.Int8)])  # 128 and 127 cards
def test_features_are_int8_only_while_the_params_bound_them(tmp_path, biscuits, dtype):
    params = FABRYKA.params(sets={"deck.biscuits": biscuits}, players=2)
    run(FABRYKA, params, RANDOM2, functools.partial(strategies.build_lineup, "fabryka", RANDOM2),
        tmp_path / "r", n_games=40, quiet=True)
    df = table(tmp_path / "r")
    state = FABRYKA.new_state(params)
    assert {df.schema[f] for f in state.feature_names()} == {dtype}
    assert {df.schema[f"interim_{f}"] for f in state.interim_names()} == {pl.Int16}
    # Either way the stored counts are the cards each seat collected, game by game (the
    # seating rotates two identical bots, so seat i holds bot i in a replay too).
    for g in range(0, 40, 7):
        trace = play_game(FABRYKA, params, strategies.build_lineup("fabryka", RANDOM2), seed=0, index=g)
        for seat, collected in enumerate(trace.final_state["collected"]):
            row = df.filter(pl.col("game") == g, pl.col("seat") == seat)
            assert {k: row[f"cards_{k}"].item() for k in collected} == collected


def test_rows_are_consistent(tmp_path):
    result = play(tmp_path / "r", n_games=50, seed=3)
    df = table(tmp_path / "r")
    assert df["run_id"].cast(pl.String).unique().to_list() == [result.manifest["run_id"]]
    assert df["game"].to_list() == [g for g in range(50) for _ in range(2)]
    assert df["seat"].to_list() == [0, 1] * 50
    assert df["seed"].to_list()[::2] == [seed_of_game(3, g) for g in range(50)]
    per_game = df.group_by("game").agg(pl.col("win").sum(), pl.col("first").sum(),
                                       pl.col("rank").min())
    assert per_game["win"].to_list() == [1.0] * 50  # each game's victory shared out
    assert per_game["first"].to_list() == [1] * 50  # exactly one seat moved first
    assert per_game["rank"].to_list() == [1] * 50
    assert set(df["end_reason"].cast(pl.String)) <= set(FabrykaState.END_REASONS)
    assert (df["score"] == df["interim_round_4"]).all()  # the last round's standing is final


# ---- seating ----

def test_seat_orders_are_lexicographic_permutations():
    assert seat_orders(3, "rotate").tolist() == [
        [0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    assert seat_orders(3, "random").tolist() == seat_orders(3, "rotate").tolist()
    assert seat_orders(3, "fixed").tolist() == [[0, 1, 2]]


def strategy_at_seat_0(out: Path) -> list[str]:
    return table(out).filter(pl.col("seat") == 0)["strategy"].cast(pl.String).to_list()


def test_rotate_gives_every_order_equally_often(tmp_path):
    play(tmp_path / "r", MIXED, n_games=10, seating="rotate", chunk_size=3)
    assert strategy_at_seat_0(tmp_path / "r") == MIXED * 5


def test_fixed_keeps_the_given_order(tmp_path):
    play(tmp_path / "r", MIXED, n_games=10, seating="fixed")
    df = table(tmp_path / "r")
    assert df["strategy"].cast(pl.String).to_list() == MIXED * 10


def test_random_seating_draws_the_order_from_the_game_seed(tmp_path):
    play(tmp_path / "r", MIXED, n_games=40, seating="random", seed=5)
    rows = [seating_row(2, seed_of_game(5, g), g, 2) for g in range(40)]
    assert 0 < sum(rows) < 40  # both orders occur
    assert strategy_at_seat_0(tmp_path / "r") == [MIXED[r] for r in rows]


# ---- manifest ----

def test_manifest_content(tmp_path):
    params = FABRYKA.params(sets={"deck.almonds": 9}, players=2)
    result = play(tmp_path / "r", sets={"deck.almonds": 9}, seed=42, n_games=30, chunk_size=8)
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m == result.manifest
    assert m["game"] == "fabryka"
    assert m["params"] == params.model_dump()
    assert m["params"]["deck"]["almonds"] == 9
    assert m["strategies"] == [{"spec": "random", "class": "strategies.random.RandomStrategy",
                                "weights": {}}] * 2
    assert (m["seating"], m["seed"], m["n_games"], m["chunk_size"]) == ("rotate", 42, 30, 8)
    assert m["players"] == 2 and m["seat_orders"] == [[0, 1], [1, 0]]
    assert m["checked_build"] is CHECKED_BUILD
    assert m["version"] is None or isinstance(m["version"], str)
    assert m["git_revision"] is None or len(m["git_revision"]) >= 40
    assert datetime.fromisoformat(m["created"]).tzinfo is not None
    assert len(m["run_id"]) == 12


def test_strategy_weights_are_in_the_manifest(tmp_path):
    cls = strategies.available("fabryka")["heuristic"]
    name = "heuristic"
    key, default = next(iter(cls.WEIGHTS.items()))
    spec = f"{name}({key}={default + 1})"
    m = play(tmp_path / "r", [spec, "random"], n_games=2).manifest
    assert m["strategies"][0]["spec"] == spec
    assert m["strategies"][0]["weights"] == {**cls.WEIGHTS, key: default + 1}


def test_the_run_id_identifies_the_run_not_the_directory(tmp_path):
    a = play(tmp_path / "a", seed=1).manifest["run_id"]
    assert play(tmp_path / "b", seed=1, jobs=2, chunk_size=9).manifest["run_id"] == a
    assert play(tmp_path / "c", seed=2).manifest["run_id"] != a


# ---- chunking ----

def test_default_chunk_size():
    assert default_chunk_size(20_000_000, 2, 200) == DEFAULT_CHUNK_SIZE
    assert default_chunk_size(1000, 2, 200) == 125  # 4 chunks per job
    assert default_chunk_size(20_000_000, 2, 10**6) == CHUNK_BYTES // 10**6  # wide rows
    assert default_chunk_size(1, 8, 200) == 1


# ---- resume ----

def test_rerun_resumes_and_equals_an_uninterrupted_run(tmp_path):
    whole = tmp_path / "whole"
    play(whole, n_games=50, chunk_size=10, seed=9)
    resumed = tmp_path / "resumed"
    play(resumed, n_games=50, chunk_size=10, seed=9)
    # An interrupted run: parts 1 and 3 never finished, one was being written.
    (resumed / part_name(1)).unlink()
    (resumed / part_name(3)).rename(resumed / f".{part_name(3)}.123-456.tmp")
    kept = {name: data for name, data in snapshot(resumed).items() if name.startswith("part-")}

    result = play(resumed, n_games=50, chunk_size=10, seed=9)
    assert (result.played, result.resumed) == (20, 30)
    assert sorted(p.name for p in resumed.iterdir()) == sorted(
        ["manifest.json"] + [n for i in range(5) for n in (part_name(i), tally_path(Path(part_name(i))).name)])
    assert {n: d for n, d in snapshot(resumed).items() if n in kept} == kept  # finished parts untouched
    assert_frame_equal(table(whole), table(resumed))

    again = play(resumed, n_games=50, chunk_size=10, seed=9)
    assert (again.played, again.resumed) == (0, 50)


def test_a_run_resumed_by_other_code_says_so(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=20, chunk_size=10)
    manifest = json.loads((out / "manifest.json").read_text())
    started = {**manifest, "git_revision": "0" * 40, "version": "0.0.1"}
    (out / "manifest.json").write_text(json.dumps(started))
    (out / part_name(1)).unlink()

    result = play(out, n_games=20, chunk_size=10)
    resumed_by = result.manifest["resumed_by"]
    assert [{k: r[k] for k in runner.BUILD} for r in resumed_by] == [
        {k: manifest[k] for k in runner.BUILD}]
    assert json.loads((out / "manifest.json").read_text()) == result.manifest
    (out / part_name(1)).unlink()
    assert play(out, n_games=20, chunk_size=10).manifest["resumed_by"] == resumed_by  # once


def test_a_finished_run_rerun_by_other_code_is_not_marked_resumed(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=20, chunk_size=10)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "git_revision": "0" * 40}))
    assert "resumed_by" not in play(out, n_games=20, chunk_size=10).manifest


def test_a_run_resumed_by_the_same_code_keeps_its_manifest(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=20, chunk_size=10)
    before = (out / "manifest.json").read_bytes()
    (out / part_name(0)).unlink()
    play(out, n_games=20, chunk_size=10)
    assert (out / "manifest.json").read_bytes() == before


def test_resume_keeps_the_directory_chunk_size(tmp_path):
    play(tmp_path / "r", n_games=30, chunk_size=10)
    (tmp_path / "r" / part_name(2)).unlink()
    result = play(tmp_path / "r", n_games=30, chunk_size=7, jobs=2)
    assert (result.played, result.manifest["chunk_size"]) == (10, 10)
    assert len(list((tmp_path / "r").glob("part-*.arrow"))) == 3


# ---- extension ----

@pytest.mark.parametrize("first, chunk", [(20, 10), (26, 8)], ids=["whole-chunks", "ragged-last-chunk"])
def test_a_run_extended_to_more_games_equals_a_run_of_that_many(tmp_path, first, chunk):
    whole = tmp_path / "whole"
    play(whole, n_games=50, seed=3, chunk_size=chunk)
    grown = tmp_path / "grown"
    play(grown, n_games=first, seed=3, chunk_size=chunk)
    kept = snapshot(grown)
    result = play(grown, n_games=50, seed=3, chunk_size=chunk)
    assert (result.played, result.resumed, result.manifest["n_games"]) == (50 - first, first, 50)
    assert result.manifest["segments"] == [[0, first], [first, 50, chunk]]
    assert result.manifest["run_id"] == json.loads((whole / "manifest.json").read_text())["run_id"]
    assert {n: d for n, d in snapshot(grown).items() if n in kept and n != "manifest.json"} == \
        {n: d for n, d in kept.items() if n != "manifest.json"}  # its games untouched
    assert_frame_equal(table(whole), table(grown))
    assert play(grown, n_games=50, seed=3).played == 0  # and resumed as one run


def test_an_interrupted_extension_resumes(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=20, chunk_size=10)
    play(out, n_games=40, chunk_size=10)
    (out / part_name(3)).unlink()
    result = play(out, n_games=40)
    assert (result.played, result.resumed) == (10, 30)
    assert result.manifest["segments"] == [[0, 20], [20, 40, 10]]


def test_an_extension_is_chunked_for_its_own_size(tmp_path):
    """A run begun with one game (a pilot) and extended to many plays the extension in
    chunks sized for it, not in parts of one game; the games are those of one run."""
    out = tmp_path / "r"
    play(out, n_games=2, seed=5, jobs=2)  # two parts of one game
    result = play(out, n_games=402, seed=5, jobs=2)
    start, end, size = result.manifest["segments"][1]
    assert (start, end) == (2, 402) and size == math.ceil(400 / (2 * 4))
    assert len(list(out.glob("part-*.arrow"))) == 2 + 8
    whole = tmp_path / "whole"
    play(whole, n_games=402, seed=5)
    assert_frame_equal(table(whole), table(out))


def test_rotate_rounds_up_to_whole_rotations_and_says_so(tmp_path, capsys):
    result = play(tmp_path / "r", n_games=7)  # two seat orders
    assert (result.requested, result.manifest["n_games"], result.played) == (7, 8, 8)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "7 games rounded up to 8" in err
    assert play(tmp_path / "fixed", n_games=7, seating="fixed").manifest["n_games"] == 7


# ---- refusals: never mixed, never overwritten ----

@pytest.mark.parametrize("change, message", [
    (dict(seed=8), "seed is 7 there, 8 here"),
    (dict(n_games=18), "holds a run of 20 games; n_games = 18 would drop games"),
    (dict(seating="fixed"), "seating is 'rotate' there, 'fixed' here"),
    (dict(sets={"deck.almonds": 9}), "params.deck.almonds is 8 there, 9 here"),
    (dict(specs=["random", "random()"]), "strategies are random, random there, random, random() here"),
])
def test_a_directory_of_another_run_is_refused_and_left_intact(tmp_path, change, message):
    out = tmp_path / "r"
    play(out, seed=7, n_games=20)
    (out / part_name(0)).unlink()  # even an unfinished run is not resumed by another one
    before = snapshot(out)
    with pytest.raises(UserError, match="holds a (different run|run of)") as e:
        play(out, **{"seed": 7, "n_games": 20, **change})
    assert message in str(e.value)
    assert snapshot(out) == before


def test_a_non_empty_directory_without_manifest_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty and has no manifest.json"):
        play(tmp_path)
    assert snapshot(tmp_path) == {"notes.txt": b"mine"}


def test_an_existing_file_is_not_a_run_directory(tmp_path):
    (tmp_path / "x").write_text("mine")
    with pytest.raises(UserError, match="not a directory"):
        play(tmp_path / "x")
    assert (tmp_path / "x").read_text() == "mine"


def test_an_empty_directory_is_used(tmp_path):
    assert play(tmp_path, n_games=4).played == 4


def test_a_run_interrupted_while_writing_its_manifest_starts_afresh(tmp_path):
    (tmp_path / ".manifest.json.99-1.tmp").write_text("{")
    assert play(tmp_path, n_games=4, chunk_size=4).played == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", part_name(0), "part-00000.tally.json"]


def test_a_manifest_that_is_not_ours_is_refused(tmp_path):
    (tmp_path / "manifest.json").write_text('{"name": "something else"}')
    with pytest.raises(UserError, match="not a chocosim manifest"):
        play(tmp_path)
    assert snapshot(tmp_path) == {"manifest.json": b'{"name": "something else"}'}


@pytest.mark.parametrize("kw, message", [
    (dict(seating="diagonal"), "seating = 'diagonal': allowed are rotate, fixed, random"),
    (dict(backend="gpu"), "backend = 'gpu': allowed are auto, processes, threads, dask"),
    (dict(backend="dask"), "scheduler address goes with backend 'dask' and only with it"),
    (dict(scheduler="tcp://localhost:8786"), "backend = 'auto', scheduler = 'tcp://localhost:8786'"),
    (dict(n_games=0), "n_games = 0: must be at least 1"),
    (dict(jobs=0), "jobs = 0: must be at least 1"),
    (dict(seed=-1), "seed = -1"),
    (dict(chunk_size=0), "chunk_size = 0"),
])
def test_bad_arguments_are_user_errors_and_write_nothing(tmp_path, kw, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        play(tmp_path / "r", **kw)
    assert not (tmp_path / "r").exists()


def test_a_lineup_of_the_wrong_size_is_refused(tmp_path):
    params = FABRYKA.params(players=2)
    specs = ["random"] * 3
    with pytest.raises(UserError, match="seats 2 players, but 3 strategies"):
        run(FABRYKA, params, specs, functools.partial(strategies.build_lineup, "fabryka", specs),
            tmp_path / "r", n_games=2, quiet=True)


# ---- summary ----

def test_wilson_interval_known_value():
    low, high = wilson(60, 100)
    assert (round(low, 4), round(high, 4)) == (0.5020, 0.6906)


def write_run(out: Path, rows: dict, n_games: int) -> None:
    """A hand-written run directory, to check the summary against known answers."""
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"game": "toy", "players": 2, "n_games": n_games, "seed": 0,
                                                          "strategies": [{"spec": "a"}, {"spec": "b"}]}))
    df = pl.DataFrame(rows).with_columns(pl.col("strategy", "end_reason").cast(pl.Categorical),
                                         pl.col("seat").cast(pl.Int8), pl.col("win").cast(pl.Float32))
    df.head(4).write_ipc(out / part_name(0))
    df.slice(4).write_ipc(out / part_name(1))


def test_summary_known_answers(tmp_path):
    # Four games of two seats: seat 0 wins games 0 and 3, seat 1 wins game 1, game 2 is shared.
    write_run(tmp_path / "r", {
        "game": [0, 0, 1, 1, 2, 2, 3, 3],
        "seat": [0, 1] * 4,
        "strategy": ["a", "b", "b", "a", "a", "b", "b", "a"],
        "score": [10, 4, 3, 9, 5, 5, 8, 2],
        "win": [1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 1.0, 0.0],
        "end_reason": ["scoring"] * 2 + ["white"] * 2 + ["scoring"] * 4,
    }, n_games=4)
    s = summarize(tmp_path / "r")
    assert s.games == 4 and s.complete
    seat = s.by_seat
    assert seat["seat"].to_list() == [0, 1]
    assert seat["games"].to_list() == [4, 4]
    assert seat["wins"].to_list() == [2.5, 1.5]
    assert seat["win_rate"].to_list() == [0.625, 0.375]
    assert seat["mean_score"].to_list() == [26 / 4, 20 / 4]
    low, high = wilson(2.5, 4)
    assert seat["ci_low"][0] == pytest.approx(low) and seat["ci_high"][0] == pytest.approx(high)
    strat = s.by_strategy
    assert strat["strategy"].to_list() == ["a", "b"]
    assert strat["plays"].to_list() == [4, 4]
    assert strat["wins"].to_list() == [2.5, 1.5]  # a won games 0 and 1 and shared game 2
    assert strat["mean_score"].to_list() == [(10 + 9 + 5 + 2) / 4, (4 + 3 + 5 + 8) / 4]
    d = s.draws.row(0, named=True)
    assert (d["games"], d["shared"], d["rate"]) == (4, 1, 0.25)
    assert (d["ci_low"], d["ci_high"]) == pytest.approx(wilson(1, 4))
    assert s.end_reasons.rows() == [("scoring", 3, 0.75), ("white", 1, 0.25)]


def test_summary_of_an_incomplete_run(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=40, chunk_size=10)
    (out / part_name(0)).unlink()
    s = summarize(out)
    assert (s.games, s.complete) == (30, False)
    assert s.by_seat["games"].to_list() == [30, 30]


def test_summary_matches_the_table(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=200, seed=4)
    df = table(out)
    s = summarize(out)
    wins0 = float(df.filter(pl.col("seat") == 0)["win"].cast(pl.Float64).sum())
    assert s.by_seat["wins"][0] == pytest.approx(wins0)
    shared = df.filter((pl.col("win") > 0) & (pl.col("win") < 1))["game"].n_unique()
    assert s.draws["shared"][0] == shared
    assert s.end_reasons["games"].sum() == 200


@pytest.mark.parametrize("damage, message", [
    (lambda out: (out / part_name(0)).write_bytes(b"not a part"), "unreadable"),
    (lambda out: [p.unlink() for p in out.glob("part-*")], "no results"),
    (lambda out: (out / "manifest.json").unlink(), "not a run directory"),
    (lambda out: (out / "manifest.json").write_text("{"), "manifest.json is unreadable"),
])
def test_unreadable_results_are_user_errors(tmp_path, damage, message):
    out = tmp_path / "r"
    play(out, n_games=10)
    damage(out)
    with pytest.raises(UserError, match=message):
        summarize(out)


def test_a_default_chunk_is_bounded_for_the_widest_rows():
    widest = bytes_per_game(6, 256, 64)  # MAX_PLAYERS, MAX_FEATURES, MAX_INTERIM
    assert default_chunk_size(20_000_000, 2, widest) * widest <= CHUNK_BYTES


def test_a_feature_that_shadows_a_base_column_is_refused():
    class Shadowing:
        def feature_names(self):
            return ["cards", "turns"]

        def interim_names(self):
            return ["r1"]

    with pytest.raises(UserError, match="clash: turns"):
        check_columns(Shadowing())


# ---- default workers: threads for compiled bots; a short run plays in this process ----

def test_auto_plays_compiled_bots_on_threads_and_a_python_bot_on_processes(tmp_path, monkeypatch):
    used = []
    real = runner.workers

    def recording(backend, jobs, scheduler):
        used.append(backend)
        return real(backend, jobs, scheduler)

    monkeypatch.setattr(runner, "workers", recording)
    play(tmp_path / "compiled", n_games=40)
    play(tmp_path / "python", specs=["random", FIRST_LEGAL], n_games=4, jobs=1)
    assert used == ["threads", "processes"]


def test_a_short_default_process_run_starts_no_workers_and_a_long_one_does(tmp_path, monkeypatch):
    started = []
    real = joblib.Parallel

    def counting(*args, **kwargs):
        started.append(kwargs["n_jobs"])
        return real(*args, **kwargs)

    monkeypatch.setattr(joblib, "Parallel", counting)
    monkeypatch.setattr(runner, "workers", lambda *a: nullcontext(2))  # two cores
    play(tmp_path / "short", n_games=400, seed=5, backend="processes")  # milliseconds: workers would not pay
    assert started == []
    monkeypatch.setattr(runner, "WORKERS_START_S", 0.0)  # as if every run were long
    play(tmp_path / "long", n_games=400, seed=5, backend="processes")
    assert started == [2]
    assert_frame_equal(table(tmp_path / "short"), table(tmp_path / "long"))
    # The first chunk was played here, the other seven by the workers.
    assert len(list((tmp_path / "long").glob("part-*.arrow"))) == 8


def test_wilson_is_the_interval_of_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    successes = np.array([0, 1, 2.5, 60, 999.5, 1000])
    n = np.array([10, 10, 4, 100, 1000, 1000])
    low, high = wilson(successes, n)
    want_low, want_high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    np.testing.assert_allclose(low, want_low, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(high, want_high, rtol=1e-12, atol=1e-15)


def test_a_run_of_an_older_bot_without_a_new_weight_resumes_at_its_default(tmp_path):
    """A weight added to a bot (mcts's peek) is missing from the runs it played before.
    The same bot at the weight's default resumes and extends such a run; another value
    of it, or another value of a weight the run has, is refused."""
    specs = ["mcts(iterations=4, depth=6)", "random"]
    out = tmp_path / "r"
    play(out, specs, n_games=4, seed=2)
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["strategies"][0]["weights"]["peek"]
    path.write_text(json.dumps(manifest))
    assert play(out, specs, n_games=8, seed=2).played == 4
    with pytest.raises(UserError, match=r"mcts\(iterations=4, depth=6, peek=1\), random here"):
        play(out, ["mcts(iterations=4, depth=6, peek=1)", "random"], n_games=8, seed=2)
    manifest = json.loads(path.read_text())
    manifest["strategies"][0]["weights"]["c"] = 0.5
    path.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="strategy weights differ"):
        play(out, specs, n_games=12, seed=2)


@pytest.mark.parametrize("weight", ["tuned", "stop"])
def test_a_run_of_an_older_bot_resumes_only_if_a_new_weight_plays_as_it_did(tmp_path, weight):
    """mcts's `tuned` came later and changed Fabryka's search (the tuned heuristic
    guides it now), and `stop` later still (a search ends once its choice is settled,
    which leaves the bot's stream elsewhere). A Fabryka run that lacks the weight
    resumes only where the weight's value is the one played before it existed (0): the
    default bot is refused. (An old run's spec cannot name the 0; that half checks the
    rule itself.)"""
    for specs, resumes in (([f"mcts(iterations=4, depth=6, {weight}=0)", "random"], True),
                           (["mcts(iterations=4, depth=6)", "random"], False)):
        out = tmp_path / specs[0]
        play(out, specs, n_games=4, seed=2)
        path = out / "manifest.json"
        manifest = json.loads(path.read_text())
        del manifest["strategies"][0]["weights"][weight]
        path.write_text(json.dumps(manifest))
        if resumes:
            assert play(out, specs, n_games=8, seed=2).played == 4
        else:
            with pytest.raises(UserError, match="strategy weights differ"):
                play(out, specs, n_games=8, seed=2)


def test_a_games_own_rollout_cut_off_is_recorded_and_an_older_run_without_it_is_not_resumed(tmp_path):
    """Alley Cat's search cuts its rollouts short by default at 2-4 players: the manifest
    records the cut-off, so a run an older chocosim wrote with `depth` -1 (then: to the
    end) is not resumed with it. Solo, and in a game without a cut-off of its own, it
    records -1 as before, and the old runs resume."""
    for name, players, recorded in (("alleycat", 2, float(GAME_DEFAULTS["alleycat"]["depth"][2])),
                                    ("alleycat", 1, -1.0), ("fabryka", 2, -1.0)):
        game = get_game(name)
        specs = ["mcts(iterations=2)"] + ["random"] * (players - 1)
        out = tmp_path / f"{name}{players}"
        lineup = functools.partial(strategies.build_lineup, game.name, specs)
        run(game, game.params(players=players), specs, lineup, out, n_games=2, seed=2, quiet=True)
        path = out / "manifest.json"
        manifest = json.loads(path.read_text())
        assert manifest["strategies"][0]["weights"]["depth"] == recorded
        manifest["strategies"][0]["weights"]["depth"] = -1.0
        path.write_text(json.dumps(manifest))
        if recorded == -1:
            assert run(game, game.params(players=players), specs, lineup, out, n_games=4, seed=2,
                       quiet=True).played == 2
        else:
            with pytest.raises(UserError, match="strategy weights differ"):
                run(game, game.params(players=players), specs, lineup, out, n_games=4, seed=2, quiet=True)


def test_a_run_of_an_older_bot_resumes_where_the_new_weights_default_is_the_old_play(tmp_path):
    """Enemy Chocolatier's default search stayed untuned: its old runs that lack
    `tuned` resume as they are."""
    game = get_game("enemy_chocolatier")
    specs = ["mcts(iterations=2, depth=4)", "random"]
    out = tmp_path / "enemy"
    lineup = functools.partial(strategies.build_lineup, game.name, specs)
    run(game, game.params(players=2), specs, lineup, out, n_games=4, seed=2, quiet=True)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["strategies"][0]["weights"]["tuned"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert run(game, game.params(players=2), specs, lineup, out, n_games=8, seed=2, quiet=True).played == 4


def test_a_run_of_an_older_chocosim_without_a_new_param_resumes_at_its_default(tmp_path):
    """compensation.points came after runs were written: an old manifest lacks it. The
    same run at the param's default resumes and extends; another value is refused."""
    out = tmp_path / "r"
    play(out, n_games=20, seed=2)
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["params"]["compensation"]
    path.write_text(json.dumps(manifest))
    assert play(out, n_games=40, seed=2).played == 20
    with pytest.raises(UserError, match=r"params.compensation.points is None there, \[0, 2\] here"):
        play(out, n_games=40, seed=2, sets={"compensation.points": [0, 2]})
