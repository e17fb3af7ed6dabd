"""A designer's heuristic for tic-tac-toe: one Python class (seat it with the spec
`tictactoe_game.bots:LineBot`, or `tictactoe_game.bots:LineBot(centre=0)`)."""
from __future__ import annotations

from simcore.strategy import PythonStrategy

from tictactoe_game.game import LINES


class LineBot(PythonStrategy):
    """Completes its own line, else blocks the opponent's, else takes the centre (when
    `centre` > 0), else plays at random."""

    NAME = "linebot"
    GAMES = ("tictactoe",)
    WEIGHTS = {"centre": 1.0}
    WEIGHT_RANGES = {"centre": (-1.0, 1.0, "linear")}  # where `chocosim tune` may search it
    DESCRIPTION = "wins if it can, blocks if it must, likes the centre"

    def decide(self, observation, legal, rng):
        board, me = observation["board"], observation["you"]
        for who in (me, 1 - me):  # first a win, then a block
            for line in LINES:
                marks = [board[c] for c in line]
                if marks.count(who) == 2 and marks.count(-1) == 1:
                    return line[marks.index(-1)]
        if self.weights["centre"] > 0 and 4 in legal:
            return 4
        return rng.choice(legal)
