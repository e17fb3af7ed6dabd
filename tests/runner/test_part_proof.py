"""No part without proof: a part is trusted only with a tally naming its run and the
checksum of its bytes. A part stored whole without one is checked row by row (run id, game
index, seed) and read as unproven, which summary and report say instead of "complete"; a
compact one is never read. Either is played again by the run's own command, which never
refuses what it can repair. A manifest with a bad layout is one line."""
from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest

import strategies
from analysis.rundir import open_run, scan_run
from analysis.summary import summarize
from helpers import DATA, cli, part_files
from simcore.errors import UserError
from simcore.parts import MANIFEST, list_parts, part_name, read_part, tally_path
from simcore.registry import get_game
from simcore.runner import run

FABRYKA = get_game("fabryka")
SPECS = ["random", "greedy"]
LAYOUT1 = DATA / "fabryka_layout1"  # random v greedy, seed 11, 40 games, parts of 10
AGAIN = "running the run's command again plays its games again"


def play(out: Path, seed: int = 11, n_games: int = 40):
    return run(FABRYKA, FABRYKA.params(players=2), SPECS, functools.partial(strategies.build_lineup, "fabryka", SPECS),
               out, seed=seed, n_games=n_games, chunk_size=10, jobs=1, quiet=True)


def strip_checksum(part: Path, drop=("checksum",)) -> None:
    tally = {k: v for k, v in json.loads(tally_path(part).read_text()).items() if k not in drop}
    tally_path(part).write_text(json.dumps({**tally, "bytes": part.stat().st_size}))


def rewrite_rows(part: Path) -> None:
    """Every win turned into a loss and back, the tally's size kept true."""
    df = read_part(part)
    df.with_columns((1 - pl.col("win")).cast(df["win"].dtype)).write_ipc(part)


@pytest.fixture
def layout1(tmp_path) -> Path:
    out = tmp_path / "old"
    shutil.copytree(LAYOUT1, out)
    return out


@pytest.fixture(scope="module")
def compact(tmp_path_factory) -> Path:
    """A compact run like LAYOUT1's, and the same of seed 1."""
    base = tmp_path_factory.mktemp("compact")
    play(base / "whole")
    play(base / "other", seed=1)
    return base


# ---- the case: a layout-1 part whose tally lost its checksum, its rows rewritten ----

@pytest.mark.parametrize("tally", ["stripped", "missing"])
def test_rewritten_rows_without_proof_are_not_complete_and_a_rerun_replays_them(layout1, capsys, tally):
    part = layout1 / part_name(1)
    lost = part.read_bytes()
    rewrite_rows(part)
    if tally == "missing":
        tally_path(part).unlink()
    else:
        strip_checksum(part)
    s = summarize(layout1)
    assert (s.games, s.complete) == (40, False)
    assert s.unproven == (f"results part {part} has {'no tally' if tally == 'missing' else 'a tally without a checksum'} "
                          f"({tally_path(part).name}): its rows are this run's games, but nothing proves its "
                          f"figures; {AGAIN}",)
    code, out, _ = cli(capsys, "summary", str(layout1))
    assert code == 0 and f"unproven: results part {part} has" in out and "unproven: 1 part(s)" in out.splitlines()[0]
    code, out, _ = cli(capsys, "summary", "--json", str(layout1))
    summary = json.loads(out)
    assert (summary["complete"], len(summary["unproven"])) == (False, 1)
    assert open_run(layout1).unproven == s.unproven  # what the report names
    assert play(layout1).played == 10  # played again, by the same command
    assert part.read_bytes() == lost
    assert part_files(layout1) == part_files(LAYOUT1)
    assert summarize(layout1).complete


def test_the_report_names_an_unproven_part_and_does_not_call_the_run_complete(layout1, tmp_path, capsys):
    part = layout1 / part_name(2)
    strip_checksum(part)
    html = tmp_path / "r.html"
    code, out, _ = cli(capsys, "report", str(layout1), "-o", str(html))
    assert code == 0 and f"unproven: results part {part} has a tally without a checksum" in out
    text = html.read_text()
    assert f"Unproven: results part {part} has a tally without a checksum" in text and "— unproven" in text


# ---- a part stored whole without proof: checked row by row ----

