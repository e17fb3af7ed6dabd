"""The params model of Chocolate Factory (Alley Cat Games); defaults in data/rules.toml.

Component lists are short text so a designer can type a real card in by TOML:
- a factory part is a name, a coal cost and what it does, one string per option:
  "bean > cocoa", "chunks > 2 nuts", "2 bean > chunks + fingers", "refined > 2 any"
  (converters; inputs and outputs are pieces or classes: bar, wrapped, refined, any),
  "upgrade 2" (an upgrader with 2 upgrade actions), "copy 2" (a repeater adding 2
  copies: x3), "chute" (free, any number of times a shift, to the store room);
- a Corner Shop order is its stages in order, "pieces = money" separated by "/":
  "fingers = 2 / 2 fingers = 6";
- a Department Store side is its supply rule: "each caramel", "same refined",
  "different refined", "sets 2 bar" (a step per 2 pieces), "pair bar=2 wrapped=3
  boxed=4" (exactly two pieces of one class);
- a Factory Manager card (Weekly Target or Demand) is its objectives separated by ";":
  "money 60" (Corner Shop money), "orders 2" or "orders 1 large" (completed orders, any
  size or one), "steps 1 x 5" (markers moved back 1 step on 5 different stores), "steps
  2 at palace" (on that store), "supply 2 boxed" / "supply chunks + fingers + caramel"
  (a chocolate order of exactly those pieces), "supply 4 same refined", "supply 3
  different refined", "special medium" (a Special Order dealt at setup, to complete).
"""
from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from simcore import params
from simcore.params import Params

# Pieces in engine order, and the classes a card may name (bit masks over the pieces).
PIECES = ("bean", "cocoa", "chunks", "fingers", "caramel", "nuts", "boxed")
CLASSES = {name: 1 << k for k, name in enumerate(PIECES)}
CLASSES |= {"bar": 0b0001100, "wrapped": 0b0110000, "refined": 0b1111100, "any": 0b1111111}
STORES = ("palace", "fresh_fancies", "salters", "house_of_luxury", "dunstan_gilbert")
STORE_TITLES = ("The Palace Boutique", "Fresh Fancies", "Salter's Emporium",
                "House of Luxury", "Dunstan & Gilbert's")
SIZES = ("small", "medium", "large")
# Every employee the engine implements, in engine order (its effect is fixed by its name;
# its amounts are params under `employees`).
EMPLOYEES = ("director", "miner", "operator", "salesman", "clerk", "decorator", "mechanic",
             "shop_agent", "expert_miner", "expert_operator", "dealer", "engineer",
             "supervisor", "store_agent", "packer", "technician", "owner", "helpers", "prodigy")
# The Master Chocolatier's employees: no Department Store access.
STORELESS = ("owner", "helpers", "prodigy")

MAX_PARTS = 48          # printed + deck A + deck B
MAX_OPTIONS = 4
MAX_SYMBOLS = 6         # pieces in or out of one option
MAX_ORDERS = 32         # per size
MAX_STAGES = 4
MAX_STAGE_PIECES = 8
MAX_DAYS = 10
MAX_SQUARES = 6
MAX_DECK_EMPLOYEES = 12
MAX_HELD_ORDERS = 5     # three regular Corner Shop orders and up to two Special Orders
MAX_GOALS = 4           # objectives on one Factory Manager card
MAX_TARGETS = 16
MAX_DEMANDS = 32
MAX_SOLO_CARDS = 12     # the Weekly Target and the Demands in play
GOAL_KINDS = ("money", "orders", "steps", "supply", "special")
SUPPLY_RULES = ("exact", "same", "different")

_TERM = re.compile(r"^(?:(\d+)\s+)?([a-z|]+)$")


def parse_pieces(text: str) -> list[int]:
    """'2 bean + chunks' -> one class mask per piece."""
    out = []
    for term in text.split("+"):
        m = _TERM.match(term.strip())
        if not m:
            raise ValueError(f"{term.strip()!r} is not '[count] piece'")
        count = int(m.group(1) or 1)
        mask = 0
        for name in m.group(2).split("|"):
            if name not in CLASSES:
                raise ValueError(f"unknown piece {name!r}; known: {', '.join(CLASSES)}")
            mask |= CLASSES[name]
        if not 1 <= count <= MAX_SYMBOLS:
            raise ValueError(f"count {count} in {text!r} is not in 1..{MAX_SYMBOLS}")
        out += [mask] * count
    if len(out) > MAX_SYMBOLS:
        raise ValueError(f"{text!r} names {len(out)} pieces; at most {MAX_SYMBOLS}")
    return out


