"""The params model of Enemy Chocolatier (defaults in data/rules.toml)."""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from simcore import params
from simcore.params import Params

# Ingredient colours in engine order; gray (the last) is no ingredient.
COLOURS = ("pink", "brown", "tan", "red", "gray")
INGREDIENTS = ("sugar", "chocolate", "nuts", "love")
# Abilities in engine order (rules.pxd numbers them the same way).
ABILITIES = ("buy3", "buy_closed", "buy_anywhere", "all_dollars_plus1", "all_points_plus1",
             "cash_points", "ten_dollar_houses")

# Engine limits (rules.pxd): a neighbourhood is a bit of a 64-bit mask; a house index is
# an action below STOP = MAX_HOUSES.
MAX_NEIGHBOURHOODS = 64
MAX_HOUSES = 256
MAX_NB_HOUSES = 16
MAX_SEGMENTS = 16
MAX_SLOTS = 8
MAX_TOUCH = 64
MAX_RECIPES = 32
MAX_RECORD = 32

Money = Field(ge=0, le=1000)
Price = Annotated[int, Field(ge=0, le=1000)]
Colour = Literal[COLOURS]
Ability = Literal[ABILITIES]
Need = Annotated[int, Field(ge=0, le=MAX_HOUSES)]
# Lists, not tuples, so that a built model dumps back to the TOML values it came from.
Pair = Annotated[list[str], Field(min_length=2, max_length=2)]
Recipe = Annotated[list[Need], Field(min_length=4, max_length=4)]


class Neighbourhood(Params):
    slot: str
    prices: list[Price] = Field(min_length=1, max_length=MAX_NB_HOUSES)
    colours: list[Colour] = Field(min_length=1, max_length=MAX_NB_HOUSES)
    dollars: int = Field(ge=0, le=100)
    points: int = Field(ge=0, le=100)
    abilities: list[Ability]

    @model_validator(mode="after")
    def _one_colour_per_house(self) -> "Neighbourhood":
        if len(self.prices) != len(self.colours):
            raise ValueError(f"neighbourhood {self.slot}: {len(self.prices)} prices but "
                             f"{len(self.colours)} colours")
        return self


class Board(Params):
    slots: list[str] = Field(min_length=1, max_length=MAX_SLOTS)
    factory_slots: list[str] = Field(min_length=1)
    inner_touch: list[Pair]
    next_touch: list[Pair] = Field(max_length=MAX_TOUCH)
    ring_closed: bool
    shuffle_segments: bool
    segments: list[list[Neighbourhood]] = Field(min_length=1, max_length=MAX_SEGMENTS)

    @model_validator(mode="after")
    def _consistent(self) -> "Board":
        if len(set(self.slots)) != len(self.slots):
            raise ValueError(f"slots {self.slots} repeat a name")
        known = set(self.slots)
        for name in self.factory_slots + [s for pair in self.inner_touch + self.next_touch for s in pair]:
            if name not in known:
                raise ValueError(f"slot {name!r} is not one of {self.slots}")
        for a, b in self.inner_touch:
            if a == b:
                raise ValueError(f"inner_touch pair ({a}, {b}) joins a place to itself")
        for k, seg in enumerate(self.segments):
            if [nb.slot for nb in seg] != self.slots:
                raise ValueError(f"segment {k + 1} lists places {[nb.slot for nb in seg]}, "
                                 f"expected one per slot in order {self.slots}")
        if len(self.segments) * len(self.slots) > MAX_NEIGHBOURHOODS:
            raise ValueError(f"at most {MAX_NEIGHBOURHOODS} neighbourhoods are supported")
        houses = sum(len(nb.prices) for seg in self.segments for nb in seg)
        if houses > MAX_HOUSES:
            raise ValueError(f"the board has {houses} houses; at most {MAX_HOUSES} are supported")
        return self


class StartMoney(Params):
    first: int = Money
    step: int = Field(ge=0, le=100)


class Income(Params):
    base: int = Field(ge=0, le=100)
    cash_per_point: int = Field(ge=1, le=1000)


class Buys(Params):
    per_turn: int = Field(ge=1, le=MAX_HOUSES)
    with_buy3: int = Field(ge=1, le=MAX_HOUSES)


class Buyout(Params):
    price: int = Money
    to_bank: int = Money
    ten_price: int = Money
    ten_to_bank: int = Money

    @model_validator(mode="after")
    def _bank_part(self) -> "Buyout":
        if self.to_bank > self.price or self.ten_to_bank > self.ten_price:
            raise ValueError("the bank's part of a buy-out cannot exceed its price")
        return self


class RainChecks(Params):
    earned: int = Field(ge=0, le=100)


class Win(Params):
    points: int = Field(ge=1, le=10000)


class Sim(Params):
    round_cap: int = Field(ge=1, le=100000)
    record_rounds: int = Field(ge=1, le=MAX_RECORD)


class Compensation(params.Compensation):
    max_positions: ClassVar[int] = 6


class EnemyParams(Params):
    players: int = Field(ge=2, le=6)
    start_money: StartMoney
    income: Income
    buys: Buys
    buyout: Buyout
    rain_checks: RainChecks
    win: Win
    sim: Sim
    recipes: list[Recipe] = Field(min_length=1, max_length=MAX_RECIPES)
    board: Board
    compensation: Compensation

    @model_validator(mode="after")
    def _enough_recipes(self) -> "EnemyParams":
        if len(self.recipes) < self.players:
            raise ValueError(f"{len(self.recipes)} recipe cards cannot be dealt to {self.players} players")
        if any(sum(r) == 0 for r in self.recipes):
            raise ValueError("a recipe needs at least one ingredient")
        return self
