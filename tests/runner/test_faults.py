"""Faults of a run lose nothing: disk full, an output directory that cannot be created,
truncated or corrupt parts, a user's bot that fails, the run's process killed. And the
tallies in the parts' footers: the summary read off them equals the one read off rows."""
from __future__ import annotations

import errno
import functools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import simcore
import strategies
from analysis.cli import main
from analysis.rundir import open_run
from analysis.summary import summarize
from helpers import part_files, table
from simcore import chunks, runner
from simcore.batch import play_batch, result_arrays, tally_size
from simcore.errors import UserError
from simcore.registry import get_game
from simcore.parts import TALLY_KEY, part_name, read_part, read_tally, tally_path
from simcore.runner import BotFailure, run
from simcore.strategy import PythonStrategy, RngView

FABRYKA = get_game("fabryka")
RANDOM2 = ["random", "random"]


class Raises(PythonStrategy):
    """Fails at its first decision of the third game it plays (it tells games apart by
    the draw pile, which only shrinks during a game). Slotted, so it has no __dict__: the
    runner must name it without replacing anything on the instance."""

    __slots__ = ("games", "last")

    def __init__(self):
        super().__init__()
        self.games, self.last = 0, None

    def decide(self, observation, legal, rng):
        pile = observation["pile"]
        if self.last is None or pile > self.last:
            self.games += 1
        self.last = pile
        if self.games == 3:
            raise ValueError("boom")
        return legal[0]


class Illegal(PythonStrategy):
    def decide(self, observation, legal, rng):
        return max(legal) + 1


class ConsultsIllegal(PythonStrategy):
    """Asks an Illegal bot for a move while it prepares, from its second preparation on
    (the first is run()'s check of the lineup, in the calling process)."""

    prepared = 0

    def prepare(self, proto):
        type(self).prepared += 1
        if type(self).prepared > 1:
            Illegal().choose_action(proto, RngView.seeded(1))

    def decide(self, observation, legal, rng):
        return legal[0]


RAISES = f"{__name__}:Raises"
ILLEGAL = f"{__name__}:Illegal"


def play(out: Path, specs=RANDOM2, **kw):
    kw.setdefault("n_games", 60)
    params = FABRYKA.params(players=len(specs))
    return run(FABRYKA, params, specs, functools.partial(strategies.build_lineup, "fabryka", specs),
               out, quiet=True, **kw)


# ---- tallies ----

@pytest.mark.parametrize("specs", [["random", "greedy"], ["greedy", "greedy"]])  # one label for two seats
def test_the_summary_off_the_tallies_equals_the_summary_off_the_rows(tmp_path, specs):
    out = tmp_path / "r"
    play(out, specs=specs, n_games=300, chunk_size=70, seed=5, seating="random")
    arrow = sorted(out.glob("part-*.arrow"))
    assert all(read_tally(p) is not None for p in arrow)
    tallied = summarize(out)
    for p in arrow:  # parts without their tally, as when made by hand (stored whole)
        read_part(p).write_ipc(p)
        tally_path(p).unlink()
        assert read_tally(p) is None
    scanned = summarize(out)
    for p in arrow:  # the same rows as an older chocosim wrote them: Parquet, no tally
        read_part(p).write_parquet(p.with_suffix(".parquet"))
        p.unlink()
    legacy = summarize(out)
    for name in ("by_seat", "by_position", "by_strategy", "draws", "end_reasons"):
        assert_frame_equal(getattr(tallied, name), getattr(scanned, name), check_dtypes=False)
        assert_frame_equal(getattr(tallied, name), getattr(legacy, name), check_dtypes=False)
    assert tallied.games == scanned.games == legacy.games == 300


def test_a_legacy_parquet_part_is_read_with_the_tally_in_its_footer(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=60, chunk_size=30)
    for p in sorted(out.glob("part-*.arrow")):
        tally = read_tally(p)
        read_part(p).write_parquet(p.with_suffix(".parquet"), metadata={TALLY_KEY: json.dumps(tally)})
        p.unlink()
        tally_path(p).unlink()
        assert read_tally(p.with_suffix(".parquet")) == tally
    assert summarize(out).games == 60
    assert open_run(out).parts == sorted(out.glob("part-*.parquet"))
    with pytest.raises(UserError, match="Parquet parts of an older chocosim: .* cannot be resumed"):
        play(out, n_games=90, chunk_size=30)