def parse_option(text: str) -> tuple[str, int, list[int], list[int], bool]:
    """(kind, amount, inputs, outputs, moves) of one option of a part. "move" moves one
    piece of the part's square to another square (a converter option without pieces);
    "upgrade N move" / "copy N move" may then move the piece made to another square."""
    words = text.split()
    if words == ["chute"]:
        return "chute", 0, [], [], False
    if words == ["move"]:
        return "converter", 0, [], [], True
    moves = words[-1:] == ["move"] and len(words) == 3
    if len(words) in (2, 3) and words[0] in ("upgrade", "copy") and words[1].isdigit() \
            and (len(words) == 2 or moves):
        n = int(words[1])
        if not 1 <= n <= 9:
            raise ValueError(f"{text!r}: the amount must be 1..9")
        if moves and n != 1:
            raise ValueError(f"{text!r}: a part that moves what it made works on one piece")
        return ("upgrader" if words[0] == "upgrade" else "repeater"), n, [], [], moves
    if text.count(">") != 1:
        raise ValueError(f"{text!r} is not 'inputs > outputs', 'upgrade N [move]', 'copy N [move]', "
                         "'move' or 'chute'")
    left, right = text.split(">")
    return "converter", 0, parse_pieces(left), parse_pieces(right), False


def parse_order(text: str) -> list[tuple[list[int], int]]:
    """Stages of a Corner Shop order: (one piece index per piece, money)."""
    stages = []
    for part in text.split("/"):
        if part.count("=") != 1:
            raise ValueError(f"stage {part.strip()!r} is not 'pieces = money'")
        pieces, money = part.split("=")
        masks = parse_pieces(pieces)
        if any(m & (m - 1) or m & CLASSES["bean"] | m & CLASSES["cocoa"] for m in masks):
            raise ValueError(f"stage {part.strip()!r}: orders name refined pieces, one kind each")
        if len(masks) > MAX_STAGE_PIECES:
            raise ValueError(f"stage {part.strip()!r}: at most {MAX_STAGE_PIECES} pieces")
        stages.append(([m.bit_length() - 1 for m in masks], int(money.strip())))
    if not 1 <= len(stages) <= MAX_STAGES:
        raise ValueError(f"{text!r}: an order has 1..{MAX_STAGES} stages")
    return stages


STORE_RULES = ("each", "same", "different", "sets", "pair", "money", "as", "count", "chain",
               "match", "pairs")
MAX_STORE_PAIRS = 6


