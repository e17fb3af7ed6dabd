"""A Python bot that calls sys.exit or os._exit, or raises KeyboardInterrupt, in decide is
the bot's failure: one line naming it, exit code 2 (the command ended with the
bot's exit code and no line, or read as the user's Ctrl-C). A real Ctrl-C delivered while
a bot decides stays the user's."""
from __future__ import annotations

import functools
import os
import signal
import sys
import time

import pytest
from simcore.strategy import DecideError, PythonStrategy

import strategies
from simcore.play import play_game
from simcore.registry import get_game
from simcore.runner import BotFailure, run

FABRYKA = get_game("fabryka")


class SysExit(PythonStrategy):
    def decide(self, observation, legal, rng):
        sys.exit(3)


class OsExit(PythonStrategy):
    def decide(self, observation, legal, rng):
        os._exit(7)


class RaisesInterrupt(PythonStrategy):
    def decide(self, observation, legal, rng):
        raise KeyboardInterrupt


class CtrlC(PythonStrategy):
    """The user presses Ctrl-C while this bot decides."""

    def decide(self, observation, legal, rng):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler interrupts this at once
        return legal[0]


BOTS = {SysExit: "called sys.exit(3)", OsExit: "called os._exit(7)",
        RaisesInterrupt: "raised KeyboardInterrupt (not a Ctrl-C)"}


def lineup(cls):
    return [cls(), strategies.build("fabryka", "random")]


@pytest.mark.parametrize("cls", BOTS)
def test_a_bot_that_exits_fails_as_a_bot_in_one_game(cls):
    with pytest.raises(DecideError, match=rf"^{cls.__name__}\.decide {BOTS[cls]}".replace("(", r"\(").replace(")", r"\)")):
        play_game(FABRYKA, FABRYKA.params(players=2), lineup(cls), seed=1)
    assert os._exit is not None and os._exit.__name__ == "_exit" and os._exit.__module__ == "posix"


@pytest.mark.parametrize("backend", ["threads", "processes"])
@pytest.mark.parametrize("cls", BOTS)
def test_a_bot_that_exits_is_named_by_the_run(tmp_path, cls, backend):
    with pytest.raises(BotFailure, match=rf"^bot {cls.__name__} \(seat 0\) {BOTS[cls]}".replace(
            "(3)", r"\(3\)").replace("(7)", r"\(7\)").replace("(not a Ctrl-C)", r"\(not a Ctrl-C\)")):
        run(FABRYKA, FABRYKA.params(players=2), [cls.__name__, "random"], functools.partial(lineup, cls),
            tmp_path / "r", n_games=4, seating="fixed", jobs=1, backend=backend, quiet=True)


def test_a_bot_exit_is_one_line_and_exit_2_in_the_cli(tmp_path):
    import subprocess

    bot = tmp_path / "exiting.py"
    bot.write_text("import os\nfrom simcore.strategy import PythonStrategy\n\n"
                   "class Exiting(PythonStrategy):\n    def decide(self, observation, legal, rng):\n"
                   "        os._exit(7)\n")
    done = subprocess.run([sys.executable, "-c", "from analysis.cli import main; main()", "play", "fabryka",
                           "--seats", "exiting:Exiting,random"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "bot Exiting (seat 0) called os._exit(7)" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_ctrl_c_while_a_bot_decides_is_the_users():
    # A shell starts a background job with SIGINT ignored, and then nothing is counted:
    # the handler chocosim installs where Python's default one stands is set here.
    import simcore.strategy as strategy_module

    old = signal.signal(signal.SIGINT, strategy_module._count_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            play_game(FABRYKA, FABRYKA.params(players=2), lineup(CtrlC), seed=1)
    finally:
        signal.signal(signal.SIGINT, old)
