"""A designer's own game in plain Python: the protocol every command plays.

A game is one subclass of `PyGame` (its state) with a params model subclassing
`GameParams`; nothing else. Example (the whole of tic-tac-toe is in
examples/tictactoe/):

    class Params(GameParams):
        players: int = param(2, "rulebook", "Players at the table", ge=2, le=2)

    class TicTacToe(PyGame):
        NAME, TITLE, PLAYERS = "tictactoe", "Tic-tac-toe", (2, 2)
        PARAMS = Params
        END_REASONS = ("line", "full board")

        def setup(self): ...                 # deal the game of self.params from self.chance
        def current_player(self): ...        # seat to act, -1 once over
        def legal_actions(self): ...         # list of small ints (0 <= a < 4096)
        def apply(self, action): ...         # play one legal action
        def scores(self): ...                # final score of each seat
        def end_reason(self): ...            # a name of END_REASONS
        def observation(self, seat): ...     # what `seat` may see, JSON-serialisable
        def describe(self, action): ...      # the action in words

Optional: `rank(scores)` (default: higher score ranks better, ties share; TIE_BREAKS
and WON_IN_PLAY declare what else decides, for the balance report's score bonus),
`standing(seat)` (the score if the game stopped now: the greedy bot and interim
standings; default 0), `features(seat)` with FEATURES (per-seat counters the analysis
reads), `interim(seat)` with INTERIM, `action_component(action)` with COMPONENTS
(restricted play), `first_player()`, `action_key(action, observer)` (hidden choices),
`outcome_key(observer)` (what a seat saw of the last move's chance), `describe_outcome()`
(that chance in words, for `play`), `copy()` (default: a deep copy, params shared; the
engine gives each copy its own chance stream), BOTS (the game's own bots),
`determinize(seat, rng)` (required when HIDDEN_INFORMATION is True), `render()`.
POSITION_KNOBS (param -> the values `balance` tries, e.g. a start bonus by seat) and
BONUS_DECIDES (False for a race: a score bonus at the end cannot change who won) say
how turn order can be evened out (simcore.meta; the guide, "Your own game").

A compiled state answers the same methods in Python (simcore.state.StateAPI), and a game
of either kind declares its metadata with the same class attributes (simcore.meta).
`is_terminal()` and `ranks()` come with the base class.

Chance comes only from `self.chance`, a `Chance` stream seeded with the game's seed (the
same per-game seed as a compiled game's, f(run seed, game index)), so a run gives the
same games on any number of workers. A copy of a state gets a stream of its own that
continues where the original's stands (a copy's play never moves the original's dice),
and a determinized copy (the search bot's) a freshly seeded one: the search does not
see the dice to come. A game that has not ended after MAX_MOVES actions
is stopped and recorded with the end reason "move_limit" (scored by its standings).

Every command (run, summary, report, balance, compare, sweep, tune, play) plays such a
game through simcore.pygame_state.PyGameState, a compiled GameState that calls it: the
batch loop, the bots and the result parts are those of the bundled games. A run holds
the game to this protocol as it plays: the class is checked once (check_class), every
returned value by type and range, a failure anywhere (a bot's look-ahead copy too) is
named with its method and game; the runner replays the first game of each chunk and
keeps the hash of the game's files in the manifest (code_fingerprint).
"""
from __future__ import annotations

import copy as _copy
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from simcore import params as _params
from simcore.errors import UserError
from simcore.meta import FeatureRoles
from simcore.params import ParamInfo, Params
from simcore.strategy import Strategy

__all__ = [
    "MOVE_LIMIT",
    "Chance",
    "Compensation",
    "GameFailure",
    "GameParams",
    "PyGame",
    "code_fingerprint",
    "load_game",
    "param",
]

MOVE_LIMIT = "move_limit"  # the end reason of a game stopped at MAX_MOVES
MAX_SEATS = 6  # the largest table the results support (simcore.state MAX_PLAYERS)


def param(default: Any, source: str, doc: str, **constraints: Any) -> Any:
    """A param's default with where it comes from (`rulebook` or `assumed`, the rules
    leave it open) and what it means; `constraints` are pydantic's (ge=1, le=9...)."""
    if source not in _params.SOURCES:
        raise ValueError(f"param source {source!r}: allowed are {', '.join(_params.SOURCES)}")
    if isinstance(default, list):
        return Field(default_factory=lambda: list(default), description=doc,
                     json_schema_extra={"source": source}, **constraints)
    return Field(default, description=doc, json_schema_extra={"source": source}, **constraints)