def parse_store(text: str) -> tuple[str, int, int, list[tuple[int, int]]]:
    """(rule, accepted mask, number, [(class mask, steps)]): the number is the pieces per
    step (sets), the money per step (money) or the bit mask of the counts allowed
    (count); the list holds pair's classes, chain's kinds in order with the steps for
    each length, or match's sets of two kinds."""
    words = text.split()
    if not words or words[0] not in STORE_RULES:
        raise ValueError(f"{text!r}: a store side starts with one of {', '.join(STORE_RULES)}")
    rule = words[0]
    if rule == "money":
        if len(words) != 2 or not words[1].isdigit() or int(words[1]) < 1:
            raise ValueError(f"{text!r}: expected 'money N' (a step per N of today's Corner Shop money)")
        return rule, 0, int(words[1]), []
    if rule == "as":
        if words != ["as", "other"]:
            raise ValueError(f"{text!r}: expected 'as other'")
        return rule, 0, 1, []
    if rule == "pairs":
        if len(words) != 2:
            raise ValueError(f"{text!r}: expected 'pairs CLASS'")
        (mask,) = parse_pieces(words[1])
        return rule, mask, 2, []
    if rule == "count":
        if len(words) != 3 or not all(w.isdigit() and 1 <= int(w) <= 9 for w in words[1].split("|")):
            raise ValueError(f"{text!r}: expected 'count N|N|.. CLASS' (counts 1..9)")
        (mask,) = parse_pieces(words[2])
        return rule, mask, sum(1 << int(w) for w in words[1].split("|")), []
    if rule == "chain":
        if "steps" not in words:
            raise ValueError(f"{text!r}: expected 'chain KIND.. steps N..'")
        k = words.index("steps")
        kinds, steps = words[1:k], words[k + 1:]
        if not 1 <= len(kinds) <= MAX_STORE_PAIRS or len(steps) != len(kinds) \
                or not all(s.isdigit() for s in steps):
            raise ValueError(f"{text!r}: 1..{MAX_STORE_PAIRS} kinds and one step count per length")
        masks = [parse_pieces(w)[0] for w in kinds]
        if any(m & (m - 1) for m in masks) or len(set(masks)) != len(masks):
            raise ValueError(f"{text!r}: a chain names different single kinds")
        return rule, sum(masks), 1, list(zip(masks, map(int, steps)))
    if rule == "match":
        sets = []
        for w in words[1:]:
            kinds, _, steps = w.partition("=")
            masks = parse_pieces(kinds)
            if len(masks) != 2 or any(m & (m - 1) for m in masks) or masks[0] == masks[1] \
                    or not steps.isdigit():
                raise ValueError(f"{text!r}: expected sets 'kind+kind=steps' of two different kinds")
            sets.append((masks[0] | masks[1], int(steps)))
        if not 1 <= len(sets) <= MAX_STORE_PAIRS:
            raise ValueError(f"{text!r}: 1..{MAX_STORE_PAIRS} sets")
        mask = 0
        for m, _ in sets:
            if mask & m:
                raise ValueError(f"{text!r}: the sets overlap")
            mask |= m
        return rule, mask, 2, sets
    if rule == "pair":
        pairs = []
        for w in words[1:]:
            name, _, steps = w.partition("=")
            if name not in CLASSES or not steps.isdigit():
                raise ValueError(f"{text!r}: expected class=steps, got {w!r}")
            pairs.append((CLASSES[name], int(steps)))
        if not pairs:
            raise ValueError(f"{text!r}: pair needs at least one class=steps")
        mask = 0
        for m, _ in pairs:
            if mask & m:
                raise ValueError(f"{text!r}: the pair classes overlap")
            mask |= m
        return rule, mask, 2, pairs
    per = 1
    rest = words[1:]
    if rule == "sets":
        if len(rest) != 2 or not rest[0].isdigit() or not 1 <= int(rest[0]) <= 9:
            raise ValueError(f"{text!r}: expected 'sets N pieces'")
        per, rest = int(rest[0]), rest[1:]
    if len(rest) != 1:
        raise ValueError(f"{text!r}: expected one piece class")
    (mask,) = parse_pieces(rest[0])
    return rule, mask, per, []


def parse_goal(text: str) -> dict:
    """One objective of a Factory Manager card, as the engine's fields."""
    words = text.split()
    g = {"kind": words[0] if words else "", "amount": 0, "size": -1, "stores": 0, "store": -1,
         "rule": 0, "mask": 0, "need": [0] * len(PIECES)}
    if g["kind"] not in GOAL_KINDS:
        raise ValueError(f"{text!r}: an objective starts with one of {', '.join(GOAL_KINDS)}")
    rest = words[1:]
    if g["kind"] == "special":
        if rest not in ([s] for s in SIZES):
            raise ValueError(f"{text!r}: expected 'special small|medium|large'")
        g["size"] = SIZES.index(rest[0])
        return g
    if g["kind"] == "supply":
        if len(rest) == 3 and rest[0].isdigit() and rest[1] in ("same", "different"):
            (mask,) = parse_pieces(rest[2])
            g["rule"], g["amount"], g["mask"] = SUPPLY_RULES.index(rest[1]), int(rest[0]), mask
            if not 1 <= g["amount"] <= MAX_SYMBOLS:
                raise ValueError(f"{text!r}: 1..{MAX_SYMBOLS} pieces")
            if g["rule"] == 2 and bin(mask).count("1") < g["amount"]:
                raise ValueError(f"{text!r}: {rest[2]} has fewer kinds than {g['amount']}")
            return g
        masks = parse_pieces(" ".join(rest))
        if any(m & (m - 1) for m in masks):
            raise ValueError(f"{text!r}: an exact chocolate order names one kind per piece")
        for m in masks:
            g["need"][m.bit_length() - 1] += 1
        g["amount"] = len(masks)
        return g
    if not rest or not rest[0].isdigit() or int(rest[0]) < 1:
        raise ValueError(f"{text!r}: expected a positive number after {g['kind']!r}")
    g["amount"] = int(rest[0])
    if g["kind"] == "money" and len(rest) == 1:
        return g
    if g["kind"] == "orders" and (len(rest) == 1 or len(rest) == 2 and rest[1] in SIZES):
        g["size"] = SIZES.index(rest[1]) if len(rest) == 2 else -1
        return g
    if g["kind"] == "steps" and len(rest) == 3 and rest[1] == "x" and rest[2].isdigit() \
            and 1 <= int(rest[2]) <= len(STORES):
        g["stores"] = int(rest[2])
        return g
    if g["kind"] == "steps" and len(rest) == 3 and rest[1] == "at" and rest[2] in STORES:
        g["stores"], g["store"] = 1, STORES.index(rest[2])
        return g
    raise ValueError(f"{text!r}: expected 'money N', 'orders N [size]', 'steps N x STORES' "
                     "or 'steps N at STORE'")


