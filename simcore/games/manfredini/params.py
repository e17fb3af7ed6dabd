"""The params model of Chocolate Factory (Manfredini) (defaults in data/rules.toml)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from simcore import params
from simcore.params import Params

# Engine order of the named components; the C arrays of rules.pxd follow these tuples.
SPECIALISTS = ("temp", "lift_operator", "sorter", "runner", "trucker", "machinist", "packer")
RECIPES = ("chocolate_peanuts", "chocolate_pretzels", "lollipops", "chocolate_bar", "gumdrops",
           "truffles", "toffee", "fudge", "caramels", "bonbons")
TRUCKS = ("big", "small", "spare")
PLANTATION_ABILITIES = ("mixer", "break_room", "outlet")
CANDY_ABILITIES = ("candy_machine", "decorating", "outlet")
VARIANTS = ("full", "plantation", "candy")
MAX_SPACES = 12
MAX_HAND = 8
MAX_TRUCK = 24
MAX_LOOK = 6
MAX_TOKENS = 120

Small = Field(ge=0, le=MAX_TOKENS)
Points = Field(ge=-100, le=100)


class Factory(Params):
    spaces: int = Field(ge=2, le=MAX_SPACES)
    pawns: int = Field(ge=1, le=MAX_SPACES)
    plantation: list[Literal["mixer", "break_room", "outlet"]]
    candy: list[Literal["candy_machine", "decorating", "outlet"]]

    @model_validator(mode="after")
    def _one_ability_per_space(self) -> "Factory":
        if self.pawns > self.spaces:
            raise ValueError(f"factory.pawns = {self.pawns} exceeds the {self.spaces} spaces they stand on")
        for side in ("plantation", "candy"):
            if len(getattr(self, side)) != self.spaces:
                raise ValueError(f"factory.{side} lists {len(getattr(self, side))} abilities "
                                 f"for {self.spaces} spaces")
        return self


class Truck(Params):
    capacity: int = Field(ge=0, le=MAX_TRUCK)
    icons: int = Field(ge=0, le=MAX_TRUCK)
    coloured: bool

    @model_validator(mode="after")
    def _icons_fit(self) -> "Truck":
        if self.icons > self.capacity:
            raise ValueError(f"a truck of {self.capacity} spaces cannot show {self.icons} worker icons")
        return self


class Trucks(Params):
    big: Truck
    small: Truck
    spare: Truck


class Specialists(Params):
    lift_operator: int = Field(ge=0, le=8)
    sorter: int = Field(ge=0, le=8)
    runner: int = Field(ge=0, le=8)
    trucker: int = Field(ge=0, le=8)
    machinist: int = Field(ge=0, le=8)
    packer: int = Field(ge=0, le=8)


class Recipe(Params):
    sugar: int = Field(ge=0, le=8)
    chocolate: int = Field(ge=0, le=8)
    candies: int = Field(ge=1, le=8)
    uses: int = Field(ge=1, le=8)
    points: int = Points

    @model_validator(mode="after")
    def _costs_something(self) -> "Recipe":
        if self.sugar + self.chocolate == 0:
            raise ValueError("a recipe must cost at least one good")
        return self


class Recipes(Params):
    chocolate_peanuts: Recipe
    chocolate_pretzels: Recipe
    lollipops: Recipe
    chocolate_bar: Recipe
    gumdrops: Recipe
    truffles: Recipe
    toffee: Recipe
    fudge: Recipe
    caramels: Recipe
    bonbons: Recipe


class Supply(Params):
    sugar: int = Small
    cacao: int = Small
    coins: int = Small
    candy_per_recipe: int = Field(ge=0, le=30)


class Setup(Params):
    temp_cards: int = Field(ge=0, le=MAX_HAND)
    sugar: int = Field(ge=0, le=MAX_TRUCK)
    cacao: int = Field(ge=0, le=MAX_TRUCK)
    coins: int = Field(ge=0, le=MAX_TOKENS)
    recipes_drawn: list[int] = Field(min_length=3, max_length=3)


class Plantation(Params):
    outlet_coins: int = Field(ge=0, le=10)
    break_room_cost: int = Field(ge=0, le=10)
    break_room_look: int = Field(ge=1, le=MAX_LOOK)


class Candy(Params):
    outlet_coins: int = Field(ge=0, le=10)
    decorate_all_cost: int = Field(ge=0, le=10)
    recipe_uses: Literal["per_turn", "per_machine"]


class Scoring(Params):
    good: int = Points
    decorated: int = Points
    coin: int = Points
    distinct_type: int = Points


class PlantationOnly(Params):
    chocolate: int = Points
    sugar: int = Points
    coin: int = Points


class CandyOnly(Params):
    specialists: int = Field(ge=0, le=18)
    specialists_in_opening_hand: bool
    coins: int = Field(ge=0, le=MAX_TOKENS)
    sugar: int = Field(ge=0, le=MAX_TRUCK * 3)
    chocolate: int = Field(ge=0, le=MAX_TRUCK * 3)


class Compensation(params.Compensation):
    max_positions: ClassVar[int] = 4


class ManfrediniParams(Params):
    players: int = Field(ge=2, le=4)
    variant: Literal["full", "plantation", "candy"]
    hand_size: int = Field(ge=1, le=MAX_HAND)
    warehouse: int = Field(ge=1, le=MAX_TRUCK)
    shift_change_cost: int = Field(ge=0, le=10)
    lift_bonus: int = Field(ge=0, le=8)
    runner_reach: int = Field(ge=0, le=2)
    machinist_order: Literal["choice", "space_first"]
    shift_change_ability: bool
    factory: Factory
    trucks: Trucks
    specialists: Specialists
    recipes: Recipes
    supply: Supply
    setup: Setup
    plantation: Plantation
    candy: Candy
    scoring: Scoring
    plantation_only: PlantationOnly
    candy_only: CandyOnly
    compensation: Compensation

    @model_validator(mode="after")
    def _consistent(self) -> "ManfrediniParams":
        n = self.players
        if self.setup.temp_cards > self.hand_size:
            raise ValueError(f"setup.temp_cards = {self.setup.temp_cards} exceeds hand_size = {self.hand_size}")
        for k in self.setup.recipes_drawn:
            if not 0 <= k <= len(RECIPES):
                raise ValueError(f"setup.recipes_drawn: {k} recipes cannot be drawn from {len(RECIPES)}")
        if self.setup.sugar + self.setup.cacao > self.warehouse:
            raise ValueError("setup.sugar + setup.cacao do not fit in the warehouse")
        if n * self.setup.sugar > self.supply.sugar or n * self.setup.cacao > self.supply.cacao:
            raise ValueError("the starting goods need more sugar or cacao than supply holds")
        if n * self.setup.coins > self.supply.coins:
            raise ValueError(f"{n} players x setup.coins = {n * self.setup.coins} exceeds supply.coins")
        if self.variant == "candy":
            room = sum(t.capacity for t in (self.trucks.big, self.trucks.small, self.trucks.spare))
            if self.candy_only.sugar + self.candy_only.chocolate > room:
                raise ValueError("candy_only.sugar + candy_only.chocolate do not fit in the trucks")
            if n * self.candy_only.sugar > self.supply.sugar or n * self.candy_only.chocolate > self.supply.cacao:
                raise ValueError("candy_only goods need more sugar or chocolate than supply holds")
            if n * self.candy_only.coins > self.supply.coins:
                raise ValueError(f"{n} players x candy_only.coins = {n * self.candy_only.coins} exceeds supply.coins")
            if n * self.candy_only.specialists > sum(self.specialists.model_dump().values()):
                raise ValueError("candy_only.specialists x players exceeds the specialist deck")
        return self