def legacy_tally(tally: dict) -> dict:
    """A tally as chocosim 0.3 and older wrote it: no seed, index, end or checksum (nor the
    layout of a compact part: those parts were stored whole)."""
    return {k: v for k, v in tally.items() if k not in ("seed", "index", "end", "checksum", "layout", "widen")}


def test_a_run_of_categorical_parts_is_read_but_not_extended(tmp_path):
    # chocosim 0.2 wrote run_id, strategy and end_reason as categoricals: such a run
    # still summarizes, but a part of enums beside them would not read with them.
    out = tmp_path / "r"
    play(out, n_games=60, chunk_size=30)
    before = summarize(out)
    for p in sorted(out.glob("part-*.arrow")):
        tally = read_tally(p)
        old = read_part(p).with_columns(pl.col("run_id", "strategy", "end_reason").cast(pl.Categorical))
        old.write_ipc(p)
        tally_path(p).write_text(json.dumps({**legacy_tally(tally), "bytes": p.stat().st_size}))
    manifest = (out / "manifest.json").read_text()
    for name in ("by_seat", "by_strategy", "end_reasons"):
        assert_frame_equal(getattr(summarize(out), name), getattr(before, name))
    with pytest.raises(UserError, match="run_id is Categorical there, Enum here: an older chocosim"
                                        ".* cannot be resumed or extended"):
        play(out, n_games=90, chunk_size=30)
    assert (out / "manifest.json").read_text() == manifest  # refused before anything was written
    assert len(list(out.glob("part-*.arrow"))) == 2


def test_the_position_table_counts_the_rows_of_each_position(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=200, seed=2)
    df = table(out)
    by_position = summarize(out).by_position
    for position in (0, 1):
        rows = df.filter(pl.col("position") == position)
        got = by_position.filter(pl.col("position") == position).row(0, named=True)
        assert got["games"] == rows.height == 200
        assert got["wins"] == pytest.approx(float(rows["win"].cast(pl.Float64).sum()))
        assert got["mean_score"] == pytest.approx(rows["score"].mean())


def counts_of_rows(a: dict, n: int, n_reasons: int) -> np.ndarray:
    """What play_batch's tally should hold, counted from the rows it wrote."""
    counts = np.zeros((n, n, n, n_reasons, 4))
    seat = np.tile(np.arange(n), len(a["game_index"]))
    cell = (seat, a["position"], a["seat_strategy"], np.repeat(a["end_reason"], n))
    win = a["win"].astype(np.float64)
    for k, values in enumerate((np.ones_like(win), win, a["score"], np.where((win > 0) & (win < 1), win, 0))):
        np.add.at(counts[..., k], cell, values)
    return counts.ravel()


@pytest.mark.parametrize("game, specs, params", [
    ("fabryka", ["random", "greedy"], {}),
    ("enemy_chocolatier", ["heuristic", "random", "heuristic"], {"players": 3}),
    ("manfredini", ["random", "random"], {}),
    ("alleycat", ["heuristic"], {"players": 1}),
], ids=["fabryka", "enemy-3p", "manfredini", "alleycat-solo"])
def test_the_loop_tally_equals_a_count_of_its_rows(game, specs, params):
    spec = get_game(game)
    state = spec.new_state(spec.params(**params))
    n = state.n_players
    a = result_arrays(state, 60)
    counts = np.zeros(tally_size(state))
    play_batch(state, strategies.build_lineup(game, specs), runner.seat_orders(n, "rotate"), 2, 9, 0, 60,
               **a, tally=counts)
    assert np.array_equal(counts, counts_of_rows(a, n, len(type(state).END_REASONS)))
    assert counts[0::4].sum() == 60 * n


def test_a_grouping_feature_is_tallied_per_value():
    class Job:
        specs = ("a", "b")
        run_id = "r1"
        seed = 9

    class State:
        n_players = 2
        END_REASONS = ("end",)

        def feature_names(self):
            return ["cards", "target"]

    a = {"game_index": np.arange(3), "seat_strategy": np.array([0, 1, 1, 0, 0, 1], np.int8),
         "position": np.array([0, 1, 0, 1, 0, 1], np.int8), "end_reason": np.zeros(3, np.int8),
         "win": np.array([1, 0, 0.5, 0.5, 0, 1], np.float32), "score": np.array([5, 3, 4, 4, 1, 6], np.int32),
         "features": np.array([[0, 0, 1, 1, 2, 2], [7, 7, 2, 2, 7, 7]], np.int16)}  # one row per feature
    tally = chunks._tally(Job(), State(), a, 4, 0, counts_of_rows(a, 2, 1))
    assert tally["group"] == {"key": "target", "cells": [[2, 2, 1.0, 8], [7, 4, 2.0, 15]]}
    cells = {tuple(c[:4]): c[4:] for c in tally["cells"]}
    assert cells[(0, 0, "a", "end")] == [2, 1.0, 6, 0.0]  # games 0 and 2: a in seat 0
    assert cells[(0, 0, "b", "end")] == [1, 0.5, 4, 0.5]  # game 1: shared
    assert (tally["run_id"], tally["first_game"], tally["games"], tally["rows"]) == ("r1", 0, 3, 6)
    assert (tally["seed"], tally["index"], tally["end"]) == (9, 4, 3)


