"""`chocosim new-game NAME`: the skeleton of a game in a package of its own, compiled or
(`--python`) in plain Python.

The Python starter is tic-tac-toe as a simcore.pygame.PyGame (the game of the guide,
examples/tictactoe), with a bot declared with it, the conformance suite and a hand-built
position as its tests; nothing to build.

The skeleton is tic-tac-toe written against the engine's contract (simcore/state.pxd),
to be replaced by the designer's rules: the same game as examples/tictactoe in Python,
with the same params and the same legal lists in the same order, so the same seeds and
bots give the same games in both (tests/own_game/test_pygame_skeleton.py checks it). It builds
against the installed chocosim (its .pxd files and simcore/loop.pxi), registers
through the `chocosim.games` entry point, and plays inside the nogil batch loop.
"""
from __future__ import annotations

import contextlib
import importlib.util
import keyword
import os
import re
import shutil
import sys
from pathlib import Path
from string import Template

from simcore.errors import UserError

__all__ = ["write_python_starter", "write_skeleton"]

PYPROJECT = Template('''\
[build-system]
requires = ["setuptools>=68", "Cython>=3.0"]
build-backend = "setuptools.build_meta"

[project]
name = "$name"
version = "0.1.0"
description = "$title for chocosim (compiled)"
requires-python = ">=3.11"
dependencies = ["chocosim"]

# The registration: `chocosim games` lists the game, every command takes "$name".
[project.entry-points."chocosim.games"]
$name = "$name:GAME"

[tool.setuptools]
packages = ["$name"]

[tool.setuptools.package-data]
$name = ["data/*.toml", "*.pxd"]
''')

SETUP = Template('''\
"""Compiles $name/rules.pyx against the installed chocosim's contract (its .pxd files
and simcore/loop.pxi). CHOCOSIM_CHECKED=1 builds the checked flavour, as chocosim's."""
import os
from pathlib import Path

import simcore
from Cython.Build import cythonize
from setuptools import Extension, setup

CHOCOSIM = str(Path(simcore.__file__).resolve().parent.parent)
CHECKED = os.environ.get("CHOCOSIM_CHECKED", "") not in ("", "0")

setup(ext_modules=cythonize(
    [Extension("$name.rules", ["$name/rules.pyx"],
               define_macros=[("CHOCOSIM_CHECKED", "1")] if CHECKED else [],
               extra_compile_args=["-O1", "-g"] if CHECKED else ["-O3"])],
    include_path=[CHOCOSIM],
    compiler_directives={"language_level": 3, "boundscheck": CHECKED, "wraparound": CHECKED,
                         "cdivision": True},
))
''')

INIT = Template('''\
"""$title: a compiled chocosim game (rules in rules.pyx, params in params.py, their
defaults with sources in data/rules.toml)."""
from $name.rules import ${cls}

# The game: its state class, which declares its metadata (simcore.meta).
GAME = ${cls}
''')

PARAMS = Template('''\
"""The params of $title; their defaults, sources and meanings are in data/rules.toml."""
from typing import ClassVar, Literal

from pydantic import Field

from simcore import params
from simcore.params import Params as _Params


class Compensation(params.Compensation):
    max_positions: ClassVar[int] = 2


class Params(_Params):
    players: Literal[2]
    win_points: int = Field(ge=1, le=100)
    compensation: Compensation
''')

RULES_TOML = '''\
# Every number of the rules: source = "rulebook" for what the printed rules state,
# "assumed" for what they leave open.

[players]
value = 2
source = "rulebook"
doc = "Players at the table"

[win_points]
value = 1
source = "assumed"
doc = "Points for three in a row (the loser scores 0, a draw 0 each)"

[compensation.points]
value = []
source = "assumed"
doc = "House rule, not in the rulebook (komi, as in Go): points added at the end to the final score of the seat at each turn position (entry 0: the seat that acts first); a missing entry is 0"
'''

PXD = Template('''\
# $title: the C state. The contract it implements is chocosim's simcore/state.pxd.
cimport cython
from simcore.state cimport GameState

cdef enum:
    N_CELLS = 9
    N_LINES = 8


cdef struct Board:
    signed char cell[N_CELLS]  # seat owning each cell, -1 empty
    int to_move                # seat to act next
    int winner                 # seat with three in a row, -1 none yet
    int marks                  # cells marked
    int legal[N_CELLS]         # the current decision's legal list (GameState.kept_legal)
    int n_legal


@cython.final
cdef class ${cls}(GameState):
    cdef Board b
    cdef int win_points
    cdef int komi[2]
''')

