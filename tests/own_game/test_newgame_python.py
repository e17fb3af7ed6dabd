"""`chocosim new-game NAME --python` writes a plain-Python game (tic-tac-toe to start
from, with a bot declared with it) that passes the conformance check and its own tests
as written, and that every command plays by its class reference."""
from __future__ import annotations

import importlib
import sys

from helpers import cli

STARTER = ["README.md", "pyproject.toml", "pystarter/__init__.py", "pystarter/game.py", "tests/test_pystarter.py"]


def test_the_python_starter_passes_its_own_tests_and_plays(tmp_path, capsys, monkeypatch):
    out = tmp_path / "pystarter"
    code, stdout, err = cli(capsys, "new-game", "pystarter", "--python", "--out", str(out))
    assert code == 0, err
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == STARTER
    assert 'pystarter = "pystarter.game:Pystarter"' in (out / "pyproject.toml").read_text()
    monkeypatch.syspath_prepend(str(out))
    monkeypatch.syspath_prepend(str(out / "tests"))
    own_tests = importlib.import_module("test_pystarter")
    try:
        own_tests.test_conforms()  # the conformance suite, as its tests call it
        own_tests.test_three_in_a_row_wins()
        monkeypatch.chdir(out)
        code, stdout, err = cli(capsys, "play", "pystarter.game:Pystarter", "--seats", "linebot,random")
        assert code == 0, err
        assert stdout.splitlines()[1:3] == ["  seat 0: linebot", "  seat 1: random"]
        assert "end: " in stdout
    finally:
        for name in [m for m in sys.modules if m == "test_pystarter" or m.startswith("pystarter")]:
            del sys.modules[name]


def test_the_python_starter_is_refused_as_the_compiled_one_is(tmp_path, capsys):
    code, _, err = cli(capsys, "new-game", "simcore", "--python", "--out", str(tmp_path / "pkg"))
    assert code == 2 and err.startswith("chocosim: error: game name 'simcore' is taken by the installed module")
    assert not (tmp_path / "pkg").exists()
