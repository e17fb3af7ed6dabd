"""Games by name. A bundled game is a package under simcore/games/ that defines GAME, a
GameSpec; it is found by scanning, so adding a game edits no list. A designer's game
(simcore.pygame.PyGame) comes from outside the package: an entry point of group
`chocosim.games` in an installed package (name = package.module:Class), or named
directly where a game name goes (`package.module:Class`, `path/to/game.py`)."""
from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
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
class Victory:
    """How a game's winner follows from the end of play, declared by the game so that what
    another score bonus by turn position (compensation.points) would have decided can be
    worked out from games already played, as the game's own outcome decides them: the
    best final score wins, the bonus included; a tie on it goes to the seat with more of
    the first tie-break, then of the next; a tie on every one is a shared victory. A game
    that ended by an end reason of `in_play` was won whatever the scores.

    A tie-break is a per-seat feature column of the results (more wins the tie), or a
    function of the run's params (the manifest's, as JSON) giving a key to each turn
    position (a turn-order tie-break). What the declaration does not cover is found out
    on the games themselves: a recorded result the declaration does not give back is
    held as played whatever the bonus (analysis.experiments.komi)."""

    tie_breaks: tuple[str | Callable[[dict[str, Any]], Sequence[int]], ...] = ()
    in_play: tuple[str, ...] = ()  # end reasons whose winner the scores do not decide


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
    # How the winner follows from the final scores, tie-breaks and end reasons.
    victory: Victory = field(default_factory=Victory, hash=False)
    # Where the game comes from, as `chocosim games` lists it.
    origin: str = "bundled"

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


@dataclass(frozen=True)
class PyGameSpec(GameSpec):
    """The spec of a game written in Python: its defaults come from its params model,
    and it travels to worker processes as the reference that loads it there."""

    ref: str = ""  # package.module:Class or a path: what loads the class in any process

    def defaults(self) -> list[ParamInfo]:
        from simcore.pygame import defaults_of
        return defaults_of(self.params_cls)

    def __reduce__(self):
        return _python_game, (self.origin.startswith(ENTRY_POINT), self.name, self.ref)


ENTRY_POINT = "entry point"
GROUP = "chocosim.games"  # the entry point group of designers' games

# Games named directly (module:Class or a path) in this process, by the name given.
_named: dict[str, GameSpec] = {}


@cache
def _bundled() -> dict[str, GameSpec]:
    found = {}
    for info in pkgutil.iter_modules(simcore.games.__path__):
        module = importlib.import_module(f"simcore.games.{info.name}")
        spec = getattr(module, "GAME", None)
        if isinstance(spec, GameSpec):
            found[spec.name] = spec
    return found


@cache
def _entry_points() -> dict[str, GameSpec]:
    """The designers' games installed with an entry point of GROUP. One that fails to
    load is left out with one line on stderr: it must not break the bundled games."""
    import sys
    from importlib.metadata import entry_points

    from simcore.pygame import spec_of

    found: dict[str, GameSpec] = {}
    for ep in entry_points(group=GROUP):
        where = f"{ENTRY_POINT} {ep.name} = {ep.value}" + (f" ({ep.dist.name})" if ep.dist else "")
        if ep.name in _bundled() or ep.name in found:
            print(f"chocosim: warning: {where}: a game of that name is already registered; "
                  "left out", file=sys.stderr)
            continue
        try:
            target = ep.load()
            # A compiled game's package exports its GameSpec; a Python game, its class.
            found[ep.name] = dataclasses.replace(target, name=ep.name, origin=where) \
                if isinstance(target, GameSpec) else spec_of(target, where, name=ep.name, ref=ep.value)
        except UserError as e:
            print(f"chocosim: warning: {where}: {e}; left out", file=sys.stderr)
        except Exception as e:  # a designer's package that does not import
            print(f"chocosim: warning: {where}: cannot load ({type(e).__name__}: {e}); left out",
                  file=sys.stderr)
    return found


def games() -> dict[str, GameSpec]:
    """Every game known to this process by name: bundled, installed by entry point,
    and those named directly so far."""
    named = {spec.name: spec for spec in _named.values()}
    return dict(sorted({**_bundled(), **_entry_points(), **named}.items()))


def get_game(name: str) -> GameSpec:
    """The game of a name, or of a direct reference (package.module:Class, a .py path)."""
    known = games()
    if name in known:
        return known[name]
    from simcore.pygame import canonical, is_reference, load_game, spec_of

    if is_reference(name):
        # Known afterwards by the reference and by the game's own NAME, which the run
        # directories and manifests use (a path would not do as a directory name).
        ref = canonical(name)
        if ref not in _named:
            cls = load_game(ref)
            own = cls.NAME or cls.__name__
            if own in known and getattr(known[own], "ref", None) != ref:
                raise UserError(f"game {name}: its NAME {own!r} is taken by the game from {known[own].origin}; "
                                "give it another NAME")
            _named[ref] = _named[own] = spec_of(cls, ref, name=own, ref=ref)
        return _named[ref]
    close = difflib.get_close_matches(str(name).lower(), list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UserError(f"unknown game {name!r}{hint}; known games: {', '.join(known)} "
                    "(or name a game of your own: package.module:Class or path/to/game.py)")


def _python_game(entry: bool, name: str, ref: str) -> GameSpec:
    """A PyGameSpec rebuilt in a worker process (see PyGameSpec.__reduce__)."""
    return _entry_points()[name] if entry else get_game(ref)