PYX = Template('''\
# cython: language_level=3
"""$title: the rules engine. Replace the tic-tac-toe below with your game's rules; keep
every method of the contract (simcore/state.pxd). Cells are 0-8 row by row; an action
is the cell to mark. The legal list is the empty cells in ascending order, as in
examples/tictactoe (Python), so both give the same games from the same seeds."""
cimport cython
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng
from simcore.state cimport GameState
from simcore.strategy cimport Lineup

from pathlib import Path

from $name.params import Params

cdef int[24] LINES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 6, 1, 4, 7, 2, 5, 8, 0, 4, 8, 2, 4, 6]

# The batch loop compiled for this class: direct calls the C compiler inlines.
ctypedef fused Game:
    ${cls}
include "simcore/loop.pxi"


@cython.final
cdef class ${cls}(GameState):
    # What the game declares about itself, as a PyGame does (simcore.meta).
    NAME = "$name"
    TITLE = "$title"
    PLAYERS = (2, 2)
    PARAMS = Params
    DEFAULTS = Path(__file__).parent / "data" / "rules.toml"
    END_REASONS = ("line", "full board")
    FEATURES = ("centre", "corners")
    INVARIANTS = ("the marks counted are the cells marked",)

    def __init__(self, params):
        self.params = params
        self.n_players = 2
        self.n_features = 2
        self.n_interim = 0
        self.narrow_features = True  # 0/1 and 0-4: int8 results
        self.win_points = params.win_points
        for k, v in enumerate(params.compensation.by_position(2)):
            self.komi[k] = v
        self.kept_legal = self.b.legal
        self.kept_n_legal = &self.b.n_legal
        self.reset(0)

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return play_games(self, <Lineup>lineup, job)

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    cdef void reset(self, uint64_t seed) noexcept nogil:
        # Tic-tac-toe has no chance. A game that deals keeps an Rng in its state and
        # seeds it here (rng_seed(&self.rng, seed)): its only source of chance.
        cdef int c
        for c in range(N_CELLS):
            self.b.cell[c] = -1
            self.b.legal[c] = c
        self.b.to_move = 0
        self.b.winner = -1
        self.b.marks = 0
        self.b.n_legal = N_CELLS

    cdef int current_player(self) noexcept nogil:
        if self.b.winner >= 0 or self.b.marks == N_CELLS:
            return -1
        return self.b.to_move

    cdef int legal_actions(self, int* out) noexcept nogil:
        memcpy(out, self.b.legal, self.b.n_legal * sizeof(int))
        return self.b.n_legal

    cdef int apply(self, int action) except -2 nogil:
        cdef int i, k = 0, s = self.b.to_move
        self.b.cell[action] = s
        self.b.marks += 1
        for i in range(N_LINES):
            if self.b.cell[LINES[3 * i]] == s and self.b.cell[LINES[3 * i + 1]] == s \\
                    and self.b.cell[LINES[3 * i + 2]] == s:
                self.b.winner = s
        for i in range(N_CELLS):
            if self.b.cell[i] < 0:
                self.b.legal[k] = i
                k += 1
        self.b.n_legal = k if self.b.winner < 0 else 0
        self.b.to_move = 1 - s
        return self.current_player()

    cdef int end_reason(self) noexcept nogil:
        return 0 if self.b.winner >= 0 else 1

    cdef int standing(self, int seat) noexcept nogil:
        return self.win_points if seat == self.b.winner else 0

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        cdef int p
        for p in range(2):
            scores[p] = self.standing(p) + self.komi[self.turn_position(p)]
        for p in range(2):
            ranks[p] = 1 + (scores[1 - p] > scores[p])

    cdef void features(self, int seat, int* out) noexcept nogil:
        out[0] = self.b.cell[4] == seat
        out[1] = ((self.b.cell[0] == seat) + (self.b.cell[2] == seat) + (self.b.cell[6] == seat)
                  + (self.b.cell[8] == seat))

    cdef void copy_into(self, GameState other) noexcept nogil:
        (<${cls}>other).b = self.b

    cdef int validate(self) noexcept nogil:
        cdef int c, n = 0
        for c in range(N_CELLS):
            n += self.b.cell[c] >= 0
        return 0 if n == self.b.marks else 1

    # ---- Python API: traces, Python bots ----

    def observation(self, int seat):
        return {"board": [self.b.cell[c] for c in range(N_CELLS)], "to_move": self.b.to_move, "you": seat}

    def describe(self, int action):
        return f"mark row {action // 3 + 1}, column {action % 3 + 1}"

    def to_dict(self):
        return self.observation(0)

    def render(self):
        marks = {-1: ".", 0: "X", 1: "O"}
        return "\\n".join("".join(marks[self.b.cell[3 * r + c]] for c in range(3)) for r in range(3))
''')

