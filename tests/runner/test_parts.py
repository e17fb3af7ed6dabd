"""A part proves what it holds: a part of another run, another chunk's part, a
part whose bytes changed and a stray part are never counted. A re-run names them and
plays their games again (a stray part is removed); every reader refuses them in one line
naming the file. A part without proof (no tally with a checksum) is checked on its rows and
read as unproven, or refused if compact; a re-run plays it again. Parts as chocosim 0.3
wrote them stay readable and resumable."""
from __future__ import annotations

import functools
import os
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import strategies
from analysis.rundir import open_run, scan_run
from analysis.summary import summarize
from helpers import DATA, part_files
from simcore.errors import UserError
from simcore.parts import (
    MANIFEST,
    chunk_of,
    chunks_of,
    list_parts,
    part_index,
    part_name,
    read_part,
    read_tally,
    scan_parts,
    tally_path,
    write_part,
)
from simcore.registry import get_game
from simcore.runner import run

FABRYKA = get_game("fabryka")
SPECS = ["random", "greedy"]
GAMES, CHUNK = 50, 10


def play(out: Path, seed: int = 3, **kw):
    kw.setdefault("n_games", GAMES)
    kw.setdefault("chunk_size", CHUNK)
    params = FABRYKA.params(players=2)
    return run(FABRYKA, params, SPECS, functools.partial(strategies.build_lineup, "fabryka", SPECS),
               out, seed=seed, jobs=1, quiet=True, **kw)


def copy_part(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)
    shutil.copyfile(tally_path(src), tally_path(dst))


