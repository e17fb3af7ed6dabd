"""Kuhn poker (H. W. Kuhn, "A simplified two-person poker", Contributions to the Theory
of Games I, Princeton University Press, 1950) as a chocosim game: the smallest game
with hidden hands and chance, so that `determinize` and the search bot are exercised.

Three cards (jack, queen, king, ranked so); each player antes 1 chip and is dealt one
card, unseen by the other. Seat 0 acts first. An action is 0 (pass, or fold facing a
bet) or 1 (bet 1 chip, or call one). Pass-pass, bet-call and pass-bet-call go to a
showdown: the higher card takes the pot; a fold gives the pot to the other player.
A seat's score is its net gain in chips (-2 to +2).
"""
from __future__ import annotations

from simcore.pygame import GameParams, PyGame, param

CARDS = ("jack", "queen", "king")
PASS, BET = 0, 1


class KuhnParams(GameParams):
    players: int = param(2, "rulebook", "Players at the table (the game is for two)", ge=2, le=2)
    ante: int = param(1, "rulebook", "Chips each player puts in before the deal", ge=1, le=100)
    bet: int = param(1, "rulebook", "Chips a bet (and a call) adds to the pot", ge=1, le=100)


class KuhnPoker(PyGame):
    NAME = "kuhn"
    TITLE = "Kuhn poker"
    PLAYERS = (2, 2)
    PARAMS = KuhnParams
    END_REASONS = ("showdown", "fold")
    FEATURES = ("card", "bets")  # the card dealt (0 jack .. 2 king), bets and calls made
    HIDDEN_INFORMATION = True

    def setup(self) -> None:
        deck = list(range(3))
        self.chance.shuffle(deck)
        self.hands = deck[:2]
        self.history: list[int] = []

    def _over(self) -> bool:
        h = self.history
        return h in ([PASS, PASS], [BET, PASS], [BET, BET], [PASS, BET, PASS], [PASS, BET, BET])

    def current_player(self) -> int:
        return -1 if self._over() else len(self.history) % 2

    def legal_actions(self) -> list[int]:
        return [PASS, BET]

    def apply(self, action: int) -> None:
        self.history.append(action)

    def _put_in(self, seat: int) -> int:
        """Chips `seat` put in the pot: the ante and its bets or calls."""
        return self.params.ante + self.params.bet * sum(a == BET for a in self.history[seat::2])

    def scores(self) -> list[int]:
        if self.end_reason() == "fold":
            folder = (len(self.history) - 1) % 2
            winner = 1 - folder
        else:
            winner = 0 if self.hands[0] > self.hands[1] else 1
        loss = self._put_in(1 - winner)
        return [loss if s == winner else -loss for s in range(2)]

    def standing(self, seat: int) -> int:
        return self.scores()[seat] if self._over() else 0

    def end_reason(self) -> str:
        return "fold" if self.history[-1] == PASS and BET in self.history else "showdown"

    def features(self, seat: int) -> list[int]:
        return [self.hands[seat], sum(a == BET for a in self.history[seat::2])]

    def observation(self, seat: int) -> dict:
        seen = {"you": seat, "card": CARDS[self.hands[seat]], "history": list(self.history)}
        if self._over() and self.end_reason() == "showdown":
            seen["other"] = CARDS[self.hands[1 - seat]]
        return seen

    def describe(self, action: int) -> str:
        facing_bet = BET in self.history
        return ("call" if facing_bet else "bet") if action == BET else ("fold" if facing_bet else "pass")

    def determinize(self, seat: int, rng) -> None:
        # The other hand is either card `seat` does not hold (while the game runs, it
        # has seen no other card).
        unseen = [c for c in range(3) if c != self.hands[seat]]
        self.hands[1 - seat] = unseen[rng.below(2)]

    def copy(self) -> KuhnPoker:
        other = object.__new__(type(self))
        other.params, other.chance = self.params, self.chance.copy()  # a stream of its own
        other.hands, other.history = list(self.hands), list(self.history)
        return other

    def render(self) -> str:
        return f"hands {CARDS[self.hands[0]]} / {CARDS[self.hands[1]]}, history {self.history}"
