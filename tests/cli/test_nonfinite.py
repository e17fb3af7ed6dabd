"""NaN and infinity are refused in one line with exit code 2 wherever a number is given:
bot weights however a bot is made, --margin, --precision, and a weights file
that is no file (/dev/zero) is refused without reading it."""
from __future__ import annotations

import json

import pytest
from helpers import cli

import strategies
from simcore.errors import UserError

GAME = "fabryka"


@pytest.mark.parametrize("bot, weight", [("heuristic", "wait"), ("mcts", "c"), ("mcts", "iterations"),
                                         ("mcts", "widen")])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_a_bot_made_in_python_refuses_a_weight_that_is_not_finite(bot, weight, value):
    cls = strategies.available(GAME)[bot]
    if weight not in cls.WEIGHTS:
        pytest.skip(f"{bot} has no weight {weight}")
    with pytest.raises(UserError, match=f"weight {weight}={value!r} is not a finite number"):
        cls(**{weight: value})


@pytest.mark.parametrize("text", ['{"wait": NaN}', '{"wait": Infinity}', '{"wait": -Infinity}'])
def test_a_weights_file_given_to_a_bot_made_in_python_is_checked_too(tmp_path, text):
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(UserError, match="weight wait=.* is not a finite number"):
        strategies.available(GAME)["heuristic"](weights=str(path))


@pytest.mark.parametrize("seats", ["mcts(c=nan,iterations=8),random", "mcts(iterations=inf),random",
                                   "mcts(iterations=nan),random"])
def test_search_bot_args_that_are_not_finite_are_one_line(capsys, tmp_path, seats):
    # mcts(c=nan) was a segfault (exit 139, no message).
    for argv in (["play", GAME, "--seats", seats],
                 ["run", GAME, "--seats", seats, "--games", "4", "--out", str(tmp_path / "r")]):
        code, _, err = cli(capsys, *argv)
        lines = [x for x in err.strip().splitlines() if not x.startswith("chocosim: warning")]  # checked build
        assert code == 2 and "is not a finite number" in err and len(lines) == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv, message", [
    (["run", GAME, "--seats", "random,random", "--games", "200", "--precision", "inf", "--out", "{tmp}/r"],
     "precision = inf: must be a positive, finite number"),
    (["compare", GAME, "--seats", "random,random", "--variant", "rounds=3", "--games", "20",
      "--margin", "inf", "--runs", "{tmp}/r", "-o", "{tmp}/c.html"],
     "margin = inf: must be a positive, finite number"),
    (["compare", GAME, "--seats", "random,random", "--variant", "rounds=3", "--games", "200",
      "--precision", "inf", "--runs", "{tmp}/r", "-o", "{tmp}/c.html"],
     "precision = inf: must be a positive, finite number"),
])
def test_an_infinite_margin_or_precision_is_one_line_before_any_game(capsys, tmp_path, argv, message):
    code, _, err = cli(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []  # refused before a game was played or a file written


def test_a_weights_file_that_is_a_device_is_refused_unread(capsys):
    # heuristic(weights=/dev/zero) read 3 GB in 2 s before failing.
    code, _, err = cli(capsys, "play", GAME, "--seats", "heuristic(weights=/dev/zero),random")
    assert code == 2 and "weights file /dev/zero: not a regular file" in err
    assert len(err.strip().splitlines()) == 1


def test_a_weights_file_too_large_to_be_one_is_refused(capsys, tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"wait": 1.0, "pad": "x" * strategies.MAX_WEIGHTS_FILE}))
    code, _, err = cli(capsys, "play", GAME, "--seats", f"heuristic(weights={path}),random")
    assert code == 2 and "larger than 1 MB, not a weights file" in err
    assert len(err.strip().splitlines()) == 1