def parse_card(text: str) -> list[dict]:
    goals = [parse_goal(t.strip()) for t in text.split(";")]
    if len(goals) > MAX_GOALS:
        raise ValueError(f"{text!r}: at most {MAX_GOALS} objectives on a card")
    if sum(g["kind"] == "supply" for g in goals) > 1:
        # A chocolate order is supplied by naming its card: one per card.
        raise ValueError(f"{text!r}: at most one chocolate order on a card")
    return goals


Count = Field(ge=0, le=99)


class Part(Params):
    name: str = Field(min_length=1, max_length=24)
    coal: int = Field(ge=0, le=20)
    does: list[str] = Field(min_length=1, max_length=MAX_OPTIONS)

    @field_validator("does")
    @classmethod
    def _parse(cls, v: list[str]) -> list[str]:
        kinds = [parse_option(s)[0] for s in v]
        if len(v) > 1 and any(k != "converter" for k in kinds):
            raise ValueError("only converters have several options")
        return v


class PrintedPart(Part):
    slot: int = Field(ge=0, le=2 * MAX_SQUARES - 1)


class Parts(Params):
    printed: list[PrintedPart] = Field(max_length=2 * MAX_SQUARES)
    deck_a: list[Part] = Field(min_length=1, max_length=MAX_PARTS)
    deck_b: list[Part] = Field(min_length=1, max_length=MAX_PARTS)


class EmployeePackets(Params):
    players_2: list[int] = Field(min_length=2, max_length=2)
    players_3: list[int] = Field(min_length=3, max_length=3)
    players_4: list[int] = Field(min_length=4, max_length=4)


class Expansion(Params):
    deck_a: list[Part] = Field(max_length=MAX_PARTS)
    deck_b: list[Part] = Field(max_length=MAX_PARTS)
    removed: int = Field(ge=0, le=MAX_PARTS)
    employees: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)
    packets: EmployeePackets
    owner_uses: int = Field(ge=1, le=9)
    helpers_uses: int = Field(ge=1, le=9)
    prodigy_upgrades: int = Field(ge=1, le=9)

    @field_validator("employees")
    @classmethod
    def _storeless(cls, v: list[str]) -> list[str]:
        for name in v:
            if name not in STORELESS:
                raise ValueError(f"{name!r}: the extra deck holds {', '.join(STORELESS)}")
        return v



class Orders(Params):
    small: list[str] = Field(min_length=1, max_length=MAX_ORDERS)
    medium: list[str] = Field(min_length=1, max_length=MAX_ORDERS)
    large: list[str] = Field(min_length=1, max_length=MAX_ORDERS)
    start: list[Literal["small", "medium", "large"]] = Field(min_length=1, max_length=3)

    @field_validator("small", "medium", "large")
    @classmethod
    def _parse(cls, v: list[str]) -> list[str]:
        for s in v:
            parse_order(s)
        return v


class Side(Params):
    a: str
    b: str
    c: str
    d: str

    @field_validator("a", "b", "c", "d")
    @classmethod
    def _parse(cls, v: str) -> str:
        parse_store(v)
        return v


