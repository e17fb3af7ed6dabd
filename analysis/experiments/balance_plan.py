"""The plan of a balance experiment (analysis.experiments.balance): the skill ladder at each
table size, its cells (mirror matches, meetings of adjacent rungs, the compensation
runs) and their run directories, and how many games each finding needs."""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import strategies
from analysis.experiments.skill import BUDGET, search_budget, with_arg
from simcore.errors import UserError
from simcore.params import Params, flatten
from simcore.registry import GameSpec, get_game

__all__ = ["SEARCH", "BUDGET", "TUNED", "DEFAULT_MARGIN", "COMPENSATION", "NEEDS", "Needs", "Withheld", "Cell", "Plan",
           "plan", "default_ladder", "same_value"]

SEARCH = "mcts"  # the search bot: the top rungs, at its default budget and doublings of it
TUNED = "heuristic(weights=tuned)"
BASE_RUNGS = ("random", "greedy", "heuristic")
COMPENSATION = "compensation.points"  # every game's score bonus by turn position
DEFAULT_MARGIN = 1.0  # points: "converged" when the top two rungs agree within it


@dataclass(frozen=True)
class Needs:
    """The smallest sample behind each kind of statement the balance verdict makes. Below
    it the verdict withholds the statement and says "too few games (N; about M needed)":
    no advantage, no "balanced", no "converged" or "moves", no fair point, no bonus and
    no effect size. The intervals behind the statements are asymptotic (Wilson, normal
    paired differences) or bootstraps over games, which a handful of games cannot
    support: a bootstrap of 20 games has few distinct resamples, and a paired change
    whose games all agree has a zero-width normal interval whatever its sample."""

    rate: int = 30  # games of a mirror: its position rates called an advantage, or balanced
    agreement: int = 50  # paired games of the top two rungs: converged, moves, the agreement reached
    fair_point: int = 100  # paired games at every value of a knob: its fair point, or that no value crosses
    bonus: int = 100  # games of the strongest mirror (a bonus estimated) and of the paired run confirming it
    reversal: int = 100  # games of a rung's mirror for its findings to count as changing with skill


NEEDS = Needs()


@dataclass(frozen=True)
class Withheld:
    """A statement the verdict does not make: too few games for it."""

    kind: str  # a field of Needs
    what: str  # what it would have said, e.g. "whether turn order matters"
    games: int
    needed: int

Kind = Literal["mirror", "meeting", "komi", "knob"]


# ---- the plan ----

def default_ladder(game: str, players: int, *, search: str | None = SEARCH, doublings: int = 1,
                   lowest: str | None = None) -> tuple[list[str], list[str]]:
    """The rungs at one table size, weakest first, and notes on the rungs left out: the
    game's random, greedy and heuristic bots, the bots the game declares itself (a
    Python game's BOTS), the shipped tuned heuristic where its weights were validated at
    this size, and the search bot at its budget and `doublings` doublings of it.
    `lowest` drops the rungs below it."""
    bots = strategies.available(game)
    rungs = [r for r in BASE_RUNGS if r in bots]
    rungs += [b.NAME for b in get_game(game).bots if b.NAME not in rungs]
    notes = []
    if "heuristic" in bots and "tuned" in strategies.bundled_weights(game, "heuristic"):
        if players in (strategies.validated_players(game, TUNED) or ()):
            rungs.append(TUNED)
        else:
            notes.append(f"{TUNED} is left out at {players} players: its weights were not "
                         "validated at this table size")
    if search is not None:
        if strategies.parse_spec(search)[0] not in bots and ":" not in search:
            raise UserError(f"--search {search!r}: {game} has no such bot; available: {', '.join(bots)}")
        b = search_budget(game, search, players, "--search")
        rungs += [with_arg(search, BUDGET, b * 2**k) for k in range(doublings + 1)]
    if lowest is not None:
        if lowest not in rungs:
            raise UserError(f"--lowest {lowest!r} is not a rung of the ladder ({', '.join(rungs)})")
        rungs = rungs[rungs.index(lowest):]
    return rungs, notes


