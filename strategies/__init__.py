"""Bots by spec string. Every module of this package that defines STRATEGIES (a tuple of
Strategy subclasses, each with NAME and GAMES) is registered by scanning, so a new bot is
one new file. A spec is `name`, `name(weight=value, ...)`, `name(weights=file.json)` or
`module.path:Class(...)` for a bot outside this package.

A weights file is either a flat JSON object of weight name -> number (validated nowhere),
or a weights file with its validation record (written by `chocosim tune`):

    {"game": "enemy_chocolatier", "bot": "heuristic",
     "weights": {"win": 22.06, ...},
     "validation": [{"players": 2, "against": "heuristic", "games": 20160, "seed": 7,
                     "win": 0.81, "low": 0.80, "high": 0.82, "fair": 0.5}, ...]}

Each validation entry is one held-out replay at one table size: the bot with these
weights in one seat, `against` in every other seat, seats rotated. A table size is
validated where an entry against the bot's own defaults has its whole 95% interval above
the fair share (validated_players)."""
from __future__ import annotations

import difflib
import importlib
import json
import math
import os
import pkgutil
import re
import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from simcore.errors import UserError
from simcore.registry import get_game
from simcore.strategy import Strategy

_SPEC = re.compile(r"^\s*([\w.:]+)\s*(?:\((.*)\))?\s*$")


@cache
def _registered() -> tuple[type, ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "STRATEGIES", ()))
    return tuple(found)


def available(game: str) -> dict[str, type]:
    """name -> class of the bots that play `game`: the generic ones, the bots written for
    it here, and the bots the game declares itself (a game's own bot wins over a generic
    bot of the same name)."""
    out: dict[str, type] = {}
    for cls in _registered():
        if "*" in cls.GAMES and cls.NAME not in out:
            out[cls.NAME] = cls
    for cls in (*(c for c in _registered() if game in c.GAMES), *get_game(game).bots):
        out[cls.NAME] = cls
    return dict(sorted(out.items()))


def own_bots(game: str) -> dict[str, type]:
    """name -> class of the bots a game declares with itself (a Python game's BOTS)."""
    return {cls.NAME: cls for cls in get_game(game).bots}


def expert_weights(cls: type) -> tuple[str, ...]:
    """The weights a bot declares as settings for experts (class attribute EXPERT):
    `chocosim strategies` shows them with --all only."""
    return tuple(getattr(cls, "EXPERT", ()))


def superseded_by(cls: type) -> str | None:
    """The bot that replaces this one (class attribute SUPERSEDED_BY), or None: a
    superseded bot still plays, but `chocosim strategies` lists it with --all only."""
    return getattr(cls, "SUPERSEDED_BY", None)


def _import_class(ref: str, what: str) -> Any:
    module_name, _, attr = ref.partition(":")
    # A user's bot usually sits beside the command; console scripts and the worker
    # processes do not put the working directory on the path by themselves.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise UserError(f"{what} {ref!r}: cannot import ({e})") from None
    return cls


def split_specs(text: str) -> list[str]:
    """Split a seat list at the commas that separate specs, not those inside a spec's
    parentheses: "heuristic(a=1, b=2),random" is two seats."""
    specs, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            specs.append(text[start:i].strip())
            start = i + 1
    specs.append(text[start:].strip())
    if depth != 0 or not all(specs):
        raise UserError(f"--seats {text!r}: expected comma-separated strategy specs, e.g. random,random")
    return specs


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    m = _SPEC.match(spec)
    if not m:
        raise UserError(f"bad strategy spec {spec!r}: expected name or name(key=value, ...)")
    name, args = m.group(1), m.group(2)
    kwargs: dict[str, str] = {}
    for part in filter(None, (a.strip() for a in (args or "").split(","))):
        if "=" not in part:
            raise UserError(f"bad strategy spec {spec!r}: argument {part!r} is not key=value")
        key, value = (s.strip() for s in part.split("=", 1))
        kwargs[key] = value
    return name, kwargs