class Stores(Params):
    sides: str = Field(pattern=r"^(A|B|random|[ABCD]{5})$")
    track: int = Field(ge=1, le=99)
    awards: list[int] = Field(min_length=1, max_length=4)
    follow_divisor: int = Field(ge=1, le=9)
    diversity: list[int] = Field(min_length=6, max_length=6)
    palace: Side
    fresh_fancies: Side
    salters: Side
    house_of_luxury: Side
    dunstan_gilbert: Side


class Decks(Params):
    palace: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)
    fresh_fancies: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)
    salters: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)
    house_of_luxury: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)
    dunstan_gilbert: list[str] = Field(min_length=1, max_length=MAX_DECK_EMPLOYEES)

    @field_validator("*")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        for name in v:
            if name in STORELESS:
                raise ValueError(f"{name!r} belongs to the expansion's own deck (expansion.employees)")
            if name not in EMPLOYEES:
                raise ValueError(f"unknown employee {name!r}; known: {', '.join(EMPLOYEES)}")
        return v


class Employees(Params):
    director_multiplier: int = Field(ge=1, le=9)
    miner_coal: int = Count
    expert_miner_coal: int = Count
    operator_moves: int = Field(ge=1, le=9)
    expert_operator_moves: int = Field(ge=1, le=9)
    salesman_bonus: int = Count
    clerk_skips: int = Field(ge=1, le=9)
    decorator_upgrades: int = Field(ge=1, le=9)
    mechanic_divisor: int = Field(ge=1, le=9)
    shop_agent_uses: int = Field(ge=1, le=9)
    dealer_uses: int = Field(ge=1, le=9)
    dealer_fewer: int = Field(ge=1, le=MAX_STAGE_PIECES)
    engineer_shifts: int = Field(ge=1, le=4)
    supervisor_beans: int = Field(ge=1, le=9)
    packer_uses: int = Field(ge=1, le=9)
    technician_coal: int = Count
    store_agent_saturday: bool
    act_before_push: bool
    decks: Decks


class Packets(Params):
    players_2: list[int] = Field(min_length=2, max_length=2)
    players_3: list[int] = Field(min_length=3, max_length=3)
    players_4: list[int] = Field(min_length=4, max_length=4)


class Factory(Params):
    squares: int = Field(ge=2, le=MAX_SQUARES)
    shifts: int = Field(ge=1, le=6)
    beans_per_load: int = Field(ge=1, le=9)
    keep: int = Field(ge=0, le=20)
    coal_per_chocolate: int = Field(ge=0, le=9)


class Scoring(Params):
    most_orders: int = Count
    per_chocolate: int = Count
    per_coal: int = Count


class Solo(Params):
    keep: int = Field(ge=0, le=20)
    initial_demands: int = Field(ge=0, le=4)
    daily_demands: int = Field(ge=0, le=MAX_DAYS)
    discard: list[Literal[STORES]] = Field(max_length=MAX_DAYS)
    targets: list[str] = Field(min_length=1, max_length=MAX_TARGETS)
    demands: list[str] = Field(max_length=MAX_DEMANDS)

    @field_validator("targets", "demands")
    @classmethod
    def _parse(cls, v: list[str]) -> list[str]:
        for s in v:
            parse_card(s)
        return v

    @field_validator("demands")
    @classmethod
    def _no_special(cls, v: list[str]) -> list[str]:
        for s in v:
            if any(g["kind"] == "special" for g in parse_card(s)):
                raise ValueError(f"{s!r}: Special Orders come with a Weekly Target, not a Demand")
        return v


class Compensation(params.Compensation):
    max_positions: ClassVar[int] = 4