class Compensation(_params.Compensation):
    """compensation.points of a Python game: one bonus per turn position, up to the
    largest table the results hold; positions past a table's size get nothing."""

    max_positions: ClassVar[int] = MAX_SEATS
    points: list[int] = param([], "assumed", "House rule, not in the rulebook (komi, as in Go): points "
                              "added at the end to the final score of the seat at each turn position "
                              "(entry 0: the seat that acts first); a missing entry is 0")


class GameParams(Params):
    """Base of a Python game's params: every leaf has a default made with `param()`,
    groups are nested GameParams. `players` and `compensation` are every game's; the
    compensation is added to the final scores before ranking, by the engine."""

    players: int = param(2, "rulebook", "Players at the table")
    compensation: Compensation = Field(default_factory=Compensation)


def defaults_of(model: type[BaseModel], prefix: str = "") -> list[ParamInfo]:
    """Every leaf param of a GameParams model with its default, source and doc, in
    declaration order (the ParamInfo list a bundled game reads from its TOML)."""
    out: list[ParamInfo] = []
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out.extend(defaults_of(kind, f"{prefix}{name}."))
            continue
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("source") not in _params.SOURCES or not info.description:
            raise UserError(f"param {prefix}{name} of {model.__name__} needs a default made with "
                            "param(value, source, doc)")
        value = info.get_default(call_default_factory=True)
        out.append(ParamInfo(f"{prefix}{name}", value, extra["source"], info.description))
    return out


_MASK = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