def _check_rung(game: str, spec: str, players: int) -> None:
    try:
        strategies.build(game, spec)
    except UserError as e:
        raise UserError(f"ladder rung {spec!r}: {e}") from None
    valid = strategies.validated_players(game, spec)
    if valid is not None and players not in valid:
        where = ", ".join(map(str, valid)) or "no table size"
        raise UserError(f"ladder rung {spec!r}: its weights were validated at {where} players, "
                        f"not {players}; a balance verdict needs bots known to play well there")


@dataclass(frozen=True)
class Cell:
    """One run directory of the experiment."""

    players: int
    kind: Kind
    specs: tuple[str, ...]
    label: str  # the rung (mirror), "a vs b" (meeting), the bonus or knob value
    path: Path
    seating: str
    sets: tuple[tuple[str, Any], ...] = ()  # param overrides on top of the plan's
    tier: int = 2

    @property
    def unit(self) -> int:
        """Games come in multiples of this (whole seat rotations where seats rotate)."""
        return math.factorial(self.players) if self.seating == "rotate" else 1


@dataclass(frozen=True)
class Plan:
    game: GameSpec
    sizes: list[int]
    ladders: dict[int, list[str]]  # per table size, weakest first
    notes: dict[int, list[str]]
    sets: dict[str, Any]
    rules: Path | None
    seed: int
    runs_dir: Path
    cap: int  # games per cell at most
    precision: float  # points: a cell is done when its widest interval is within it
    margin: float  # points: the convergence margin
    minutes: float | None  # time budget (None: every cell plays to precision or cap)
    compensation: bool  # estimate and confirm the komi, sweep the game's knobs

    def params(self, players: int, extra: Sequence[tuple[str, Any]] = ()) -> Params:
        return self.game.params(self.rules, {**self.sets, **dict(extra)}, players=players)

    def _dir(self, players: int, name: str, extra: Sequence[tuple[str, Any]] = ()) -> Path:
        """runs/<game>/balance/<n>p/<name>; a hash of the params and seed joins the name
        when they are not the defaults, so a house rule or another seed is a new run. The
        name's slug stands alone only when it says the name unambiguously (specs written
        name(key=value, key=value)); any other spelling ("heuristic()", spaces, a path
        as a value) adds a hash of the name, so two spec strings never share a run
        directory: the runner, which tells runs apart by their spec strings, would
        refuse the second."""
        slug = re.sub(r"[^\w.=-]+", "_", name).strip("_")
        params = self.params(players, extra)
        readable = _READABLE.fullmatch(name) is not None
        if params != self.game.params(players=players) or self.seed != 0 or len(slug) > 100 or not readable:
            key = [params.model_dump(mode="json"), self.seed]
            text = json.dumps(key if readable else [name, *key])
            slug = f"{slug[:100]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
        return self.runs_dir / self.game.name / "balance" / f"{players}p" / slug

    def mirror(self, players: int, rung: str) -> Cell:
        rungs = self.ladders[players]
        tier = 0 if rung in rungs[-2:] else 2
        return Cell(players, "mirror", (rung,) * players, rung, self._dir(players, rung),
                    "fixed", (), tier)

    def meetings(self, players: int) -> list[Cell]:
        """Adjacent rungs head to head, seats alternating (both ways round at odd sizes);
        seats rotate up to three players and are drawn at random beyond (players! games
        a rotation would be too many for a slow bot)."""
        rungs = self.ladders[players]
        seating = "rotate" if players <= 3 else "random"
        out = []
        for k, (a, b) in enumerate(zip(rungs, rungs[1:])):
            tables = [[a if s % 2 == 0 else b for s in range(players)]]
            if players % 2:
                tables.append([b if s % 2 == 0 else a for s in range(players)])
            tier = 1 if k >= len(rungs) - 3 else 3
            for t in tables:
                out.append(Cell(players, "meeting", tuple(t), f"{b} vs {a}",
                                self._dir(players, "-vs-".join(t)), seating, (), tier))
        return out

    def ladder_cells(self) -> list[Cell]:
        return [c for n in self.sizes
                for c in [*(self.mirror(n, r) for r in self.ladders[n]), *self.meetings(n)]]

    def komi_cell(self, players: int, rung: str, points: Sequence[int]) -> Cell:
        sets = ((COMPENSATION, list(points)),)
        label = f"{COMPENSATION}={list(points)}"
        return Cell(players, "komi", (rung,) * players, label,
                    self._dir(players, f"{rung}-komi-{'_'.join(map(str, points))}", sets), "fixed", sets, 0)

    def knob_cells(self, players: int, rung: str) -> list[Cell]:
        out = []
        for name, values in self.game.position_knobs.items():
            for v in values:
                if same_value(self.params(players), name, v):
                    continue  # the rulebook value: the rung's own mirror
                sets = ((name, v),)
                out.append(Cell(players, "knob", (rung,) * players, f"{name}={v}",
                                self._dir(players, f"{rung}-{name}={v}", sets), "fixed", sets, 1))
        return out


