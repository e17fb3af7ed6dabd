"""A part proves what it holds: a part of another run, another chunk's part, a
part whose bytes changed and a stray part are never counted. A re-run names them and
plays their games again (a stray part is removed); every reader refuses them in one line
naming the file. Parts as chocosim 0.3 wrote them stay readable and resumable."""
from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest

import strategies
from analysis.metrics import open_run
from analysis.summary import scan_run, summarize
from simcore.errors import UserError
from simcore.parts import (
    chunk_of,
    chunks_of,
    list_parts,
    part_index,
    part_name,
    read_tally,
    tally_path,
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


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("part-*"))}  # parts and tallies


def copy_part(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)
    shutil.copyfile(tally_path(src), tally_path(dst))


def flip_64_bytes(part: Path) -> None:
    data = bytearray(part.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(b ^ 0xFF for b in data[mid:mid + 64])
    part.write_bytes(bytes(data))


def as_chocosim_0_3(out: Path) -> None:
    """Rewrite the tallies as chocosim 0.3 wrote them: no seed, index, end or checksum."""
    for p in out.glob("part-*.arrow"):
        tally = read_tally(p)
        legacy = {k: v for k, v in tally.items() if k not in ("seed", "index", "end", "checksum")}
        tally_path(p).write_text(json.dumps(legacy))


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
    assert files(out) == files(runs / "whole")
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
    assert files(out) == files(runs / "whole")
    s = summarize(out)
    assert (s.games, s.complete) == (GAMES, True)


def test_parts_of_chocosim_0_3_are_read_and_resumed(runs, tmp_path):
    out = damaged(runs, tmp_path, lambda out, runs: as_chocosim_0_3(out))
    assert summarize(out).games == GAMES
    assert (play(out).played, play(out, n_games=60).played) == (0, 10)  # resumed, then extended


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
    assert play(out).played == CHUNK


def test_chunks_follow_the_segments_of_an_extended_run():
    manifest = {"n_games": 26, "chunk_size": 10, "segments": [[0, 20], [20, 26, 4]]}
    assert list(chunks_of(manifest)) == [(0, 0, 10), (1, 10, 20), (2, 20, 24), (3, 24, 26)]
    assert [chunk_of(manifest, i) for i in range(5)] == [(0, 10), (10, 20), (20, 24), (24, 26), None]
    assert chunk_of({"n_games": 10**15, "chunk_size": 7}, 10**14) == (7 * 10**14, 7 * 10**14 + 7)


def test_a_part_index_is_read_only_from_a_name_the_runner_makes():
    assert [part_index(Path(n)) for n in ("part-00007.arrow", "part-123456.arrow", "part-7.arrow",
                                          "part-000007.arrow", "part-x.arrow")] == [7, 123456, None, None, None]