class Chance:
    """A game's own random stream: the compiled games' generator (wyrand seeded through
    SplitMix64, simcore/rng.pxd), so a game moved to Cython can draw the same numbers.
    Never use the `random` module in a game: its results would depend on the process."""

    __slots__ = ("s",)

    def __init__(self, seed: int) -> None:
        self.s = _splitmix64(seed & _MASK)

    def next(self) -> int:
        """A raw 64-bit draw."""
        self.s = (self.s + 0xA0761D6478BD642F) & _MASK
        r = self.s * (self.s ^ 0xE7037ED1A0B428DB)
        return ((r >> 64) ^ r) & _MASK

    def below(self, n: int) -> int:
        """A uniform int in [0, n) (n below 2**32)."""
        return ((self.next() >> 32) * n) >> 32

    def uniform(self) -> float:
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def choice(self, seq: Any) -> Any:
        return seq[self.below(len(seq))]

    def copy(self) -> Chance:
        """A stream of its own that draws what this one would draw next."""
        other = Chance.__new__(Chance)
        other.s = self.s
        return other

    def shuffle(self, items: list) -> None:
        """Fisher-Yates in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


class PyGame(ABC):
    """Base of a designer's game state; see the module's docstring for the protocol."""

    NAME: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    PLAYERS: ClassVar[tuple[int, int]] = (2, 2)
    PARAMS: ClassVar[type[GameParams]] = GameParams
    END_REASONS: ClassVar[tuple[str, ...]] = ()
    FEATURES: ClassVar[tuple[str, ...]] = ()
    INTERIM: ClassVar[tuple[str, ...]] = ()
    COMPONENTS: ClassVar[tuple[str, ...]] = ()
    HIDDEN_INFORMATION: ClassVar[bool] = False
    MAX_MOVES: ClassVar[int] = 10_000
    # How the analysis reads the features, the knobs that equalise turn positions and
    # whether a score bonus can change who wins (see simcore.meta).
    FEATURE_ROLES: ClassVar[Any] = None
    POSITION_KNOBS: ClassVar[dict[str, tuple]] = {}
    BONUS_DECIDES: ClassVar[bool] = True
    # What rank() does beyond the points, for predicting a score bonus from recorded
    # games (simcore.meta.Victory): FEATURES that break a tie on points, in order
    # (more wins), and END_REASONS whose winner the scores do not decide.
    TIE_BREAKS: ClassVar[tuple[str, ...]] = ()
    WON_IN_PLAY: ClassVar[tuple[str, ...]] = ()
    # The game's own bots (simcore.strategy.PythonStrategy subclasses): every command
    # seats them by their NAME, and `chocosim strategies` lists them.
    BOTS: ClassVar[tuple[type, ...]] = ()

    def __init__(self, params: GameParams, seed: int) -> None:
        self.params = params
        self.chance = Chance(seed)
        self.setup()

    # ---- required ----
    @abstractmethod
    def setup(self) -> None:
        """Deal and lay out a new game from self.params, drawing chance from self.chance."""

    @abstractmethod
    def current_player(self) -> int:
        """The seat to act, -1 once the game is over."""

    @abstractmethod
    def legal_actions(self) -> list[int]:
        """The legal actions now: distinct small ints (0 <= a < 4096)."""

    @abstractmethod
    def apply(self, action: int) -> None:
        """Play one of legal_actions()."""

    @abstractmethod
    def scores(self) -> list[int]:
        """The final score of each seat."""

    @abstractmethod
    def end_reason(self) -> str:
        """Why the game ended: a name of END_REASONS."""

    @abstractmethod
    def observation(self, seat: int) -> dict[str, Any]:
        """What `seat` may see, JSON-serialisable."""

    @abstractmethod
    def describe(self, action: int) -> str:
        """An action in words, for traces."""

    # ---- optional ----
    def rank(self, scores: list[int]) -> list[int]:
        """Each seat's rank at the end given the final `scores` (the engine adds the
        compensation bonus first): 1 for the best score; equal scores share a rank (and
        the victory)."""
        return [1 + sum(o > s for o in scores) for s in scores]

    def standing(self, seat: int) -> int:
        return 0

    def features(self, seat: int) -> list[int]:
        return []

    def interim(self, seat: int) -> list[int]:
        return []

    def action_component(self, action: int) -> int:
        return -1

    def first_player(self) -> int:
        return 0

    def action_key(self, action: int, observer: int) -> int:
        """What `observer` sees of `action` played now by the seat to move, as an int
        below 4096: two actions with one key are the same move to it (another seat's
        hidden choice). The search bot keys its trees by it. Default: the action."""
        return action

    def outcome_key(self, observer: int) -> int:
        """What `observer` saw of the chance outcomes of the last move (a card it drew,
        a die everyone saw), as an int in [0, 2**30); 0 for nothing. It must depend only
        on what `observer` sees: the search bot hangs the seat's later decisions below
        the outcome it saw. Default: 0 (the search ignores chance)."""
        return 0

    def copy(self) -> PyGame:
        """A copy whose play leaves this game as it was. Whatever it does with
        self.chance, the engine gives every copy a stream of its own, drawing what the
        original would draw next."""
        # The params are immutable: shared, not copied.
        return _copy.deepcopy(self, {id(self.params): self.params})

    def describe_outcome(self) -> str:
        """What chance produced in the last move, in words ("rolled 4"): `play` shows it
        after the move. Default: "" (nothing shown)."""
        return ""

    def determinize(self, seat: int, rng: Any) -> None:
        """Resample what `seat` cannot see (rng: .below(n), .uniform(), .choice(seq)).
        A game of perfect information has nothing to resample."""

    def render(self) -> str:
        return repr(self.observation(max(self.current_player(), 0)))

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k not in ("params", "chance")}

    def phase_label(self) -> str:
        return ""

    # ---- given: what a compiled state's Python face answers too ----
    def is_terminal(self) -> bool:
        return self.current_player() < 0

    def ranks(self) -> list[int]:
        """Each seat's rank by rank(scores()): the game's own, without the engine's
        compensation bonus."""
        return self.rank(self.scores())


class GameFailure(UserError):
    """A Python game's method raised or broke the protocol: names the game, the method
    and (once the runner knows it) the game index; `details` holds the traceback."""

    def __init__(self, game: str, method: str, what: str, details: str = "", index: int | None = None) -> None:
        super().__init__(game, method, what, details, index)
        self.game, self.method, self.what, self.details, self.index = game, method, what, details, index

    def in_game(self, index: int) -> GameFailure:
        return GameFailure(self.game, self.method, self.what, self.details, index)

    def __str__(self) -> str:
        where = f" in game {self.index} of the run" if self.index is not None else ""
        return f"game {self.game}: {self.method} {self.what}{where}"


# The largest MAX_MOVES: a game's turn count is stored as a 32-bit int.
MOST_MOVES = 2**31 - 1


def check_class(cls: Any, origin: str) -> None:
    """UserError (one line) unless `cls` is a usable PyGame subclass: its methods and
    every class attribute of the protocol, checked once before anything plays."""
    if not (isinstance(cls, type) and issubclass(cls, PyGame)):
        raise UserError(f"game {origin}: {cls!r} is not a simcore.pygame.PyGame subclass")
    if not isinstance(cls.NAME, str):
        raise UserError(f"game {cls.__name__}: NAME = {short_repr(cls.NAME)}: expected a string")
    name = cls.NAME or cls.__name__
    if missing := sorted(cls.__abstractmethods__):
        raise UserError(f"game {name}: missing method {missing[0]} (every game defines "
                        f"{', '.join(sorted(PyGame.__abstractmethods__))})")
    ranking = "from rank(scores), where a game ranks final scores"
    for given, why in (("is_terminal", "from current_player()"), ("ranks", ranking)):
        if getattr(cls, given) is not getattr(PyGame, given):
            raise UserError(f"game {name}: defines {given}(), which the base class gives {why}")
    if cls.HIDDEN_INFORMATION and cls.determinize is PyGame.determinize:
        raise UserError(f"game {name}: missing method determinize (HIDDEN_INFORMATION is True)")
    for attr, names, allowed in (("TIE_BREAKS", cls.TIE_BREAKS, cls.FEATURES),
                                 ("WON_IN_PLAY", cls.WON_IN_PLAY, cls.END_REASONS)):
        if bad := [x for x in names if x not in allowed]:
            raise UserError(f"game {name}: {attr} names {bad[0]!r}, not one of "
                            f"{'FEATURES' if attr == 'TIE_BREAKS' else 'END_REASONS'} {tuple(allowed)}")
    if not (isinstance(cls.PARAMS, type) and issubclass(cls.PARAMS, GameParams)):
        raise UserError(f"game {name}: PARAMS must be a simcore.pygame.GameParams subclass")
    players = cls.PLAYERS
    if not (isinstance(players, tuple | list) and len(players) == 2 and all(type(n) is int for n in players)
            and 1 <= players[0] <= players[1] <= MAX_SEATS):
        raise UserError(f"game {name}: PLAYERS = {short_repr(players)}: expected (fewest, most) players, two ints "
                        f"with 1 <= fewest <= most <= {MAX_SEATS}, e.g. (2, 4)")
    if type(cls.MAX_MOVES) is not int or not 1 <= cls.MAX_MOVES <= MOST_MOVES:
        raise UserError(f"game {name}: MAX_MOVES = {short_repr(cls.MAX_MOVES)}: expected an int from 1 to "
                        f"{MOST_MOVES:,}")
    if not isinstance(cls.TITLE, str):
        raise UserError(f"game {name}: TITLE = {short_repr(cls.TITLE)}: expected a string")
    for attr in ("HIDDEN_INFORMATION", "BONUS_DECIDES"):
        if not isinstance(getattr(cls, attr), bool):
            raise UserError(f"game {name}: {attr} = {short_repr(getattr(cls, attr))}: expected True or False")
    for attr in ("END_REASONS", "FEATURES", "INTERIM", "COMPONENTS"):
        names = getattr(cls, attr)
        if not (isinstance(names, tuple | list) and all(isinstance(n, str) and n for n in names)
                and len(set(names)) == len(names)):
            raise UserError(f"game {name}: {attr} = {short_repr(names)}: expected a tuple of distinct, non-empty "
                            "strings")
    from simcore.runner import BASE_COLUMNS  # the runner imports this module
    if taken := [f for f in cls.FEATURES if f in BASE_COLUMNS]:
        raise UserError(f"game {name}: FEATURES names {taken[0]!r}, a column every result already has; "
                        f"choose another name (taken: {', '.join(BASE_COLUMNS)})")
    if not cls.END_REASONS or MOVE_LIMIT in cls.END_REASONS:
        raise UserError(f"game {name}: END_REASONS must name at least one reason, and not {MOVE_LIMIT!r} "
                        "(the engine's own)")
    if not (isinstance(cls.BOTS, tuple | list) and all(isinstance(b, type) and issubclass(b, Strategy)
                                                        and isinstance(getattr(b, "NAME", None), str) and b.NAME
                                                        for b in cls.BOTS)):
        raise UserError(f"game {name}: BOTS = {short_repr(cls.BOTS)}: expected a tuple of "
                        "simcore.strategy.PythonStrategy subclasses, each with a NAME")
    if not isinstance(cls.POSITION_KNOBS, dict):
        raise UserError(f"game {name}: POSITION_KNOBS = {short_repr(cls.POSITION_KNOBS)}: expected a dict")
    if cls.FEATURE_ROLES is not None and not isinstance(cls.FEATURE_ROLES, FeatureRoles):
        raise UserError(f"game {name}: FEATURE_ROLES = {short_repr(cls.FEATURE_ROLES)}: expected None or a "
                        "simcore.meta.FeatureRoles")


def short_repr(value: Any, width: int = 60) -> str:
    """A value's repr cut to `width` characters (a message stays one line)."""
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[:width - 1] + "…"