# Names whose slug is unambiguous: word characters, ".", "=", "-", and specs' arguments
# in their canonical form (key=value, comma and one space between them).
_READABLE = re.compile(r"(?:[\w.=-]+|\([\w.-]+=[\w.-]+(?:, [\w.-]+=[\w.-]+)*\))+")


def same_value(params: Params, name: str, value: Any) -> bool:
    return flatten(params.model_dump(mode="json")).get(name) == value


def plan(game: str, runs_dir: Path | str = "runs", *, players: Sequence[int] | None = None,
         ladder: Sequence[str] | None = None, search: str | None = SEARCH, doublings: int = 1,
         lowest: str | None = None, games: int = 1_000_000, precision: float = 0.5,
         minutes: float | None = None, margin: float = DEFAULT_MARGIN, compensation: bool = True,
         sets: dict[str, Any] | None = None, rules: Path | str | None = None, seed: int = 0) -> Plan:
    """Check every input and lay out the cells; nothing is played or written."""
    spec = get_game(game)
    rules = Path(rules) if rules is not None else None
    sets = dict(sets or {})
    if games < 1:
        raise UserError(f"games = {games}: must be at least 1")
    for name, value, ok in (("precision", precision, precision > 0), ("margin", margin, margin > 0),
                            ("minutes", minutes, minutes is None or minutes > 0)):
        if not (ok and (value is None or math.isfinite(value))):
            raise UserError(f"{name} = {value}: must be a positive, finite number")
    if doublings < 0:
        raise UserError(f"doublings = {doublings}: must be 0 or more")
    lo, hi = spec.players
    sizes = sorted(set(players)) if players else list(range(max(lo, 2), hi + 1))
    if bad := [n for n in sizes if not (lo <= n <= hi) or n < 2]:
        allowed = f"{max(lo, 2)}" if max(lo, 2) == hi else f"{max(lo, 2)} to {hi}"
        raise UserError(f"players = {bad[0]}: turn-position balance needs two seats or more; "
                        f"{game} allows {allowed}")
    if "players" in sets:
        raise UserError("--set players=...: choose table sizes with --players")
    ladders, notes = {}, {}
    for n in sizes:
        spec.params(rules, sets, players=n)  # the house rule is valid at every size
        if ladder is not None:
            rungs, notes[n] = list(ladder), []
            if lowest is not None:
                raise UserError("--lowest drops rungs of the default ladder; with --ladder, list only the rungs to play")
        else:
            rungs, notes[n] = default_ladder(game, n, search=search, doublings=doublings, lowest=lowest)
        if len(set(rungs)) != len(rungs):
            raise UserError(f"ladder = {','.join(rungs)!r}: a rung is listed twice")
        if not rungs:
            raise UserError("ladder: allowed is one or more strategy specs, weakest first")
        for r in rungs:
            _check_rung(game, r, n)
        ladders[n] = rungs
    if compensation:
        for n in sizes:
            spec.params(rules, {**sets, COMPENSATION: [0] * n}, players=n)
    return Plan(spec, sizes, ladders, notes, sets, rules, seed, Path(runs_dir), games, precision,
                margin, minutes, compensation)
