"""Pig, the folk dice game (described by John Scarne, "Scarne on Dice", 1945), as a
chocosim game: a race with chance on every move.

On your turn you roll one die as often as you like. A 1 ends your turn and loses what
you rolled this turn; any other face adds to your turn total. Hold to bank the turn
total and pass the die. The first player to bank `target` points (100) wins at once.
An action is 0 (roll) or 1 (hold, once you have rolled this turn).

Rolling first is an advantage. The house rule `start_bonus` lets the player at turn
position k (0 for the first) start with k * start_bonus points. A score bonus at the end
cannot balance the game: its winner is whoever reaches the target first, not the best
final score.
"""
from __future__ import annotations

from simcore.pygame import GameParams, PyGame, param
from simcore.strategy import PythonStrategy

ROLL, HOLD = 0, 1


class HoldAt(PythonStrategy):
    """Rolls until its turn total reaches `at` (or would win), then holds."""

    NAME = "hold"
    WEIGHTS = {"at": 20.0}
    WEIGHT_RANGES = {"at": (5.0, 40.0, "linear")}
    DESCRIPTION = "rolls until its turn total reaches `at` (20) or would win, then holds"

    def decide(self, observation, legal, rng):
        me, total = observation["you"], observation["turn_total"]
        winning = observation["scores"][me] + total >= observation["target"]
        if HOLD in legal and (total >= self.weights["at"] or winning):
            return HOLD
        return ROLL


class PigParams(GameParams):
    players: int = param(2, "rulebook", "Players at the table", ge=2, le=3)
    target: int = param(100, "rulebook", "Points a player must bank to win", ge=10, le=1000)
    start_bonus: int = param(0, "assumed", "House rule: points the player at turn position k starts with, "
                             "times k (0 for the first player)", ge=0, le=100)


class Pig(PyGame):
    NAME = "pig"
    TITLE = "Pig"
    PLAYERS = (2, 3)
    PARAMS = PigParams
    END_REASONS = ("target",)
    FEATURES = ("turns_taken",)  # turns the seat started
    # A race: the winner is whoever banks the target first, whatever the scores say.
    WON_IN_PLAY = ("target",)
    BONUS_DECIDES = False
    # The knob that evens out turn positions, with the values balance tries (at 0-5 the
    # 1st player stayed ahead; sweeping further put the fair point near 7.5).
    POSITION_KNOBS = {"start_bonus": (0, 2, 4, 6, 8, 10)}
    BOTS = (HoldAt,)

    def setup(self) -> None:
        n = self.params.players
        self.banked = [k * self.params.start_bonus for k in range(n)]
        self.to_move = 0
        self.turn_total = 0
        self.last_roll = 0  # the die of the last move, 0 after a hold
        self.turns = [1] + [0] * (n - 1)
        self.winner = -1

    def current_player(self) -> int:
        return -1 if self.winner >= 0 else self.to_move

    def legal_actions(self) -> list[int]:
        return [ROLL, HOLD] if self.turn_total > 0 else [ROLL]

    def _pass(self) -> None:
        self.turn_total = 0
        self.to_move = (self.to_move + 1) % self.params.players
        self.turns[self.to_move] += 1

    def apply(self, action: int) -> None:
        if action == HOLD:
            self.last_roll = 0
            self.banked[self.to_move] += self.turn_total
            if self.banked[self.to_move] >= self.params.target:
                self.winner = self.to_move
            else:
                self._pass()
            return
        self.last_roll = 1 + self.chance.below(6)
        if self.last_roll == 1:
            self._pass()
        else:
            self.turn_total += self.last_roll

    def scores(self) -> list[int]:
        return list(self.banked)

    def rank(self, scores: list[int]) -> list[int]:
        # The winner is first whatever the scores; the others by their scores.
        return [1 if s == self.winner else 2 + sum(o > scores[s] for i, o in enumerate(scores)
                                                    if i not in (s, self.winner))
                for s in range(len(scores))]

    def standing(self, seat: int) -> int:
        return self.banked[seat]

    def end_reason(self) -> str:
        return "target"

    def features(self, seat: int) -> list[int]:
        return [self.turns[seat]]

    def observation(self, seat: int) -> dict:
        return {"you": seat, "to_move": self.to_move, "scores": list(self.banked),
                "turn_total": self.turn_total, "last_roll": self.last_roll, "target": self.params.target}

    def outcome_key(self, observer: int) -> int:
        return self.last_roll  # everyone sees the die

    def describe(self, action: int) -> str:
        return f"hold (banks {self.turn_total})" if action == HOLD else "roll"

    def describe_outcome(self) -> str:
        if self.last_roll == 0:
            return ""
        return "rolled 1: the turn total is lost" if self.last_roll == 1 else f"rolled {self.last_roll}"

    def render(self) -> str:
        if self.winner >= 0:
            return f"banked {self.banked}: seat {self.winner} reached {self.params.target}"
        return f"banked {self.banked}, seat {self.to_move} to move with {self.turn_total} this turn"