# What a game's code is made of (its fingerprint hashes these files of its package).
CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".pxi", *importlib.machinery.EXTENSION_SUFFIXES)


def code_fingerprint(cls: type) -> dict[str, str] | None:
    """A hash of every file of the code that plays `cls` (a PyGame, or the state class
    of a compiled game of a designer's package): for the module of `cls` and of each
    class it derives from outside simcore, the files of the package holding it (its
    helpers, its bots), or the file itself for a module outside a package. Keyed by
    path from the package's folder, so that a run can say which file changed; None for
    a class that has no files (defined in a notebook)."""
    found: dict[str, str] = {}
    for klass in cls.__mro__:
        module = sys.modules.get(klass.__module__)
        file = getattr(module, "__file__", None)
        if module is None or file is None or klass.__module__.split(".")[0] in ("simcore", "builtins", "abc"):
            continue
        path = Path(file).resolve()
        if getattr(module, "__package__", None):
            root = path.parent
            files = [p for p in sorted(root.rglob("*")) if p.name.endswith(CODE_SUFFIXES)
                     and "__pycache__" not in p.parts and p.is_file()]
            names = [f"{root.name}/{p.relative_to(root).as_posix()}" for p in files]
        else:
            files, names = [path], [path.name]
        for p, key in zip(files, names, strict=True):
            if key not in found:
                found[key] = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    return found or None


