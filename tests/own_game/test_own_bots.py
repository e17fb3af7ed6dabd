"""A game's own bots, declared with the game (its BOTS): `chocosim strategies` lists them
beside the generic bots, and a spec names them like any bundled bot."""
from __future__ import annotations

import sys

import pytest

from helpers import ROOT, cli

pytestmark = pytest.mark.usefixtures("release_build")

EXAMPLE = ROOT / "examples" / "tictactoe"

GAME = '''
from simcore.strategy import PythonStrategy
from tictactoe_game.game import TicTacToe


class Corner(PythonStrategy):
    NAME = "corner"
    GAMES = ("ttt_with_bot",)
    DESCRIPTION = "takes a corner when it can"

    def decide(self, observation, legal, rng):
        return next((a for a in (0, 2, 6, 8) if a in legal), legal[0])


class WithBot(TicTacToe):
    NAME = "ttt_with_bot"
    BOTS = (Corner,)


class BadBots(TicTacToe):
    NAME = "ttt_bad_bots"
    BOTS = Corner  # a class, not a tuple of them
'''


@pytest.fixture
def own_game(tmp_path, monkeypatch):
    (tmp_path / "own_bots_game.py").write_text(GAME)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield "own_bots_game:WithBot"
    sys.modules.pop("own_bots_game", None)


def test_strategies_lists_the_games_own_bot_and_a_spec_names_it(own_game, capsys, monkeypatch, tmp_path):
    import analysis.cli

    monkeypatch.setattr(analysis.cli.console, "width", 250)
    code, out, err = cli(capsys, "strategies", own_game)
    assert code == 0, err
    row = next(line for line in out.splitlines() if "corner" in line)
    assert "takes a corner when it can (the game's own bot)" in row
    assert "random" in out and "mcts" in out  # the generic bots beside it
    assert "(the game's own bot)" not in next(line for line in out.splitlines() if "random" in line)
    code, out, err = cli(capsys, "run", own_game, "--seats", "corner,random", "--games", "40",
                         "--out", str(tmp_path / "r"), "--quiet")
    assert code == 0, err
    code, out, _ = cli(capsys, "summary", str(tmp_path / "r"))
    assert "corner" in out and "random" in out


def test_a_malformed_bots_declaration_is_one_line(own_game, capsys):
    code, _, err = cli(capsys, "strategies", "own_bots_game:BadBots")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "BOTS = " in err and "expected a tuple of" in err