TEST = Template('''\
"""$title: the conformance suite and a hand-built position."""
from simcore.conformance import check_game
from simcore.registry import spec_of

from $name import GAME


def test_conforms():
    check_game(GAME, games=50)


def test_three_in_a_row_wins():
    spec = spec_of(GAME)
    state = spec.new_state(spec.params(players=2))
    state.new_game(0)
    for cell in (0, 3, 1, 4, 2):  # X takes the top row; O two cells of the middle one
        state.apply(cell)
    assert state.is_terminal() and state.end_reason() == "line"
    assert (state.scores(), state.ranks()) == ([1, 0], [1, 2])
''')

README = Template('''\
# $title

A compiled chocosim game, made by `chocosim new-game $name`. It starts as tic-tac-toe:
replace the rules in `$name/rules.pyx` (the C state in `$name/rules.pxd`), the params in
`$name/params.py` and their defaults, each with its source (`rulebook` or `assumed`), in
`$name/data/rules.toml`.

Build and register (the build reads chocosim's contract from the installed chocosim, so
it runs without build isolation and needs Cython in the same environment):

    pip install "Cython>=3.0.10" "setuptools>=77"
    pip install --no-build-isolation -e .
    chocosim games                # lists $name, from its entry point
    python -m pytest tests        # the conformance suite and a hand-built position

After a change to the rules, rebuild this one module (seconds):

    python setup.py build_ext --inplace

Rebuild it after upgrading chocosim too: the module is compiled against the engine's
contract (its `.pxd` files), and a contract that gained a method since no longer
matches a module built before it.

Then every command works on it: `chocosim run $name --seats random,greedy ...`,
`balance`, `compare`, `sweep`, `tune`, `play`.
''')


PY_PYPROJECT = Template('''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$name"
version = "0.1.0"
description = "$title for chocosim (plain Python)"
requires-python = ">=3.11"
dependencies = ["chocosim"]

# The registration: `chocosim games` lists the game, every command takes "$name".
[project.entry-points."chocosim.games"]
$name = "$name.game:$cls"

[tool.setuptools]
packages = ["$name"]
''')

PY_INIT = Template('''\
"""$title: a chocosim game in plain Python (the rules and their params in game.py)."""
''')

PY_GAME = Template('''\
"""$title as a chocosim game. It starts as tic-tac-toe (cells 0-8 row by row; an action
is the cell to mark): replace the params and each method with your rules. The protocol
and every optional method are in the guide ("Your own game")."""
from __future__ import annotations

from simcore.pygame import GameParams, PyGame, param
from simcore.strategy import PythonStrategy

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class LineBot(PythonStrategy):
    """A bot declared with the game: completes its own line, else blocks the other's,
    else plays at random. It sees only its seat's observation."""

    NAME = "linebot"
    DESCRIPTION = "wins if it can, blocks if it must"

    def decide(self, observation, legal, rng):
        board, me = observation["board"], observation["you"]
        for who in (me, 1 - me):  # first a win, then a block
            for line in LINES:
                marks = [board[c] for c in line]
                if marks.count(who) == 2 and marks.count(-1) == 1:
                    return line[marks.index(-1)]
        return rng.choice(legal)


class ${cls}Params(GameParams):
    # Every number a designer might change is a param, with where its default comes
    # from: "rulebook" or "assumed" (the rules leave it open).
    players: int = param(2, "rulebook", "Players at the table", ge=2, le=2)
    win_points: int = param(1, "assumed", "Points for three in a row (the loser scores 0, a draw 0 each)",
                            ge=1, le=100)


class $cls(PyGame):
    NAME = "$name"
    TITLE = "$title"
    PLAYERS = (2, 2)
    PARAMS = ${cls}Params
    END_REASONS = ("line", "full board")
    BOTS = (LineBot,)

    def setup(self) -> None:
        # Chance, if the game has any, only from self.chance (below, uniform, choice, shuffle).
        self.board = [-1] * 9  # seat owning each cell, -1 empty
        self.to_move = 0
        self.winner = -1

    def current_player(self) -> int:
        return -1 if self.winner >= 0 or -1 not in self.board else self.to_move

    def legal_actions(self) -> list[int]:
        return [c for c in range(9) if self.board[c] < 0]

    def apply(self, action: int) -> None:
        self.board[action] = self.to_move
        if any(all(self.board[c] == self.to_move for c in line) for line in LINES if action in line):
            self.winner = self.to_move
        self.to_move = 1 - self.to_move

    def scores(self) -> list[int]:
        return [self.params.win_points if s == self.winner else 0 for s in range(2)]

    def standing(self, seat: int) -> int:
        return self.params.win_points if seat == self.winner else 0

    def end_reason(self) -> str:
        return "line" if self.winner >= 0 else "full board"

    def observation(self, seat: int) -> dict:
        return {"board": list(self.board), "to_move": self.to_move, "you": seat}

    def describe(self, action: int) -> str:
        return f"mark row {action // 3 + 1}, column {action % 3 + 1}"

    def render(self) -> str:
        marks = {-1: ".", 0: "X", 1: "O"}
        return "\\n".join("".join(marks[self.board[3 * r + c]] for c in range(3)) for r in range(3))
''')