# ---- damaged parts: named, and played again by a re-run ----

@pytest.mark.parametrize("damage", [
    lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),  # truncated
    lambda p: p.write_bytes(b"not a part at all"),
    lambda p: p.write_bytes((p.parent / part_name(0)).read_bytes()),  # another chunk's part
], ids=["truncated", "garbage", "wrong-chunk"])
def test_a_rerun_plays_a_damaged_part_again(tmp_path, capsys, damage):
    whole = tmp_path / "whole"
    play(whole, n_games=50, chunk_size=10, seed=3)
    out = tmp_path / "r"
    play(out, n_games=50, chunk_size=10, seed=3)
    damage(out / part_name(2))
    capsys.readouterr()
    result = play(out, n_games=50, chunk_size=10, seed=3)
    assert (result.played, result.resumed) == (10, 40)
    assert str(out / part_name(2)) in capsys.readouterr().err
    assert part_files(out) == part_files(whole)


def test_a_truncated_part_is_named_by_the_summary_and_the_report(tmp_path):
    out = tmp_path / "r"
    play(out, n_games=30, chunk_size=10)
    p = out / part_name(1)
    p.write_bytes(p.read_bytes()[:-100])
    with pytest.raises(UserError, match=f"results part {p} is unreadable"):
        summarize(out)
    with pytest.raises(UserError, match=f"results part {p} is unreadable"):
        open_run(out)


# ---- disk full, no directory ----

