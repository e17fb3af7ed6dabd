"""Tic-tac-toe as a chocosim game: the smallest complete example of the Python protocol
(simcore.pygame). Cells are numbered 0-8 row by row; an action is the cell to mark.

Known answer (exact, by enumerating every random game): with both seats playing
uniformly at random, the first player wins 737/1260 (58.49%), the second 121/420
(28.81%), and 8/63 (12.70%) of games are drawn.
"""
from __future__ import annotations

from simcore.pygame import GameParams, PyGame, param

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
CORNERS = (0, 2, 6, 8)


class TicTacToeParams(GameParams):
    players: int = param(2, "rulebook", "Players at the table (the game is for two)", ge=2, le=2)
    win_points: int = param(1, "assumed", "Points for three in a row (the loser scores 0, a draw 0 each)",
                            ge=1, le=100)


class TicTacToe(PyGame):
    NAME = "tictactoe"
    TITLE = "Tic-tac-toe"
    PLAYERS = (2, 2)
    PARAMS = TicTacToeParams
    END_REASONS = ("line", "full board")
    FEATURES = ("centre", "corners")  # what each seat took: the centre cell, corner cells

    def setup(self) -> None:
        self.board = [-1] * 9  # seat owning each cell, -1 empty
        self.to_move = 0
        self.winner = -1

    def current_player(self) -> int:
        return -1 if self.winner >= 0 or -1 not in self.board else self.to_move

    def legal_actions(self) -> list[int]:
        return [c for c in range(9) if self.board[c] < 0]

    def apply(self, action: int) -> None:
        self.board[action] = self.to_move
        if any(all(self.board[c] == self.to_move for c in line) for line in LINES if action in line):
            self.winner = self.to_move
        self.to_move = 1 - self.to_move

    def scores(self) -> list[int]:
        return [self.params.win_points if s == self.winner else 0 for s in range(2)]

    def standing(self, seat: int) -> int:
        return self.params.win_points if seat == self.winner else 0

    def end_reason(self) -> str:
        return "line" if self.winner >= 0 else "full board"

    def features(self, seat: int) -> list[int]:
        return [int(self.board[4] == seat), sum(self.board[c] == seat for c in CORNERS)]

    def observation(self, seat: int) -> dict:
        return {"board": list(self.board), "to_move": self.to_move, "you": seat}

    def describe(self, action: int) -> str:
        return f"mark row {action // 3 + 1}, column {action % 3 + 1}"

    def copy(self) -> TicTacToe:
        # Faster than the default deep copy: the search bots copy at every simulation.
        other = object.__new__(type(self))
        other.params, other.chance = self.params, self.chance.copy()  # a stream of its own
        other.board, other.to_move, other.winner = list(self.board), self.to_move, self.winner
        return other

    def render(self) -> str:
        marks = {-1: ".", 0: "X", 1: "O"}
        return "\n".join("".join(marks[self.board[3 * r + c]] for c in range(3)) for r in range(3))
