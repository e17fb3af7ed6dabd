"""Games by name. A game is its state class, a compiled GameState or a PyGame subclass,
declaring its metadata as class attributes (simcore.meta), which spec_of reads into the
GameSpec every command uses. A bundled game is a package under simcore/games/ that
defines GAME, its state class; it is found by scanning, so adding a game edits no list.
A designer's game comes from outside the package: an entry point of group
`chocosim.games` in an installed package (name = package.module:Class), or named
directly where a game name goes (`package.module:Class`, `path/to/game.py`)."""
from __future__ import annotations

import difflib
import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import simcore.games
from simcore.errors import UserError
from simcore.meta import FeatureRoles, Victory
from simcore.params import ParamInfo, Params, build, read_defaults, read_rules_file
from simcore.pygame import PyGame, canonical, check_class, defaults_of, is_reference, load_game, short_repr
from simcore.pygame_state import state_class
from simcore.state import GameState


@dataclass(frozen=True)
class GameSpec:
    """A game as every command uses it, read by spec_of from its declared attributes."""

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
    # The bots the game declares itself (a Python game's BOTS), seated by their NAME.
    bots: tuple[type, ...] = field(default=(), hash=False)

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
        return defaults_of(self.params_cls)

    def __reduce__(self):
        return _python_game, (self.origin.startswith(ENTRY_POINT), self.name, self.ref)


ENTRY_POINT = "entry point"
GROUP = "chocosim.games"  # the entry point group of designers' games

# Games named directly (module:Class or a path) in this process, by the name given.
_named: dict[str, GameSpec] = {}


def spec_of(cls: Any, origin: str = "bundled", name: str | None = None, ref: str = "") -> GameSpec:
    """The GameSpec of a game's state class, compiled (a GameState subclass) or Python (a
    PyGame subclass), read from the same declared class attributes (simcore.meta).
    `origin` says where it came from (the entry point or the reference it was loaded
    by), `name` the name commands know it by (default: its NAME), `ref` the reference
    that loads a Python game in another process."""
    if isinstance(cls, type) and issubclass(cls, PyGame):
        check_class(cls, origin)
        defaults_of(cls.PARAMS)  # every param has its source and doc, said now
        kind, extra = PyGameSpec, {"ref": ref, "bots": tuple(cls.BOTS)}
        state_cls = state_class(cls)
        # Its defaults come from the params model (PyGameSpec.defaults); the path says
        # where the game is written, when it is in a file (not for a notebook's class).
        defaults_path = Path(getattr(sys.modules.get(cls.__module__), "__file__", None) or ".")
    elif isinstance(cls, type) and issubclass(cls, GameState):
        _check_compiled(cls, origin)
        kind, extra, state_cls, defaults_path = GameSpec, {}, cls, Path(cls.DEFAULTS)
    else:
        raise UserError(f"game {origin}: {short_repr(cls)} is neither a simcore.state.GameState nor a "
                        "simcore.pygame.PyGame subclass")
    return kind(
        name=name or cls.NAME or cls.__name__,
        title=cls.TITLE or cls.NAME or cls.__name__,
        state_cls=state_cls,
        params_cls=cls.PARAMS,
        defaults_path=defaults_path,
        players=tuple(cls.PLAYERS),
        features=cls.FEATURE_ROLES or FeatureRoles(),
        position_knobs=dict(cls.POSITION_KNOBS),
        bonus_decides=cls.BONUS_DECIDES,
        victory=Victory(tuple(cls.TIE_BREAKS), tuple(cls.WON_IN_PLAY)),
        origin=origin,
        **extra,
    )


def _check_compiled(cls: type, origin: str) -> None:
    """UserError (one line) unless a compiled game declares what a spec needs: a PyGame's
    declarations are checked by simcore.pygame.check_class."""
    name = cls.NAME or cls.__name__
    if not (isinstance(cls.PARAMS, type) and issubclass(cls.PARAMS, Params)):
        raise UserError(f"game {name} ({origin}): PARAMS = {short_repr(cls.PARAMS)}: expected a "
                        "simcore.params.Params subclass")
    if cls.DEFAULTS is None or not Path(cls.DEFAULTS).is_file():
        raise UserError(f"game {name} ({origin}): DEFAULTS = {short_repr(cls.DEFAULTS)}: expected the path of "
                        "its params' defaults TOML")
    players = cls.PLAYERS
    if not (isinstance(players, tuple) and len(players) == 2 and all(type(n) is int for n in players)
            and 1 <= players[0] <= players[1]):
        raise UserError(f"game {name} ({origin}): PLAYERS = {short_repr(players)}: expected (fewest, most) "
                        "players, two ints")
    if cls.FEATURE_ROLES is not None and not isinstance(cls.FEATURE_ROLES, FeatureRoles):
        raise UserError(f"game {name} ({origin}): FEATURE_ROLES = {short_repr(cls.FEATURE_ROLES)}: expected "
                        "None or a simcore.meta.FeatureRoles")


@cache
def _bundled() -> dict[str, GameSpec]:
    found = {}
    for info in pkgutil.iter_modules(simcore.games.__path__):
        module = importlib.import_module(f"simcore.games.{info.name}")
        game = getattr(module, "GAME", None)
        if game is not None:
            spec = spec_of(game)
            found[spec.name] = spec
    return found


@cache
def _entry_points() -> dict[str, GameSpec]:
    """The designers' games installed with an entry point of GROUP. One that fails to
    load is left out with one line on stderr: it must not break the bundled games."""
    found: dict[str, GameSpec] = {}
    for ep in entry_points(group=GROUP):
        where = f"{ENTRY_POINT} {ep.name} = {ep.value}" + (f" ({ep.dist.name})" if ep.dist else "")
        if ep.name in _bundled() or ep.name in found:
            print(f"chocosim: warning: {where}: a game of that name is already registered; "
                  "left out", file=sys.stderr)
            continue
        try:
            found[ep.name] = spec_of(ep.load(), where, name=ep.name, ref=ep.value)
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