@pytest.mark.parametrize("error", [
    OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    pl.exceptions.ComputeError("ipc: File out of specification: underlying IO error: "
                               "No space left on device (os error 28)"),  # as polars says it
], ids=["oserror", "polars"])
def test_disk_full_keeps_the_finished_parts_and_a_rerun_resumes(tmp_path, monkeypatch, error):
    whole = tmp_path / "whole"
    play(whole, n_games=50, chunk_size=10, seed=1)
    out = tmp_path / "r"
    write = pl.DataFrame.write_ipc

    def full_at_part_3(self, path, **kw):
        if Path(path).name.startswith(f".{part_name(3)}"):
            Path(path).write_bytes(b"half a part")  # what a full disk leaves
            raise error
        return write(self, path, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_ipc", full_at_part_3)
    with pytest.raises(UserError, match=f"cannot write {out / part_name(3)}: No space left on device[ ;]"):
        play(out, n_games=50, chunk_size=10, seed=1, jobs=1)
    assert sorted(part_files(out)) == sorted(n for i in range(3) for n in (part_name(i), tally_path(Path(part_name(i))).name))
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no half part left
    monkeypatch.undo()
    assert play(out, n_games=50, chunk_size=10, seed=1).played == 20
    assert part_files(out) == part_files(whole)


# Enemy Chocolatier with a win far out of reach and rich recipes: money passes 32,767.
RICH = {"income.base": 100, "win.points": 10000, "sim.round_cap": 2000, "income.cash_per_point": 1000,
        "recipes": [[40, 40, 40, 40]] * 4}


def test_a_counter_beyond_int16_is_one_line_naming_it_and_the_game(tmp_path):
    spec = get_game("enemy_chocolatier")
    seats = ["random", "random"]
    with pytest.raises(UserError, match=r"EnemyState: money = \d+ in game \d+ does not fit the int16"):
        run(spec, spec.params(sets=RICH), seats, functools.partial(strategies.build_lineup, spec.name, seats),
            tmp_path / "r", n_games=8, jobs=1, quiet=True)
    assert not list((tmp_path / "r").glob("part-*"))  # nothing half-written
    from analysis.experiments import tune
    with pytest.raises(UserError, match="does not fit the int16"):  # rule tuning explores such params
        tune.play(spec, spec.params(sets=RICH), seats, 8, seed=1)


def test_an_output_directory_that_cannot_be_created_is_a_user_error(tmp_path):
    (tmp_path / "file").write_text("keep me")
    with pytest.raises(UserError, match="cannot create the run directory .*file/run: Not a directory"):
        play(tmp_path / "file" / "run")
    assert (tmp_path / "file").read_text() == "keep me"


# ---- a user's bot that fails ----

@pytest.mark.parametrize("backend", ["processes", "threads"])
def test_a_bot_that_raises_is_named_with_its_seat_and_game(tmp_path, backend):
    # Rotation: game 2 has strategy i in seat i, so the Python bot sits in seat 1.
    with pytest.raises(BotFailure) as e:
        play(tmp_path / "r", specs=["random", RAISES], n_games=40, chunk_size=20, jobs=1,
             backend=backend)
    assert str(e.value) == f"bot {RAISES} (seat 1) raised ValueError: boom in game 2 of the run"
    assert "raise ValueError(\"boom\")" in e.value.details


def test_a_bot_that_returns_an_illegal_action_is_named(tmp_path):
    with pytest.raises(BotFailure, match=rf"bot {ILLEGAL} \(seat 1\) returned \d+, not one of the "
                       r"legal actions \[.*\] in game 0 of the run"):
        play(tmp_path / "r", specs=["random", ILLEGAL], n_games=10, jobs=1)


def test_a_bot_failing_outside_a_run_is_one_line_too(capsys):
    with pytest.raises(SystemExit) as e:
        main(["play", "fabryka", "--seats", f"{ILLEGAL},random"])
    lines = [line for line in capsys.readouterr().err.splitlines()
             if not line.startswith("chocosim: warning: this is the checked build")]
    assert e.value.code == 2 and len(lines) == 1
    assert re.fullmatch(r"chocosim: error: bot Illegal \(seat 0\) returned \d+, not one of the legal actions \[.*\]",
                        lines[0])


def test_a_bot_consulted_by_a_bot_of_the_lineup_is_named_by_its_class(tmp_path, monkeypatch):
    monkeypatch.setattr(ConsultsIllegal, "prepared", 0)
    with pytest.raises(BotFailure, match=r"^bot Illegal \(seat 0\) returned \d+, not one of the legal "
                       r"actions \[.*\] in game 0 of the run$"):
        play(tmp_path / "r", specs=["random", f"{__name__}:ConsultsIllegal"], n_games=10, jobs=1,
             backend="threads")


def test_a_failing_bot_is_one_line_and_its_traceback_only_with_debug(tmp_path, capsys):
    argv = ["run", "fabryka", "--seats", f"random,{RAISES}", "--games", "20", "--jobs", "1",
            "--quiet", "--out"]
    with pytest.raises(SystemExit) as e:
        main([*argv, str(tmp_path / "a")])
    lines = [line for line in capsys.readouterr().err.splitlines()
             if not line.startswith("chocosim: warning: this is the checked build")]
    assert e.value.code == 2
    assert lines == [f"chocosim: error: bot {RAISES} (seat 1) raised ValueError: boom in game 2 of the run"]
    with pytest.raises(SystemExit) as e:
        main(["--debug", *argv, str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "Traceback" in err and 'raise ValueError("boom")' in err


# ---- the run's process killed ----

KILLED_RUN = textwrap.dedent("""
    import functools, sys
    import strategies
    from simcore.registry import get_game
    from simcore.runner import run
    spec = get_game("fabryka")
    seats = ["heuristic", "heuristic"]
    run(spec, spec.params(players=2), seats, functools.partial(strategies.build_lineup, "fabryka", seats),
        sys.argv[1], n_games=50_000_000, jobs=2, backend="processes", chunk_size=20_000, quiet=True)
""")


def children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.append(int(entry.name))
    return kids


def cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow  # starts a run's worker processes in a process of its own and kills it
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_with_a_killed_run(tmp_path):
    # The compiled package this test imports (the installed one, or a source tree built in
    # place): the repository root of an installed copy holds no compiled modules.
    where = Path(simcore.__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(tmp_path / "r")], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(where)})
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 or not list((tmp_path / "r").glob("part-*.arrow")):  # playing
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
            workers = [c for c in children(proc.pid) if b"LokyProcess" in cmdline(c)]
        workers += [c for c in children(proc.pid) if c not in workers]  # loky's resource tracker
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # Seconds, not minutes: the slack is for a loaded machine, where 10 s has not
        # always been enough for the workers and then the tracker, which waits for them.
        deadline = time.monotonic() + 30
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [(w, cmdline(w)) for w in workers if alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