def resolve(game: str, spec: str) -> type:
    name, _ = parse_spec(spec)
    if ":" in name:
        cls = _import_class(name, "strategy")
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise UserError(f"strategy {name!r} is not a simcore.strategy.Strategy subclass")
        return cls
    bots = available(game)
    if name not in bots:
        close = difflib.get_close_matches(name, list(bots), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UserError(f"unknown strategy {name!r} for {game}{hint}; available: {', '.join(bots)}")
    return bots[name]


# Weights shipped with the package: `heuristic(weights=tuned)` reads
# weights/<game>-heuristic-tuned.json (written by `chocosim tune`).
BUNDLED_WEIGHTS = Path(__file__).parent / "weights"


def bundled_weights(game: str, bot: str) -> list[str]:
    """The names of the weight sets shipped for `bot` in `game`."""
    prefix = f"{game}-{bot}-"
    return sorted(p.stem.removeprefix(prefix) for p in BUNDLED_WEIGHTS.glob(f"{prefix}*.json"))


def _weights_path(game: str, bot: str, value: str) -> str:
    """A weights= value: a bundled set's name, else a path to a JSON file."""
    if "/" in value or "\\" in value or value.endswith(".json"):
        return value
    path = BUNDLED_WEIGHTS / f"{game}-{bot}-{value}.json"
    if not path.exists():
        shipped = ", ".join(bundled_weights(game, bot)) or "none"
        raise UserError(f"weights={value!r}: no such weights shipped for {bot} in {game} "
                        f"(shipped: {shipped}); give a path to a JSON file")
    return str(path)


@dataclass(frozen=True)
class Validation:
    """One held-out replay of a weights file at one table size: the bot with the weights
    in one seat and `against` in every other seat (seats rotated), its win share with
    the 95% interval, and the fair share 1/players."""

    players: int
    against: str
    games: int
    win: float
    low: float
    high: float
    fair: float
    seed: int | None = None

    def holds(self, bot: str) -> bool:
        """Better than `bot` with its default weights at this table size: replayed against
        the defaults alone, and the whole interval above the fair share."""
        return self.against.strip() == bot and self.low > self.fair


@dataclass(frozen=True)
class WeightsFile:
    weights: dict[str, float]
    validation: tuple[Validation, ...] = ()  # none: validated at no table size
    game: str | None = None
    bot: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "bot": self.bot, "weights": dict(self.weights),
                "validation": [{k: v for k, v in asdict(v).items() if v is not None}
                               for v in self.validation]}


_ENTRY = {"players": int, "against": str, "games": int, "win": float, "low": float,
          "high": float, "fair": float}


def _entry(path: str, i: int, raw: Any) -> Validation:
    where = f"weights file {path}: validation entry {i}"
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected an object with {', '.join(_ENTRY)}")
    missing = [k for k in _ENTRY if k not in raw]
    if missing:
        raise UserError(f"{where}: missing {', '.join(missing)}")
    values: dict[str, Any] = {}
    for key, kind in {**_ENTRY, "seed": int}.items():
        if key not in raw:
            continue
        v = raw[key]
        if kind is str:
            ok, want = isinstance(v, str) and bool(v.strip()), "a spec"
        elif kind is int:
            least = 0 if key == "seed" else 1
            ok = isinstance(v, int) and not isinstance(v, bool) and v >= least
            want = f"a whole number of at least {least}"
        else:  # NaN fails the range test too
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
            want = "a number from 0 to 1"
        if not ok:
            raise UserError(f"{where}: {key} = {v!r} is not {want}")
        values[key] = float(v) if kind is float else v
    entry = Validation(**values)
    if not entry.low <= entry.win <= entry.high:
        raise UserError(f"{where}: win {entry.win:g} lies outside its interval "
                        f"{entry.low:g}..{entry.high:g}")
    return entry


def _number(path: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"weights file {path}: weight {name} = {value!r} is not a number")
    try:
        number = float(value)  # an integer of 400 digits overflows a float
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise UserError(f"weights file {path}: weight {name} = {_short(value)} is not a finite number")
    return number


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


# A weights file is a few hundred bytes (a record per table size adds a few more): a
# file beyond this is not one, and reading it whole could take gigabytes (/dev/zero).
MAX_WEIGHTS_FILE = 2**20


