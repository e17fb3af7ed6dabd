"""Games by name. A game is a package under simcore/games/ that defines GAME, a GameSpec;
it is found by scanning, so adding a game edits no list."""
from __future__ import annotations

import difflib

import fnmatch
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import simcore.games
from simcore.errors import UserError
from simcore.params import ParamInfo, Params, build, read_defaults, read_rules_file


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass(frozen=True)
class FeatureRoles:
    """How the analysis reads a game's per-seat features, declared by the game itself
    with shell-style name patterns (`scored_*`), so no central list names them.

    A feature is, by its first matching role: positional (set by the turn position,
    e.g. a starting amount by turn order: the position balance already says it), an
    outcome (the result, a part of the final score or a holding at the end: shown as a
    score breakdown, never as an effect on winning), setup (dealt before play, e.g. a
    solo target: win rate per value), a behaviour (what the player did: timings, counts
    of actions), or else a component (what the player took).
    """

    positional: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    behaviours: tuple[str, ...] = ()
    # 0 means "undefined for this seat" (e.g. the turn of a collect the game ended
    # before): such rows are dropped from the feature's analysis, not read as a value.
    zero_missing: tuple[str, ...] = ()
    # Regular expressions with one group: features whose names give the same group
    # carry the same information (a store's track, place and supplies) and make one
    # finding, named by the group.
    same_information: tuple[str, ...] = ()

    def role(self, name: str) -> str:
        for role, patterns in (("positional", self.positional), ("outcome", self.outcomes), ("setup", self.setup),
                               ("behaviour", self.behaviours)):
            if _matches(name, patterns):
                return role
        return "component"

    def missing_when_zero(self, name: str) -> bool:
        return _matches(name, self.zero_missing)

    def group(self, name: str) -> str:
        for pattern in self.same_information:
            if m := re.fullmatch(pattern, name):
                return m.group(1)
        return name


@dataclass(frozen=True)
class GameSpec:
    name: str  # registry name, e.g. "fabryka"
    title: str  # printed name
    state_cls: type  # the GameState subclass
    params_cls: type[Params]
    defaults_path: Path  # data/*.toml with value, source and doc of every param
    players: tuple[int, int]  # smallest and largest table
    features: FeatureRoles = field(default_factory=FeatureRoles)  # how to read its features
    # The game's own knobs for equalising turn positions, as a designer would turn them
    # (a starting amount that grows with turn order, cards a turn takes...): param name
    # -> a small grid of candidate values, the rulebook's among them, each valid at every
    # table size. Empty for a game that has none. compensation.points, which every game
    # has, is not one of them.
    position_knobs: dict[str, tuple] = field(default_factory=dict, hash=False)
    # Whether compensation.points can change who wins: False for a game won during play
    # (a race), where the bonus moves only the score column.
    bonus_decides: bool = True

    def defaults(self) -> list[ParamInfo]:
        return read_defaults(self.defaults_path)

    def params(self, rules_file: Path | None = None, sets: dict[str, Any] | None = None,
               players: int | None = None) -> Params:
        """Defaults, then the house-rule file, then --set values; `players` (from the
        number of seats) fills the player count unless the overrides set it."""
        overrides: dict[str, Any] = {}
        if rules_file is not None:
            overrides |= read_rules_file(rules_file)
        overrides |= sets or {}
        if players is not None:
            lo, hi = self.players
            if not lo <= players <= hi:
                allowed = f"{lo}" if lo == hi else f"{lo} to {hi}"
                raise UserError(f"{self.name} is played by {allowed} players, not {players}")
            if overrides.setdefault("players", players) != players:
                raise UserError(f"{players} seats given but the params say players = {overrides['players']}")
        return build(self.params_cls, self.defaults(), overrides)

    def new_state(self, params: Params | None = None):
        return self.state_cls(params if params is not None else self.params())


@cache
def games() -> dict[str, GameSpec]:
    found = {}
    for info in pkgutil.iter_modules(simcore.games.__path__):
        module = importlib.import_module(f"simcore.games.{info.name}")
        spec = getattr(module, "GAME", None)
        if isinstance(spec, GameSpec):
            found[spec.name] = spec
    return dict(sorted(found.items()))


def get_game(name: str) -> GameSpec:
    try:
        return games()[name]
    except KeyError:
        close = difflib.get_close_matches(str(name).lower(), list(games()), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UserError(f"unknown game {name!r}{hint}; known games: {', '.join(games())}") from None