def _import_path(path: Path) -> Any:
    """The module of a .py file, imported under a name of its own (its resolved path),
    once a process."""
    # The same name in every process: a worker unpickles the game's params by it.
    key = f"chocosim_game_{hashlib.sha256(str(path).encode()).hexdigest()[:16]}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise UserError(f"game {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[key]
        raise UserError(f"game {path}: cannot import ({type(e).__name__}: {e})") from None
    return module


def _only_game(module: Any, origin: str) -> type:
    found = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, PyGame)
             and v is not PyGame and v.__module__ == module.__name__]
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise UserError(f"game {origin}: expected one PyGame subclass in the file, found {names}; "
                        "name it as path.py:Class")
    return found[0]


def load_game(ref: str) -> type:
    """The PyGame class a user names: `package.module:Class`, `path/to/game.py` (its one
    PyGame subclass) or `path/to/game.py:Class`. UserError if it cannot be loaded."""
    target, attr = _split(ref)
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            raise UserError(f"game {ref}: no such file")
        module = _import_path(path)
        cls = getattr(module, attr, None) if attr else _only_game(module, ref)
    else:
        if not attr:
            raise UserError(f"game {ref}: expected package.module:Class or a path to a .py file")
        # A designer's game usually sits beside the command (as a bot's does).
        if os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        try:
            cls = getattr(importlib.import_module(target), attr)
        except (ImportError, AttributeError) as e:
            raise UserError(f"game {ref}: cannot import ({e})") from None
    if cls is None:
        raise UserError(f"game {ref}: the file has no {attr}")
    check_class(cls, ref)
    return cls


def canonical(ref: str) -> str:
    """A reference as every process reads it the same: a path made absolute (workers
    may have another working directory)."""
    target, attr = _split(ref)
    if target.endswith(".py") or "/" in target or os.sep in target:
        return str(Path(target).expanduser().resolve()) + (f":{attr}" if attr else "")
    return ref


def _split(ref: str) -> tuple[str, str]:
    """(module or path, class name or "") of a reference."""
    if ":" in ref and not ref.endswith(".py"):
        target, _, attr = ref.rpartition(":")
        return target, attr
    return ref, ""


def is_reference(name: str) -> bool:
    """Whether a game name is a direct reference (module:Class or a path to a .py file,
    optionally with :Class), not a name. A bare directory path is neither: commands that
    take a game or run directories read it as a run directory."""
    return ":" in name or name.endswith(".py")
