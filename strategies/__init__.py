"""Bots by spec string. Every module of this package that defines STRATEGIES (a tuple of
Strategy subclasses, each with NAME and GAMES) is registered by scanning, so a new bot is
one new file. A spec is `name`, `name(weight=value, ...)`, `name(weights=file.json)` or
`module.path:Class(...)` for a bot outside this package."""
from __future__ import annotations

import difflib
import importlib
import os
import pkgutil
import re
import sys
from functools import cache
from pathlib import Path

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
    """name -> class of the bots that play `game` (a game's own bot wins over a generic
    bot of the same name)."""
    out: dict[str, type] = {}
    for cls in _registered():
        if "*" in cls.GAMES and cls.NAME not in out:
            out[cls.NAME] = cls
    for cls in _registered():
        if game in cls.GAMES:
            out[cls.NAME] = cls
    return dict(sorted(out.items()))


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
        module_name, _, attr = name.partition(":")
        # A user's bot usually sits beside the command; console scripts and the worker
        # processes do not put the working directory on the path by themselves.
        if os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as e:
            raise UserError(f"strategy {name!r}: cannot import ({e})") from None
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
    if "weights" in kwargs and ":" not in parse_spec(spec)[0]:
        kwargs["weights"] = _weights_path(game, cls.NAME, kwargs["weights"])
    bot = cls(**kwargs)
    bot.set_spec(spec.strip())
    return bot


def build_lineup(game: str, specs: list[str]) -> list[Strategy]:
    """Picklable entry for worker processes: one bot per spec."""
    return [build(game, s) for s in specs]
