"""`chocosim new-game`: the skeleton of a compiled game builds against this chocosim,
registers through its entry point, passes the conformance suite, and plays the same
games as the Python tic-tac-toe of examples/ (same params, seeds, bots)."""
from __future__ import annotations

import contextlib
import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import strategies
from helpers import ROOT, cli
from simcore import registry
from simcore.batch import play_batch, result_arrays
from simcore.conformance import check_game
from simcore.errors import CounterOverflow, UserError
from simcore.newgame import write_skeleton
from simcore.runner import run
from analysis.api import results

EXAMPLE = ROOT / "examples" / "tictactoe" / "tictactoe_game" / "game.py"


def test_refuses_bad_names_and_used_directories(tmp_path, capsys):
    for name in ("9lives", "My-Game", "class", ""):
        with pytest.raises(UserError, match="use lower-case letters"):
            write_skeleton(name, tmp_path / "x")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("mine")
    code, _, err = cli(capsys, "new-game", "mygame", "--out", str(tmp_path / "used"))
    assert code == 2 and "is not an empty directory" in err
    assert (tmp_path / "used" / "keep.txt").read_text() == "mine"
    code, out, _ = cli(capsys, "new-game", "mygame", "--out", str(tmp_path / "new"))
    assert code == 0
    assert sorted(str(p.relative_to(tmp_path / "new")) for p in (tmp_path / "new").rglob("*") if p.is_file()) == [
        "README.md", "mygame/__init__.py", "mygame/data/rules.toml", "mygame/params.py", "mygame/rules.pxd",
        "mygame/rules.pyx", "pyproject.toml", "setup.py", "tests/test_mygame.py"]


def _rows(out):
    cols = ["game", "seed", "seat", "score", "rank", "win", "position", "turns", "centre", "corners"]
    return results(Path(out)).select(
        *cols, pl.col("strategy").cast(pl.Utf8), pl.col("end_reason").cast(pl.Utf8)).sort("game", "seat")


@contextlib.contextmanager
def built_skeleton(name, tmp_path, monkeypatch, edit=lambda pkg: None):
    """The skeleton `name` written, changed by `edit`, built and registered; its spec."""
    pkg = tmp_path / "pkg"
    write_skeleton(name, pkg)
    edit(pkg / name)
    # Built against the chocosim this test imports, as a designer's build is against the
    # installed one (the source tree of a clean checkout holds no compiled engine).
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=pkg,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    # Registered as pip would leave it: a dist-info with the skeleton's entry point.
    dist = tmp_path / f"{name}-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(f"[chocosim.games]\n{name} = {name}:GAME\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(pkg))
    registry._entry_points.cache_clear()
    try:
        yield registry.get_game(name)
    finally:
        registry._entry_points.cache_clear()


@pytest.mark.statistical  # long: compiles a C extension (about 10 s of CPU)
def test_the_skeleton_builds_registers_conforms_and_plays_the_python_games(tmp_path, monkeypatch, capsys):
    with built_skeleton("skel_ttt", tmp_path, monkeypatch) as spec:
        assert "entry point skel_ttt = skel_ttt:GAME" in spec.origin
        code, out, _ = cli(capsys, "games")
        assert code == 0 and "skel_ttt" in out
        check_game(spec, games=50)
        py = registry.get_game(str(EXAMPLE))
        # The search bot's random rollouts too: the skeleton's own compiled play_out
        # against the base's, through a Python game's virtual calls.
        for seats, n in ((["greedy", "random"], 1000), (["mcts(iterations=40)", "random"], 60)):
            for s in (spec, py):
                run(s, s.params(players=2), seats, functools.partial(strategies.build_lineup, s.name, seats),
                    tmp_path / s.name / seats[0], n_games=n, jobs=1, quiet=True)
            assert _rows(tmp_path / "skel_ttt" / seats[0]).equals(_rows(tmp_path / "tictactoe" / seats[0]))


def _centre_worth_win_points(game):
    rules = game / "rules.pyx"
    rules.write_text(rules.read_text().replace("out[0] = self.b.cell[4] == seat",
                                               "out[0] = (self.b.cell[4] == seat) * self.win_points"))
    params = game / "params.py"
    params.write_text(params.read_text().replace("Field(ge=1, le=100)", "Field(ge=1, le=1000)"))


@pytest.mark.statistical  # long: compiles a C extension (about 10 s of CPU)
def test_a_narrow_feature_beyond_int8_is_named_not_stored_wrapped(tmp_path, monkeypatch):
    """The int8 path of the batch loop's overflow check, which no bundled game can reach:
    the skeleton's `centre` feature (int8, narrow_features) made win_points when held."""
    with built_skeleton("skel_int8", tmp_path, monkeypatch, _centre_worth_win_points) as spec:
        lineup = strategies.build_lineup(spec.name, ["random", "random"])

        def centre(win_points):
            state = spec.new_state(spec.params(players=2, sets={"win_points": win_points}))
            assert state.narrow_features
            out = result_arrays(state, 40)
            play_batch(state, lineup, np.array([[0, 1]], np.int32), 1, 3, 0, 40, **out)
            return out["features"][0]  # centre, every seat of every game

        assert set(centre(127).tolist()) == {0, 127}  # some seat holds the centre, some not
        with pytest.raises(CounterOverflow, match=r"^SkelInt8State: centre = 128 in game \d+ does not fit "
                                                  r"the int8 "):
            centre(128)
