"""The params model of Fabryka Czekolady (defaults in data/rules.toml)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from simcore import params
from simcore.params import Params

# Kinds in engine order: the four fillings first (majorities and sets), then the rest.
FILLINGS = ("biscuits", "blueberries", "strawberries", "almonds")
KINDS = FILLINGS + ("green", "yellow", "pink", "pawns", "meeples", "dice", "white")
MAX_CARDS = 128
MAX_HAND = 16
MAX_ROUNDS = 16

Count = Field(ge=0, le=MAX_CARDS)
Points = Field(ge=-100, le=100)


class Deck(Params):
    biscuits: int = Count
    blueberries: int = Count
    strawberries: int = Count
    almonds: int = Count
    green: int = Count
    yellow: int = Count
    pink: int = Count
    pawns: int = Count
    meeples: int = Count
    dice: int = Count
    white: int = Count


class Majority(Params):
    biscuits: int = Points
    blueberries: int = Points
    strawberries: int = Points
    almonds: int = Points


class CardPoints(Params):
    green: int = Points
    yellow: int = Points
    pink: int = Points
    pawns: int = Points
    meeples: int = Points
    dice: int = Points
    white: int = Points


class Compensation(params.Compensation):
    max_positions: ClassVar[int] = 2


class FabrykaParams(Params):
    players: Literal[2]
    deck: Deck
    removed_unseen: int = Field(ge=0, le=MAX_CARDS)
    hand_size: int = Field(ge=1, le=MAX_HAND - 1)
    opening_belt: int = Field(ge=0, le=MAX_CARDS)
    rounds: int = Field(ge=1, le=MAX_ROUNDS)
    collect_count: int = Field(ge=1, le=MAX_CARDS)
    white_to_win: int = Field(ge=1, le=MAX_CARDS)
    set_points: int = Points
    majority: Majority
    card_points: CardPoints
    compensation: Compensation

    @model_validator(mode="after")
    def _enough_cards(self) -> "FabrykaParams":
        total = sum(self.deck.model_dump().values())
        if total > MAX_CARDS:
            raise ValueError(f"the deck has {total} cards; at most {MAX_CARDS} are supported")
        needed = self.removed_unseen + self.opening_belt + self.rounds * self.players * self.hand_size
        if needed > total:
            raise ValueError(
                f"the deck has {total} cards but setup and {self.rounds} rounds need {needed} "
                "(removed_unseen + opening_belt + rounds x players x hand_size)"
            )
        return self