@pytest.mark.parametrize("change, message", [
    (lambda df: df.with_columns(pl.col("game") + 1), "does not hold games 10-19 of this run"),
    (lambda df: df.with_columns(pl.col("seed") + 1), "holds games of a run with another seed than 11"),
    (lambda df: df.with_columns(pl.col("run_id").cast(pl.String).str.replace(r"^.", "z")),
     "is a part of another run (its rows say run_id"),
    (lambda df: df.head(19), "does not hold games 10-19 of this run"),
], ids=["games", "seeds", "run-id", "a-row-short"])
def test_rows_without_proof_that_are_not_the_runs_are_refused_and_replayed(layout1, capsys, change, message):
    part = layout1 / part_name(1)
    change(read_part(part)).write_ipc(part)
    tally_path(part).unlink()
    with pytest.raises(UserError) as e:
        summarize(layout1)
    assert str(e.value).startswith(f"results part {part} {message}") and str(e.value).endswith(AGAIN)
    capsys.readouterr()
    assert play(layout1).played == 10
    assert f"{part} {message}" in capsys.readouterr().err
    assert part_files(layout1) == part_files(LAYOUT1)


# ---- compact parts: replayed, never read, without their checksum ----

def test_a_compact_part_whose_tally_lost_its_checksum_and_whose_bytes_flipped_is_replayed(compact, tmp_path, capsys):
    out = tmp_path / "r"
    shutil.copytree(compact / "whole", out)
    part = out / part_name(1)
    data = bytearray(part.read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = bytes(b ^ 0xFF for b in data[len(data) // 2: len(data) // 2 + 64])
    part.write_bytes(bytes(data))
    strip_checksum(part)
    message = f"results part {part} is compact and its tally ({tally_path(part).name}) has no checksum"
    for read in (summarize, open_run, scan_run, list_parts):
        with pytest.raises(UserError, match=f"^{re.escape(message)}.*{AGAIN}$"):
            read(out)
    code, _, err = cli(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and err == f"chocosim: error: {message}: nothing proves which games its rows hold; {AGAIN}\n"
    assert play(out).played == 10
    assert part_files(out) == part_files(compact / "whole")


@pytest.mark.parametrize("drop", [("checksum",), ("checksum", "seed", "index", "end", "run_id"),
                                  ("checksum", "widen", "layout", "first_game")],
                         ids=["checksum", "identity", "how-to-read"])
def test_a_foreign_compact_part_with_a_stripped_tally_is_replayed_not_refused_again(compact, tmp_path, capsys, drop):
    out = tmp_path / "r"
    shutil.copytree(compact / "whole", out)
    for index in (0, 2):  # the first part too: the resume's format check reads the first good part
        part = out / part_name(index)
        shutil.copyfile(compact / "other" / part.name, part)
        shutil.copyfile(tally_path(compact / "other" / part.name), tally_path(part))
        strip_checksum(part, drop)
    with pytest.raises(UserError, match=f"results part {out / part_name(0)} .*; {AGAIN}$"):
        summarize(out)
    capsys.readouterr()
    assert play(out).played == 20
    assert f"{out / part_name(2)}" in capsys.readouterr().err
    assert part_files(out) == part_files(compact / "whole")
    assert summarize(out).complete


# ---- a manifest's layout ----

@pytest.mark.parametrize("layout", ["x", 0, 3, None, 1.0, True])
def test_a_bad_layout_is_one_line_for_the_run_and_for_every_reader(compact, tmp_path, capsys, layout):
    out = tmp_path / "r"
    shutil.copytree(compact / "whole", out)
    manifest = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({**manifest, "layout": layout}))
    before = part_files(out)
    expect = f"run directory {out}: {MANIFEST} garbles layout ({json.dumps(layout)}: expected a part layout from 1 to 2)"
    for argv in (["run", "fabryka", "--seats", "random,greedy", "--games", "40", "--seed", "11", "--chunk-size",
                  "10", "--jobs", "1", "--quiet", "--out", str(out)], ["summary", str(out)]):
        code, _, err = cli(capsys, *argv)
        assert (code, err) == (2, f"chocosim: error: {expect}\n")
    assert part_files(out) == before