class AlleyCatParams(Params):
    players: int = Field(ge=1, le=4)
    coal_per_day: list[int] = Field(min_length=1, max_length=MAX_DAYS)
    deck_per_day: list[Literal["A", "B"]] = Field(min_length=1, max_length=MAX_DAYS)
    packets: Packets
    factory: Factory
    parts: Parts
    employees: Employees
    orders: Orders
    stores: Stores
    scoring: Scoring
    solo: Solo
    master_chocolatier: bool
    expansion: Expansion
    compensation: Compensation

    @field_validator("coal_per_day")
    @classmethod
    def _coal(cls, v: list[int]) -> list[int]:
        if min(v) < 0:
            raise ValueError("coal per day cannot be negative")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "AlleyCatParams":
        days = len(self.coal_per_day)
        if len(self.deck_per_day) != days:
            raise ValueError(f"deck_per_day names {len(self.deck_per_day)} days, coal_per_day {days}")
        # The display is one employee from each store's deck and as many parts, split
        # into the same packets.
        display = len(STORES)
        if not self.master_chocolatier and any(x in self.stores.sides for x in "CD"):
            raise ValueError("stores.sides: C and D sides need master_chocolatier = true")
        for deck in ("A", "B"):
            need = self.deck_per_day.count(deck) * display
            have = len(getattr(self.parts, f"deck_{deck.lower()}"))
            if self.master_chocolatier:
                have += len(getattr(self.expansion, f"deck_{deck.lower()}")) - self.expansion.removed
            if need > have:
                raise ValueError(f"parts deck {deck} has {have} parts; {need} are drawn")
        # A part's name names its result columns (part_<name>_day): two parts of one
        # name would be one column.
        decks = [("parts.printed", self.parts.printed), ("parts.deck_a", self.parts.deck_a),
                 ("parts.deck_b", self.parts.deck_b)]
        if self.master_chocolatier:
            decks += [("expansion.deck_a", self.expansion.deck_a), ("expansion.deck_b", self.expansion.deck_b)]
        seen: dict[str, str] = {}
        for where, parts in decks:
            for part in parts:
                if part.name in seen:
                    also = "" if seen[part.name] == where else f" and in {seen[part.name]}"
                    raise ValueError(f"part name {part.name!r} is given twice (in {where}{also}); "
                                     "every part needs a name of its own")
                seen[part.name] = where
        for n in (2, 3, 4):
            sizes = getattr(self.packets, f"players_{n}")
            if sum(sizes) != display or min(sizes) < 1 or max(sizes) > 3:
                raise ValueError(f"packets.players_{n} must be {n} sizes of 1..3 adding up to {display}")
            sizes = getattr(self.expansion.packets, f"players_{n}")
            if sum(sizes) != display + 1 or min(sizes) < 1 or max(sizes) > 3:
                raise ValueError(f"expansion.packets.players_{n} must be {n} sizes of 1..3 adding up to "
                                 f"{display + 1} (the employees and the extra one)")
        if self.master_chocolatier and len(self.expansion.employees) < days:
            raise ValueError("expansion.employees has fewer employees than there are days")
        solo = self.solo
        if solo.daily_demands > days or len(solo.discard) > days:
            raise ValueError(f"solo: daily_demands and discard name at most one per day ({days} days)")
        if solo.initial_demands + solo.daily_demands > len(solo.demands):
            raise ValueError(f"solo.demands has {len(solo.demands)} cards; "
                             f"{solo.initial_demands + solo.daily_demands} are dealt")
        if 1 + solo.initial_demands + solo.daily_demands > MAX_SOLO_CARDS:
            raise ValueError(f"solo: at most {MAX_SOLO_CARDS - 1} Demands in play")
        room = MAX_HELD_ORDERS - len(self.orders.start)
        for t in solo.targets:
            specials = [g["size"] for g in parse_card(t) if g["kind"] == "special"]
            if len(specials) > room:
                raise ValueError(f"solo target {t!r}: at most {room} Special Orders")
            for z in set(specials):
                if self.orders.start.count(SIZES[z]) + specials.count(z) > len(getattr(self.orders, SIZES[z])):
                    raise ValueError(f"solo target {t!r}: too few {SIZES[z]} orders to deal")
        for name in STORES:
            if len(getattr(self.employees.decks, name)) < days:
                raise ValueError(f"employees.decks.{name} has fewer employees than there are days")
        n_parts = (len(self.parts.printed) + len(self.parts.deck_a) + len(self.parts.deck_b)
                   + len(self.expansion.deck_a) + len(self.expansion.deck_b))
        if n_parts > MAX_PARTS:
            raise ValueError(f"{n_parts} parts; at most {MAX_PARTS}")
        slots = [p.slot for p in self.parts.printed]
        if len(set(slots)) != len(slots) or max(slots, default=0) >= 2 * self.factory.squares:
            raise ValueError("printed parts need distinct slots of the factory")
        return self


def final_day_order(params: dict[str, Any]) -> list[int]:
    """Each turn position's place in the final day's turn order: the first player moves
    one seat on each day, so the final day starts with turn position days - 1."""
    n, days = params["players"], len(params["coal_per_day"])
    return [(position - (days - 1)) % n for position in range(n)]
