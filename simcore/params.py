"""Game params: a pydantic model per game whose defaults live in the game's data/*.toml.

The TOML holds one table per leaf param: `value`, `source` ("rulebook" or "assumed")
and `doc`. Nested tables group params (`[deck.almonds]` is the leaf `deck.almonds`).
A house rule is a plain TOML of values (`[deck]\nalmonds = 9`) or `--set deck.almonds=9`.
"""
from __future__ import annotations

import difflib

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simcore.errors import UserError

SOURCES = ("rulebook", "assumed")


class Params(BaseModel):
    """Base of every game's params model: strict about names, immutable once built."""

    # strict: a mistyped value (rounds = true, rounds = "4") is refused, not coerced.
    # defer_build: a model's validator is built when it first validates, so a command
    # builds only its own game's (building all four games' took 80 ms of every start).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


# The largest bonus (or malus) one turn position may get: far beyond any fair komi of
# the bundled games, small enough that no score overflows the results' columns.
COMPENSATION_LIMIT = 100


class Compensation(Params):
    """`compensation.points`: a house rule no rulebook has (komi, as in Go). Entry p is
    added at the end to the final score of the seat at turn position p (0 = acts first
    at the start); positions past the list's end get 0. Every game has it, default all
    zero; a game subclasses this with its largest table as `max_positions`."""

    max_positions: ClassVar[int]
    points: list[Annotated[int, Field(ge=-COMPENSATION_LIMIT, le=COMPENSATION_LIMIT)]]

    @field_validator("points")
    @classmethod
    def _one_per_position(cls, v: list[int]) -> list[int]:
        if len(v) > cls.max_positions:
            raise ValueError(f"{len(v)} entries; at most {cls.max_positions}, one per turn position "
                             "of the largest table")
        return v

    def by_position(self, n: int) -> list[int]:
        """The bonus of each of the n turn positions of a table."""
        return [self.points[p] if p < len(self.points) else 0 for p in range(n)]


@dataclass(frozen=True)
class ParamInfo:
    name: str  # dotted path, e.g. "deck.almonds"
    value: Any
    source: str
    doc: str


def read_defaults(path: Path) -> list[ParamInfo]:
    """Every leaf of a game's defaults TOML, in file order."""
    with open(path, "rb") as f:
        tree = tomllib.load(f)
    out: list[ParamInfo] = []

    def walk(node: dict, prefix: str) -> None:
        for key, sub in node.items():
            name = f"{prefix}{key}"
            if not isinstance(sub, dict):
                raise ValueError(f"{path}: {name} must be a table with value, source and doc")
            if "value" in sub:
                if sub.get("source") not in SOURCES or not sub.get("doc"):
                    raise ValueError(f"{path}: {name} needs source in {SOURCES} and a doc")
                out.append(ParamInfo(name, sub["value"], sub["source"], sub["doc"]))
            else:
                walk(sub, name + ".")

    walk(tree, "")
    return out


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """{"a.b": 1} -> {"a": {"b": 1}}."""
    tree: dict[str, Any] = {}
    for name, value in flat.items():
        node = tree
        *parents, leaf = name.split(".")
        for p in parents:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise UserError(f"param {name}: {p} is a value, not a group")
        node[leaf] = value
    return tree


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def parse_set(item: str) -> tuple[str, Any]:
    """`key=value` with the value read as TOML (7, 2.5, true, "x", [1, 2]) or else a string."""
    if "=" not in item:
        raise UserError(f"--set {item!r}: expected key=value")
    key, raw = (s.strip() for s in item.split("=", 1))
    if not key:
        raise UserError(f"--set {item!r}: empty key")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return key, value


def read_rules_file(path: Path) -> dict[str, Any]:
    """The values of a house-rule TOML file, flattened to dotted names."""
    try:
        with open(path, "rb") as f:
            return flatten(tomllib.load(f))
    except OSError as e:
        raise UserError(f"rules file {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"rules file {path}: malformed TOML ({e})") from None
    except UnicodeDecodeError as e:
        raise UserError(f"rules file {path}: not UTF-8 text (byte {e.object[e.start]:#04x} at "
                        f"offset {e.start}); save it as UTF-8") from None


def build(model: type[Params], defaults: list[ParamInfo], overrides: dict[str, Any]) -> Params:
    """Validate defaults + overrides (dotted names) into the model; UserError if invalid."""
    known = {p.name for p in defaults}
    for name in overrides:
        if name.rsplit(".", 1)[-1] in ("value", "source", "doc") and name.rsplit(".", 1)[0] in known:
            raise UserError(f"param {name!r}: a house rule gives plain values "
                            f"({name.rsplit('.', 1)[0]} = ...), not the defaults' value/source/doc tables")
        if name not in known:
            # The same last part in another group (deck.almonds for almonds), else the
            # nearest spellings (rouds for rounds).
            close = sorted(k for k in known if k.split(".")[-1] == name.split(".")[-1]) \
                or difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.8)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise UserError(f"unknown param {name!r}{hint}; `chocosim rules GAME` lists them")
    flat = {p.name: p.value for p in defaults} | overrides
    try:
        return model.model_validate(nest(flat))
    except ValidationError as e:
        err = e.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:  # a rule across several params (a model validator)
            raise UserError(f"invalid params: {msg}") from None
        # A list's entry is named by its index: compensation.points[1].
        where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"]).lstrip(".")
        raise UserError(f"invalid param {where} = {flat.get(where, err.get('input'))!r}: {msg}") from None