def _read_small(path: str) -> str:
    """The text of a weights file: UserError for anything but a regular file of at most
    MAX_WEIGHTS_FILE bytes (checked before reading: a device or a FIFO never ends)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UserError(f"weights file {path}: not a regular file")
    with open(path, "rb") as f:
        data = f.read(MAX_WEIGHTS_FILE + 1)
    if len(data) > MAX_WEIGHTS_FILE:
        raise UserError(f"weights file {path}: larger than {MAX_WEIGHTS_FILE // 2**20} MB, not a weights file")
    return data.decode("utf-8")


def read_weights(path: str | Path, game: str | None = None) -> WeightsFile:
    """A weights file, flat or with its validation record; anything else (NaN or
    Infinity weights, a malformed record, another game's file) is one line. A file of
    another bot loads: its record is against that bot, so it validates nothing here."""
    path = str(path)
    try:
        data = json.loads(_read_small(path))
    except OSError as e:
        raise UserError(f"weights file {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"weights file {path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise UserError(f"weights file {path}: expected an object of name: number")
    if not isinstance(data.get("weights"), dict):
        # A flat file: every value a weight (no weight is named "weights").
        return WeightsFile({k: _number(path, k, v) for k, v in data.items()})
    unknown = sorted(set(data) - {"game", "bot", "weights", "validation"})
    if unknown:
        raise UserError(f"weights file {path}: unknown key(s) {', '.join(unknown)} (a weights "
                        "file holds game, bot, weights and validation)")
    if game is not None and data.get("game") is not None and data["game"] != game:
        raise UserError(f"weights file {path} holds weights for {data['game']}, not {game}")
    raw = data.get("validation", [])
    if not isinstance(raw, list):
        raise UserError(f"weights file {path}: validation must be a list of entries, one per table size")
    entries = tuple(_entry(path, i, r) for i, r in enumerate(raw))
    seen: set[tuple[int, str]] = set()
    for e in entries:
        if (e.players, e.against) in seen:
            raise UserError(f"weights file {path}: two validation entries at {e.players} "
                            f"players against {e.against}")
        seen.add((e.players, e.against))
    return WeightsFile({k: _number(path, k, v) for k, v in data["weights"].items()},
                       entries, data.get("game"), data.get("bot"))


def _weights_file(game: str, spec: str) -> str | None:
    """The path of the weights file a spec reads, or None (its bot's default weights)."""
    name, kwargs = parse_spec(spec)
    if "weights" not in kwargs:
        return None
    if ":" in name:
        return kwargs["weights"]
    return _weights_path(game, resolve(game, spec).NAME, kwargs["weights"])


def validated_players(game: str, spec: str) -> tuple[int, ...] | None:
    """The table sizes where the spec's weights file is validated (its held-out win rate
    against the bot's default weights wholly above the fair share), ascending; an empty
    tuple for a file validated nowhere (a flat file has no record); None for a spec that
    reads no weights file (default weights hold everywhere)."""
    path = _weights_file(game, spec)
    if path is None:
        return None
    name = parse_spec(spec)[0]
    record = read_weights(path, game)
    return tuple(sorted({v.players for v in record.validation if v.holds(name)}))


def _sizes(sizes: tuple[int, ...]) -> str:
    return ", ".join(map(str, sizes[:-1])) + (" and " if len(sizes) > 1 else "") + str(sizes[-1])


def unvalidated_warning(game: str, spec: str, players: int) -> str | None:
    """One line warning that the spec's weights are used at a table size they were not
    validated at, or None where they were (or where the spec reads no weights file)."""
    sizes = validated_players(game, spec)
    if sizes is None or players in sizes:
        return None
    where = f"only at {_sizes(sizes)} players" if sizes else "at no table size"
    return (f"{spec.strip()}: its weights are validated {where}, not at {players} players: "
            f"it may play worse there than the default {parse_spec(spec)[0]}")


def build(game: str, spec: str) -> Strategy:
    """A fresh bot from a spec string. Every bot takes `forbid=NAME` (restricted play:
    it never takes that component of the game; see Strategy.bind)."""
    cls = resolve(game, spec)
    _, kwargs = parse_spec(spec)
    names = tuple(get_game(game).state_cls.COMPONENTS)
    if "forbid" in kwargs and names:
        # Checked here too so that a bad name fails at once; a game whose components
        # depend on its params (Alley Cat's parts) is checked by bind against the state
        # built for the run, before the run starts.
        if kwargs["forbid"] not in names:
            allowed = ", ".join(names) or "none (this game names no components)"
            raise UserError(f"strategy {spec!r}: forbid={kwargs['forbid']!r} is not a component "
                            f"of {game} (allowed: {allowed})")
    for key, value in kwargs.items():
        if key in ("forbid", "weights"):
            continue
        try:
            finite = math.isfinite(float(value))
        except ValueError:
            continue  # not a number: the bot's own error says so
        if not finite:
            raise UserError(f"strategy {spec!r}: weight {key}={value} is not a finite number")
    path = _weights_file(game, spec)
    if path is not None:
        # Read here, not by the bot, so that every file format works for every bot;
        # the spec's own weights override the file's.
        kwargs.pop("weights")
        kwargs = {**read_weights(path, game).weights, **kwargs}
    try:
        bot = cls(**kwargs)
    except UserError as e:
        declared = list(getattr(cls, "WEIGHTS", {}))
        close = [m for k in kwargs if k not in declared for m in difflib.get_close_matches(k, declared, n=1)]
        if "unknown weight" in str(e) and close:  # a misspelt weight: name the one meant
            raise UserError(f"{e} (did you mean {', '.join(close)}?)") from None
        raise
    except Exception as e:  # a bot of the user's whose __init__ fails: one line (--debug: its traceback)
        raise UserError(f"strategy {spec.strip()!r}: {cls.__name__}({_args(kwargs)}) raised "
                        f"{type(e).__name__}: {' '.join(str(e).split())}") from e
    bot.set_spec(spec.strip())
    return bot


def _args(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v if isinstance(v, str) else _short(v)}" for k, v in kwargs.items())


def build_lineup(game: str, specs: list[str]) -> list[Strategy]:
    """Picklable entry for worker processes: one bot per spec."""
    return [build(game, s) for s in specs]