PY_TEST = Template('''\
"""$title: the conformance suite and a hand-built position."""
from simcore.conformance import check_game

from $name.game import $cls


def test_conforms():
    check_game($cls, games=50)


def test_three_in_a_row_wins():
    game = $cls($cls.PARAMS(), seed=0)
    for cell in (0, 3, 1, 4, 2):  # X takes the top row; O two cells of the middle one
        game.apply(cell)
    assert game.is_terminal() and game.end_reason() == "line"
    assert (game.scores(), game.ranks()) == ([1, 0], [1, 2])
''')

PY_README = Template('''\
# $title

A chocosim game in plain Python, made by `chocosim new-game $name --python`. It starts
as tic-tac-toe: replace the params and the rules in `$name/game.py`, and its bot.

    pip install -e .              # registers it: `chocosim games` lists $name
    python -m pytest tests        # the conformance suite and a hand-built position
    chocosim play $name --seats linebot,random

Then every command works on it: `chocosim run $name --seats random,linebot ...`,
`balance`, `compare`, `sweep`, `tune`, `play`. Without installing, name it by its
class: `chocosim play $name.game:$cls --seats linebot,random` from this directory.
''')


def _shadowed(name: str) -> str | None:
    """What a package called `name` would shadow, or hide behind: a game registered under
    that name, or a module this Python imports by it (simcore, json, polars)."""
    from simcore.registry import games

    if name in games():
        return f"the registered game {name!r}"
    if name in sys.builtin_module_names or name in sys.stdlib_module_names:
        return f"Python's own module {name!r}"
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a broken package of that name is still in the way
        found = True
    return None if found is None else f"the installed module {name!r}"


def write_skeleton(name: str, out: Path | str) -> list[Path]:
    """Write the package of a compiled game called `name` into `out` (a new or empty
    directory); return the files written. UserError for a bad name (one a registered game
    or an importable module has already) or a used directory, and for a write that fails
    (a full disk, a name too long for the file system), which leaves nothing behind: the
    skeleton is written into a temporary directory beside `out` and moved into place."""
    return _write(name, out, lambda values: {
        "pyproject.toml": PYPROJECT.substitute(values),
        "setup.py": SETUP.substitute(values),
        "README.md": README.substitute(values),
        f"{name}/__init__.py": INIT.substitute(values),
        f"{name}/params.py": PARAMS.substitute(values),
        f"{name}/data/rules.toml": RULES_TOML,
        f"{name}/rules.pxd": PXD.substitute(values),
        f"{name}/rules.pyx": PYX.substitute(values),
        f"tests/test_{name}.py": TEST.substitute(values),
    }, "State")


def write_python_starter(name: str, out: Path | str) -> list[Path]:
    """Write the package of a plain-Python game called `name` into `out`, as
    write_skeleton writes a compiled one (the same refusals, whole or not at all)."""
    return _write(name, out, lambda values: {
        "pyproject.toml": PY_PYPROJECT.substitute(values),
        "README.md": PY_README.substitute(values),
        f"{name}/__init__.py": PY_INIT.substitute(values),
        f"{name}/game.py": PY_GAME.substitute(values),
        f"tests/test_{name}.py": PY_TEST.substitute(values),
    }, "")


def _write(name: str, out: Path | str, contents, suffix: str) -> list[Path]:
    """The files `contents(values)` of a game called `name` written into `out`; its
    class is the name in CamelCase plus `suffix`."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise UserError(f"game name {name!r}: use lower-case letters, digits and _, starting with a letter "
                        "(it becomes the package's name)")
    shadowed = _shadowed(name)
    if shadowed is not None:
        raise UserError(f"game name {name!r} is taken by {shadowed}: the package would shadow it; "
                        "choose another name")
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} exists and is not an empty directory; choose another one")
    cls = "".join(part.capitalize() for part in name.split("_")) + suffix
    title = name.replace("_", " ").capitalize()
    files = contents({"name": name, "cls": cls, "title": title})
    made = [d for d in (out.absolute(), *out.absolute().parents) if not d.exists()][1:]  # parents to make
    tmp = None  # made beside `out`: the move into place is a rename on one file system
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.parent / f".{out.name[:100]}.{os.getpid()}.tmp"
        tmp.mkdir()
        for rel, text in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        os.replace(tmp, out)  # onto an empty directory too
    except OSError as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        for d in made:  # innermost first
            with contextlib.suppress(OSError):
                d.rmdir()
        where = f" ({Path(e.filename).name})" if e.filename else ""
        raise UserError(f"cannot write the skeleton to {out}: {e.strerror or e}{where}; nothing was "
                        "written") from None
    return [out / rel for rel in files]