def flip_64_bytes(part: Path) -> None:
    data = bytearray(part.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(b ^ 0xFF for b in data[mid:mid + 64])
    part.write_bytes(bytes(data))


def as_chocosim_0_3(out: Path) -> None:
    """Rewrite the run as chocosim 0.3 wrote it: parts stored whole, tallies without
    seed, index, end or checksum, a manifest without a layout."""
    for p in out.glob("part-*.arrow"):
        tally = read_tally(p)
        read_part(p).write_ipc(p)
        legacy = {k: v for k, v in tally.items() if k not in ("seed", "index", "end", "checksum", "layout", "widen")}
        tally_path(p).write_text(json.dumps({**legacy, "bytes": p.stat().st_size}))
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["layout"]
    (out / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The run (seed 3) and a run that differs only in its seed, each played once."""
    base = tmp_path_factory.mktemp("runs")
    play(base / "whole")
    play(base / "other", seed=1)
    return base


def damaged(runs, tmp_path, damage) -> Path:
    out = tmp_path / "r"
    shutil.copytree(runs / "whole", out)
    damage(out, runs)
    return out


# The cases: a part and its tally from a run with another seed, 64 bytes flipped in
# the middle of a part (its size kept), part 4 and its tally copied over part 2.
CASES = {
    "other-seed": (lambda out, runs: copy_part(runs / "other" / part_name(1), out / part_name(1)), 1,
                   "is a part of another run"),
    "flipped-bytes": (lambda out, runs: flip_64_bytes(out / part_name(1)), 1, "is damaged"),
    "other-chunk": (lambda out, runs: copy_part(out / part_name(4), out / part_name(2)), 2,
                    "does not hold games 20-29 of this run"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_reader_refuses_a_part_that_is_not_what_it_should_be(runs, tmp_path, case):
    damage, index, message = CASES[case]
    out = damaged(runs, tmp_path, damage)
    for read in (summarize, open_run, scan_run, list_parts):  # report, compare, skill, balance
        with pytest.raises(UserError, match=f"results part {out / part_name(index)} {message}"):
            read(out)


@pytest.mark.parametrize("case", CASES)
def test_a_rerun_names_such_a_part_and_plays_its_games_again(runs, tmp_path, capsys, case):
    damage, index, message = CASES[case]
    out = damaged(runs, tmp_path, damage)
    capsys.readouterr()
    result = play(out)
    assert (result.played, result.resumed) == (CHUNK, GAMES - CHUNK)
    assert f"{out / part_name(index)} {message}" in capsys.readouterr().err
    assert part_files(out) == part_files(runs / "whole")
    assert summarize(out).complete


def test_a_stray_part_is_refused_by_readers_and_removed_by_a_rerun(runs, tmp_path, capsys):
    out = damaged(runs, tmp_path, lambda out, runs: copy_part(out / part_name(1), out / part_name(99)))
    with pytest.raises(UserError, match=f"results part {out / part_name(99)} is not a part of this run"
                                        ".* again removes it"):
        summarize(out)
    capsys.readouterr()
    result = play(out)
    assert (result.played, result.resumed) == (0, GAMES)
    assert f"{out / part_name(99)} is not a part of this run" in capsys.readouterr().err
    assert part_files(out) == part_files(runs / "whole")
    s = summarize(out)
    assert (s.games, s.complete) == (GAMES, True)


def test_parts_of_chocosim_0_3_are_read_unproven_and_replayed_by_a_resume(runs, tmp_path):
    # A 0.3 tally has no checksum: the rows are checked and read, but nothing proves the
    # figures, so the summary says so instead of calling the run complete.
    out = damaged(runs, tmp_path, lambda out, runs: as_chocosim_0_3(out))
    s = summarize(out)
    assert (s.games, s.complete) == (GAMES, False)
    assert [line.split(" has ")[0] for line in s.unproven] == [f"results part {out / part_name(i)}" for i in range(5)]
    assert all(line.endswith("running the run's command again plays its games again") for line in s.unproven)
    assert (play(out).played, play(out, n_games=60).played) == (GAMES, 10)  # resumed, then extended
    s = summarize(out)
    assert (s.games, s.complete, s.unproven) == (60, True, ())
    assert "layout" not in json.loads((out / MANIFEST).read_text())  # the run keeps its layout
    assert_frame_equal(scan_run(out).filter(pl.col("game") < GAMES).collect(), scan_run(runs / "whole").collect())


def test_a_0_3_part_of_another_seed_is_found_by_its_rows(runs, tmp_path, capsys):
    # A 0.3 tally names no seed or checksum: the rows' first seed tells the runs apart.
    def damage(out, runs):
        other = tmp_path / "other"
        shutil.copytree(runs / "other", other)
        as_chocosim_0_3(out)
        as_chocosim_0_3(other)
        copy_part(other / part_name(1), out / part_name(1))

    out = damaged(runs, tmp_path, damage)
    with pytest.raises(UserError, match=f"{out / part_name(1)} holds games of a run with another seed"):
        summarize(out)
    assert play(out).played == GAMES  # that part, and the unproven ones


def test_chunks_follow_the_segments_of_an_extended_run():
    manifest = {"n_games": 26, "chunk_size": 10, "segments": [[0, 20], [20, 26, 4]]}
    assert list(chunks_of(manifest)) == [(0, 0, 10), (1, 10, 20), (2, 20, 24), (3, 24, 26)]
    assert [chunk_of(manifest, i) for i in range(5)] == [(0, 10), (10, 20), (20, 24), (24, 26), None]
    assert chunk_of({"n_games": 10**15, "chunk_size": 7}, 10**14) == (7 * 10**14, 7 * 10**14 + 7)


def test_a_part_index_is_read_only_from_a_name_the_runner_makes():
    assert [part_index(Path(n)) for n in ("part-00007.arrow", "part-123456.arrow", "part-7.arrow",
                                          "part-000007.arrow", "part-x.arrow")] == [7, 123456, None, None, None]


# ---- compact parts (layout 2) and runs of the layout before ----

LAYOUT1 = DATA / "fabryka_layout1"  # chocosim 029cd7e: random v greedy, seed 11, 40 games


def play_like_layout1(out: Path, n_games: int = 40):
    return play(out, seed=11, n_games=n_games, chunk_size=10)


def stored_columns(part: Path) -> list[str]:
    return list(pl.read_ipc_schema(part))


def test_a_run_of_the_previous_layout_reads_resumes_and_extends_as_before(tmp_path):
    old = tmp_path / "old"
    shutil.copytree(LAYOUT1, old)
    new = tmp_path / "new"
    play_like_layout1(new)
    assert "game" in stored_columns(old / part_name(0)) and "game" not in stored_columns(new / part_name(0))
    # The same rows, column types and order, the same summary.
    assert_frame_equal(scan_run(old).collect(), scan_run(new).collect())
    a, b = summarize(old), summarize(new)
    for name in ("by_seat", "by_position", "by_strategy", "draws", "end_reasons"):
        assert_frame_equal(getattr(a, name), getattr(b, name))
    # Resumed: the lost part is written again as that run wrote it, byte for byte.
    lost = (old / part_name(2)).read_bytes()
    (old / part_name(2)).unlink()
    assert play_like_layout1(old).played == 10
    assert (old / part_name(2)).read_bytes() == lost
    # Extended: the new parts keep the run's layout, and hold the games of a longer run.
    assert play_like_layout1(old, 60).played == 20
    assert play_like_layout1(new, 60).played == 20
    assert "game" in stored_columns(old / part_name(5)) and "layout" not in json.loads((old / MANIFEST).read_text())
    assert_frame_equal(scan_run(old).collect(), scan_run(new).collect())
    for columns in (None, ["seed", "score", "game"]):
        assert_frame_equal(read_part(old / part_name(4), columns), read_part(new / part_name(4), columns))


def test_a_compact_fabryka_game_takes_at_most_40_bytes(tmp_path):
    out = tmp_path / "r"
    params = FABRYKA.params(players=2)
    run(FABRYKA, params, ["random", "random"], functools.partial(strategies.build_lineup, "fabryka", ["random"] * 2),
        out, n_games=20_000, chunk_size=20_000, jobs=1, quiet=True)
    size = (out / part_name(0)).stat().st_size
    assert size / 20_000 <= 40
    assert read_tally(out / part_name(0))["bytes"] == size


def test_a_compact_part_narrows_each_column_to_its_values_and_reads_back_at_its_type(tmp_path):
    seed_of_game = pytest.importorskip("simcore.batch").seed_of_game
    table = pl.DataFrame({
        "run_id": pl.Series(["abc"] * 6, dtype=pl.Enum(["abc"])),
        "game": pl.Series([7, 7, 8, 8, 9, 9], dtype=pl.Int64),
        "seed": pl.Series([seed_of_game(5, g) for g in (7, 7, 8, 8, 9, 9)], dtype=pl.UInt64),
        "seat": pl.Series([0, 1] * 3, dtype=pl.Int8),
        "score": pl.Series([1, 300, 2, 3, 4, 5], dtype=pl.Int32),  # needs int16
        "turns": pl.Series([40, 40, 41, 41, 39, 39], dtype=pl.Int32),  # fits int8
        "wide": pl.Series([-40_000, 0, 0, 0, 0, 0], dtype=pl.Int32),  # fits neither
        "interim_a": pl.Series([-128, 127, 0, 0, 0, 0], dtype=pl.Int16),  # int8's very bounds
    })
    part = tmp_path / part_name(0)
    tally = {"run_id": "abc", "seed": 5, "index": 0, "first_game": 7, "end": 10, "games": 3, "rows": 6}
    write_part(part, table.clone(), tally)
    stored = pl.read_ipc_schema(part)
    assert "game" not in stored and "seed" not in stored
    assert (stored["score"], stored["turns"], stored["wide"], stored["interim_a"]) == (pl.Int16, pl.Int8, pl.Int32, pl.Int8)
    assert tally["widen"] == {"score": "Int32", "turns": "Int32", "interim_a": "Int16"}
    assert_frame_equal(read_part(part), table)
    assert_frame_equal(scan_parts([part]).collect(), table)
    assert_frame_equal(read_part(part, ["seed", "turns"]), table.select("seed", "turns"))


def test_a_compact_part_without_its_tally_is_refused_in_one_line(runs, tmp_path):
    out = tmp_path / "r"
    shutil.copytree(runs / "whole", out)
    tally_path(out / part_name(1)).unlink()
    with pytest.raises(UserError, match=rf"results part {out / part_name(1)} is compact and its tally .* is missing"):
        scan_parts(list_parts(out))
    assert play(out).played == CHUNK  # played again
    assert part_files(out) == part_files(runs / "whole")


def test_the_parts_a_run_wrote_are_not_hashed_again_by_its_summary_but_a_changed_one_is(tmp_path, monkeypatch):
    import simcore.parts

    out = tmp_path / "r"
    play(out)
    hashed = []
    real = simcore.parts._hash
    monkeypatch.setattr(simcore.parts, "_hash", lambda p: hashed.append(p.name) or real(p))
    assert summarize(out).games == GAMES
    assert hashed == []  # every part's checksum was taken as it was written
    part = out / part_name(2)
    flip_64_bytes(part)
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))  # however fast the flip
    with pytest.raises(UserError, match=f"{part} is damaged"):
        summarize(out)
    assert hashed == [part.name]
